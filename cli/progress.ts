// Progress of a long command on stderr: rows and bytes so far, and on a terminal a bar redrawn
// in place; elsewhere (a log, CI) one line every few seconds.

const BAR_WIDTH = 30;
const TERMINAL_EVERY_MS = 100;
const LOG_EVERY_MS = 5_000;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

const grouped = new Intl.NumberFormat("en-US");

export class Progress {
  #last = 0;
  #drawn = false;
  readonly #terminal: boolean;
  readonly #encoder = new TextEncoder();

  constructor(
    readonly label: string,
    /** Rows expected in all; the bar needs it. */
    public totalRows: number | null = null,
    readonly out: { writeSync(b: Uint8Array): number; isTerminal(): boolean } = Deno.stderr,
  ) {
    this.#terminal = out.isTerminal();
  }

  /** Rows done and bytes written or read so far; drawn when it is time. */
  update(rows: number, bytes: number, force = false): void {
    const now = performance.now();
    const every = this.#terminal ? TERMINAL_EVERY_MS : LOG_EVERY_MS;
    if (!force && now - this.#last < every) return;
    this.#last = now;
    const total = this.totalRows;
    const counted = total === null
      ? `${grouped.format(rows)} rows`
      : `${grouped.format(rows)} of ${grouped.format(total)} rows`;
    const text = `${this.label}: ${counted}, ${formatBytes(bytes)}`;
    if (this.#terminal) {
      const share = total ? Math.min(1, rows / total) : 0;
      const filled = Math.round(share * BAR_WIDTH);
      const bar = total === null
        ? ""
        : `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${
          Math.floor(share * 100).toString().padStart(3)
        }% `;
      this.#write(`\r\x1b[2K${bar}${text}`);
      this.#drawn = true;
    } else {
      this.#write(`${text}\n`);
    }
  }

  /** Ends the bar's line (on a terminal) so that what follows starts on a line of its own. */
  done(rows: number, bytes: number): void {
    this.update(rows, bytes, true);
    if (this.#drawn) this.#write("\n");
    this.#drawn = false;
  }

  #write(s: string): void {
    this.out.writeSync(this.#encoder.encode(s));
  }
}
