// Test-only doubles of the services' clock and logger.
import type { Clock } from "../../infra/clock.ts";
import { createLogger, type Logger } from "../../infra/log.ts";

/** A clock that stands still until moved. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | string = "2026-01-01T00:00:00Z") {
    this.#ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
  set(at: Date | string): void {
    this.#ms = new Date(at).getTime();
  }
}

/** A logger that writes nothing (errors included), for servers whose log the test does not read. */
export const silentLogger: Logger = createLogger("error", () => {});
