// Stores batches of events and merges the rollups at the same time, forever, in a process of
// its own, for tests that kill it mid-way: deno run -A tests/helpers/rollup_writer.ts <url>
// <environment id> <link paths, comma-separated> <first batch>. Prints "stored <n>" after each
// batch.
import { connect } from "../../db/connect.ts";
import { mergeRollups } from "../../services/analytics/rollups.ts";
import type { NewEvent } from "../../services/events/event.ts";
import { recordEvents } from "../../services/events/record.ts";
import { getEnvironmentOrThrow } from "../../services/projects/projects.ts";

export const BATCH = 50;
const HOUR_MS = 60 * 60 * 1000;
const BASE = Date.parse("2030-03-01T00:00:00Z");

/** Batch `n`, the same every time it is asked for: its ids make a resend a duplicate. */
export function writerBatch(n: number, paths: readonly string[]): NewEvent[] {
  const types = ["open", "install", "session", "purchase", "custom", "app_open", "view"] as const;
  return Array.from({ length: BATCH }, (_, i) => {
    const k = n * BATCH + i;
    const type = types[k % types.length]!;
    return {
      id: `w${k}`,
      type,
      occurred_at: new Date(BASE + (k % 40) * HOUR_MS + k),
      link_path: paths[k % paths.length]!,
      geo: { country: ["DE", "FR"][k % 2]! },
      device: { platform: ["ios", "android"][k % 3 === 0 ? 0 : 1]! },
      time_spent: type === "session" ? k % 100 : null,
      name: type === "purchase" ? "buy" : type === "custom" ? "signup" : null,
      // Transactions corrected by later batches: version n of transaction k % 7.
      purchase: type === "purchase"
        ? {
          transaction_id: `t${k % 7}`,
          version: 1 + n,
          amount: 100 + k,
          currency: "EUR",
          product_id: "p",
          store: "app_store",
        }
        : null,
    };
  });
}

if (import.meta.main) {
  const [url, environmentId, paths, first] = Deno.args;
  const sql = connect(url!, 3);
  const env = await getEnvironmentOrThrow(sql, Number(environmentId));
  const clock = { now: () => new Date(BASE + 60 * 24 * HOUR_MS) };
  const ctx = { environment: env, clock, linkBaseUrl: "https://lnk.example.test" };
  const encoder = new TextEncoder();
  // Merging everything stored so far, over and over, while batches go on being stored.
  (async () => {
    while (true) await mergeRollups(sql, new Date(BASE + 365 * 24 * HOUR_MS));
  })();
  for (let n = Number(first);; n++) {
    await recordEvents(sql, ctx, writerBatch(n, paths!.split(",")));
    Deno.stdout.writeSync(encoder.encode(`stored ${n}\n`));
  }
}
