// Link-host hits: GET /<path> as a desktop browser, answered by a 302 to the link's desktop
// redirect, each recording one view behind the response (docs/link-host.md). A hit is never
// sent again after a connection error: it may have been counted, so it is tallied as unclear.
import { ConnectionFailed } from "./cluster.ts";
import { sleep, type SoakContext } from "./context.ts";

export interface LinkHitLog {
  /** link path → hits answered 302. */
  redirects: Map<string, number>;
  /** link path → hits whose answer was lost (counted or not). */
  unclear: Map<string, number>;
  /** Every 302: when it was received and which instance answered (for the loss bound). */
  answered: { at: number; instance: number }[];
  /** 503s (the database was away: no redirect, no view). */
  unavailable: number;
  /** Answers other than 302 and 503 (status → count): none is expected. */
  other: Map<number, number>;
}

export function newLinkHitLog(): LinkHitLog {
  return {
    redirects: new Map(),
    unclear: new Map(),
    answered: [],
    unavailable: 0,
    other: new Map(),
  };
}

// Not a link-preview crawler's name: counted as a person on desktop.
const USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) soak/1.0";

export async function runLinkHits(
  ctx: SoakContext,
  pauseMs: number,
  stop: AbortSignal,
  log: LinkHitLog,
): Promise<void> {
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  while (!stop.aborted) {
    const path = ctx.links[Math.floor(Math.random() * ctx.links.length)]!;
    try {
      const answer = await ctx.cluster.request("link host", `/${path}`, {
        headers: { "User-Agent": USER_AGENT },
      }, { attempts: 1 });
      if (answer.status === 302) {
        add(log.redirects, path);
        log.answered.push({ at: Date.now(), instance: answer.instance });
      } else if (answer.status === 503) {
        log.unavailable++;
      } else {
        log.other.set(answer.status, (log.other.get(answer.status) ?? 0) + 1);
      }
    } catch (err) {
      if (!(err instanceof ConnectionFailed)) throw err;
      add(log.unclear, path);
    }
    await sleep(pauseMs, stop);
  }
}
