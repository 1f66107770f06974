// deno task feed -- --url http://… --project-id 1 [--types install,purchase] [--follow] …
// Reads the event feed with the client library and writes each event as one JSON line to
// stdout; progress goes to stderr. The token comes from FEED_TOKEN only, never a flag.
import { parseArgs } from "node:util";
import {
  backoffDelay,
  cursorKey,
  type CursorStore,
  FeedError,
  type FeedProgress,
  FeedReader,
  FileCursorStore,
} from "../client/mod.ts";
import { abortableSleep } from "../client/backoff.ts";
import { openLiveStream } from "../client/live.ts";
import { RecentIds } from "../client/recent_ids.ts";

const USAGE = `Usage: deno task feed -- --url URL --project-id ID [options]

Reads a project's event feed and writes one event per line (NDJSON) to stdout.
The feed token is read from the FEED_TOKEN environment variable.

  --url URL              origin of the feed API, e.g. http://localhost:8000
  --project-id ID        numeric project_id the token was created for
  --types a,b            event types to read (default: all); a new set starts a new cursor
  --cursor-file PATH     where the cursor is kept (default: ./feed.cursor)
  --integration NAME     cursor name, one per consumer (default: cli)
  --limit N              page size, 1 to 1000 (default: 1000)
  --follow               keep polling once caught up (default: stop when caught up)
  --live                 follow the live stream (Server-Sent Events) instead of polling;
                         same cursor file, reconnects with backoff when the stream drops
  --poll-interval MS     wait after an empty page when following (default: 1000)
  --reset-cursor         forget the saved cursor (keeping recent ids) and reread retained events
  --help                 this text

Ctrl-C stops after the page (with --live: the event) in progress, with the cursor saved.`;

const encoder = new TextEncoder();

function printErr(line: string): void {
  Deno.stderr.writeSync(encoder.encode(line + "\n"));
}

function usageError(message: string): never {
  printErr(`feed: ${message}\n\n${USAGE}`);
  Deno.exit(2);
}

async function writeAll(bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    written += await Deno.stdout.write(bytes.subarray(written));
  }
}

function parse(argv: string[]) {
  // `deno task feed -- …` hands the literal `--` on to the script.
  const args = argv[0] === "--" ? argv.slice(1) : argv;
  try {
    return parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: "string" },
        "project-id": { type: "string" },
        types: { type: "string" },
        "cursor-file": { type: "string", default: "./feed.cursor" },
        integration: { type: "string", default: "cli" },
        limit: { type: "string", default: "1000" },
        follow: { type: "boolean", default: false },
        live: { type: "boolean", default: false },
        "poll-interval": { type: "string", default: "1000" },
        "reset-cursor": { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }).values;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/token/i.test(message) || argv.some((a) => a.startsWith("est_"))) {
      usageError("the token is read from the FEED_TOKEN environment variable only, never a flag");
    }
    const code = (err as { code?: string }).code;
    // Option names are ours and safe to print (parseArgs leaves out an `=value`), and so is its
    // wording about an option's value; a stray positional argument is a value, which may be a
    // secret: never echo it.
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      const name = /'(-[^'=\s]*)'/.exec(message)?.[1];
      usageError(name ? `unknown option ${name}` : "unknown option");
    }
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
      usageError(message.replace(/'([^']*)'/g, "$1"));
    }
    usageError("unexpected argument: every value follows its option, as in --url URL");
  }
}

function wholeNumber(name: string, raw: string, min: number, max: number): number {
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    usageError(`--${name} must be a whole number from ${min} to ${max}`);
  }
  return n;
}

function formatLag(ms: number | null): string {
  if (ms === null) return "-";
  if (ms < 1000) return `${ms}ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)}m`;
  return `${(ms / 3_600_000).toFixed(1)}h`;
}

function progressLine(p: FeedProgress): string {
  const s = p.stats;
  return `feed: ${s.events} events, ${s.pages} pages, ${s.duplicates} duplicates, ` +
    `${s.retries} retries, lag ${formatLag(s.lagMs)}${s.caughtUp ? " (caught up)" : ""}`;
}

async function main(): Promise<number> {
  const opts = parse(Deno.args);
  if (opts.help) {
    printErr(USAGE);
    return 0;
  }
  if (!opts.url) usageError("--url is required");
  if (!opts["project-id"]) usageError("--project-id is required");
  const token = Deno.env.get("FEED_TOKEN");
  if (!token) usageError("set FEED_TOKEN to the feed token (est_…)");

  const controller = new AbortController();
  let interrupts = 0;
  Deno.addSignalListener("SIGINT", () => {
    if (++interrupts > 1) Deno.exit(130);
    printErr(
      `feed: stopping after the current ${
        opts.live ? "event" : "page"
      } (Ctrl-C again to quit at once)`,
    );
    controller.abort();
  });

  if (opts.live) {
    if (opts.follow) usageError("--live already follows the feed: use one of --live and --follow");
    return await runLive({
      baseUrl: opts.url,
      projectId: opts["project-id"],
      token,
      integration: opts.integration,
      eventTypes: opts.types ? opts.types.split(",") : [],
      store: new FileCursorStore(opts["cursor-file"]),
      resetCursor: opts["reset-cursor"],
      signal: controller.signal,
    });
  }

  let lastReport = 0;
  let stdoutBroken = false;
  const reader = new FeedReader({
    baseUrl: opts.url,
    projectId: opts["project-id"],
    token,
    integration: opts.integration,
    eventTypes: opts.types ? opts.types.split(",") : [],
    limit: wholeNumber("limit", opts.limit, 1, 1000),
    store: new FileCursorStore(opts["cursor-file"]),
    follow: opts.follow,
    pollIntervalMs: wholeNumber("poll-interval", opts["poll-interval"], 0, 3_600_000),
    signal: controller.signal,
    onProgress: (p) => {
      if (p.kind === "retry") {
        printErr(
          `feed: retry ${p.attempt} in ${p.delayMs}ms (${p.reason}); total retries ${p.stats.retries}`,
        );
      } else if (p.kind === "page" && Date.now() - lastReport >= 1000) {
        lastReport = Date.now();
        printErr(progressLine(p));
      }
    },
  });
  if (opts["reset-cursor"]) await reader.resetCursor();

  try {
    const result = await reader.run(async (events) => {
      let out = "";
      for (const event of events) out += JSON.stringify(event) + "\n";
      try {
        await writeAll(encoder.encode(out));
      } catch (err) {
        // Nobody reads stdout any more: stop without saving the page.
        stdoutBroken = true;
        controller.abort();
        throw err;
      }
    });
    if (stdoutBroken) {
      printErr("feed: stdout closed; the cursor stays before the unwritten page");
      return 1;
    }
    printErr(
      progressLine({ kind: "page", stats: result.stats, received: 0, delivered: 0 }) +
        (result.reason === "aborted" ? ", stopped; cursor saved" : ", done"),
    );
    return 0;
  } catch (err) {
    if (err instanceof FeedError) {
      printErr(`feed: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

interface LiveRun {
  baseUrl: string;
  projectId: string;
  token: string;
  integration: string;
  eventTypes: string[];
  store: CursorStore;
  resetCursor: boolean;
  signal: AbortSignal;
}

const LIVE_BACKOFF = { baseDelayMs: 500, maxDelayMs: 30_000 };
/** A stream that stayed open this long resets the backoff. */
const LIVE_HEALTHY_MS = 10_000;

/**
 * --live: reads the SSE stream, writes each event as a line, and saves the cursor just after
 * it once the line is written (never before). Resumes from the pull reader's saved cursor
 * (same file, same key: the two modes share it) and deduplicates by the same window of ids.
 * A dropped stream, a 503 or a network error reconnects with backoff from the saved cursor;
 * any other refusal stops with the pull mode's recovery.
 */
async function runLive(run: LiveRun): Promise<number> {
  const key = cursorKey(run);
  let state;
  try {
    state = (await run.store.load(key)) ?? { after: null, recentIds: [] };
  } catch (err) {
    printErr(`feed: cannot read the cursor file: ${describe(err)}`);
    return 1;
  }
  if (run.resetCursor) {
    state = { after: null, recentIds: state.recentIds };
    await run.store.save(key, state);
  }
  const recent = new RecentIds(5000, state.recentIds);
  let after = state.after;
  const stats = { events: 0, duplicates: 0, reconnects: 0 };
  let failures = 0;
  let lastReport = Date.now();
  const summary = () =>
    `feed: ${stats.events} events, ${stats.duplicates} duplicates, ${stats.reconnects} reconnects`;

  while (!run.signal.aborted) {
    const openedAt = Date.now();
    let reason: string;
    let retryAfterMs: number | undefined;
    try {
      const stream = await openLiveStream({
        baseUrl: run.baseUrl,
        projectId: run.projectId,
        token: run.token,
        eventTypes: run.eventTypes,
        after,
        signal: run.signal,
      });
      const iterator = stream[Symbol.asyncIterator]();
      const aborted = new Promise<null>((resolve) => {
        if (run.signal.aborted) resolve(null);
        run.signal.addEventListener("abort", () => resolve(null), { once: true });
      });
      for (;;) {
        // The fetch's signal does not always end a body read in progress: race it.
        const next = await Promise.race([iterator.next(), aborted]);
        if (next === null) {
          void iterator.return?.().catch(() => {});
          break;
        }
        if (next.done) break;
        const message = next.value;
        let event: { id?: unknown; schema_version?: unknown };
        try {
          event = JSON.parse(message.data);
        } catch {
          throw new Error("an event that is not JSON");
        }
        if (event.schema_version !== 1) {
          printErr(
            `feed: an event of schema_version ${event.schema_version}, which this client does ` +
              "not understand. Recovery: update the client; the cursor stays before it",
          );
          return 1;
        }
        const id = typeof event.id === "string" ? event.id : null;
        if (id !== null && recent.has(id)) {
          stats.duplicates++;
        } else {
          try {
            await writeAll(encoder.encode(message.data + "\n"));
          } catch {
            printErr("feed: stdout closed; the cursor stays before the unwritten event");
            return 1;
          }
          stats.events++;
          if (id !== null) recent.add(id);
        }
        after = message.cursor;
        await run.store.save(key, { after, recentIds: recent.toArray() });
        if (Date.now() - lastReport >= 1000) {
          lastReport = Date.now();
          printErr(summary());
        }
        if (run.signal.aborted) break;
      }
      reason = "the stream ended";
    } catch (err) {
      if (run.signal.aborted) break;
      if (err instanceof FeedError && err.status !== 503) {
        printErr(`feed: ${err.message}`);
        return 1;
      }
      if (err instanceof FeedError) {
        reason = `503 ${err.code ?? "unavailable"}`;
        retryAfterMs = err.code === "rate_limited" ? 1000 : undefined;
      } else {
        reason = `network error: ${describe(err)}`;
      }
    }
    if (run.signal.aborted) break;
    if (Date.now() - openedAt >= LIVE_HEALTHY_MS) failures = 0;
    failures++;
    stats.reconnects++;
    const delayMs = backoffDelay(failures, LIVE_BACKOFF, Math.random, retryAfterMs);
    printErr(
      `feed: reconnecting in ${delayMs}ms (${reason}); total reconnects ${stats.reconnects}`,
    );
    await abortableSleep(delayMs, run.signal);
  }
  printErr(`${summary()}, stopped; cursor saved`);
  return 0;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

Deno.exit(await main());
