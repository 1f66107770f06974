// deno run -A bench/capture_indexes.ts [--rounds N]: what each of the feed's indexes costs a
// capturing write. Copies of feed_events (partitioned by day like it, the same columns) with
// different index sets take the same 1,000-event inserts (as ingestion's capture writes them,
// ~500 B envelopes, one transaction each), in alternating rounds; reported: the median time
// per insert and the WAL each writes (exact, unlike the times on a shared machine).
import { parseArgs } from "node:util";
import { ensurePartitions } from "../services/maintenance/partitions.ts";
import { benchDatabase, fmt, median } from "./lib.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "10" } },
});
// deno-lint-ignore no-console
const print = (s: string) => console.log(s);

const VARIANTS: Record<string, string[]> = {
  "position, type, received_at (today)": [
    "(environment_id, xid, seq)",
    "(environment_id, type, xid, seq)",
    "(received_at)",
  ],
  "position, type": ["(environment_id, xid, seq)", "(environment_id, type, xid, seq)"],
  "position, type, received_at as BRIN": [
    "(environment_id, xid, seq)",
    "(environment_id, type, xid, seq)",
    "using brin (received_at)",
  ],
  "position, received_at": ["(environment_id, xid, seq)", "(received_at)"],
  "position only": ["(environment_id, xid, seq)"],
};

const db = await benchDatabase();
const { sql } = db;
try {
  await ensurePartitions(sql, "feed_events", new Date(), { behindDays: 1 });
  const tables: [string, string][] = [];
  let i = 0;
  for (const [label, indexes] of Object.entries(VARIANTS)) {
    const t = `capture_variant_${i++}`;
    await sql.unsafe(
      `create table ${t} (like feed_events including defaults) partition by range (received_at)`,
    );
    const today = new Date();
    today.setUTCHours(0, 0, 0, 0);
    const tomorrow = new Date(today.getTime() + 86400_000);
    await sql.unsafe(
      `create table ${t}_today partition of ${t} for values from ('${today.toISOString()}') to ('${tomorrow.toISOString()}')`,
    );
    await sql.unsafe(`create table ${t}_default partition of ${t} default`);
    for (const ix of indexes) await sql.unsafe(`create index on ${t} ${ix}`);
    tables.push([label, t]);
  }
  const body = (g: number) =>
    JSON.stringify({
      schema_version: 1,
      id: `evt_${g.toString(16).padStart(26, "0")}`,
      type: g % 5 === 0 ? "install" : "open",
      occurred_at: new Date().toISOString(),
      project: { id: "p1234567", test: false },
      device: {
        os: "iOS",
        model: "iPhone15,2",
        locale: "de_DE",
        app_version: "4.12.0",
        idfv: crypto.randomUUID(),
      },
      user: { id: `user-${g}`, plan: "pro" },
      link: { id: 1, path: "abcdefghij", access_path: "https://lnk.example.test/abcdefghij" },
      geo: { country: "DE" },
    });
  const ms = new Map<string, number[]>();
  const wal = new Map<string, number[]>();
  let g = 0;
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [label, t] of tables) {
      for (let k = 0; k < 5; k++) {
        const events = Array.from(
          { length: 1000 },
          () => ({ type: g % 5 ? "open" : "install", body: body(g++) }),
        );
        const [before] = await sql<
          { lsn: string }[]
        >`select pg_current_wal_insert_lsn()::text as lsn`;
        const t0 = performance.now();
        await sql.unsafe(
          `insert into ${t} (environment_id, type, received_at, body, link_id)
           select 1, e.type, now(), e.body, 1
           from json_to_recordset(($1::text)::json) as e(type text, body text)`,
          [JSON.stringify(events)],
        );
        const dt = performance.now() - t0;
        const [after] = await sql<{ bytes: string }[]>`
          select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${
          before!.lsn
        }::pg_lsn)::text as bytes`;
        (ms.get(label) ?? ms.set(label, []).get(label)!).push(dt);
        (wal.get(label) ?? wal.set(label, []).get(label)!).push(Number(after!.bytes));
      }
    }
  }
  print(`load: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);
  print("| indexes on each day | ms per 1,000-event insert (median) | WAL per insert (median) |");
  print("|---|---|---|");
  for (const [label] of tables) {
    print(
      `| ${label} | ${fmt(median(ms.get(label)!), 1)} | ${
        fmt(median(wal.get(label)!) / 1024, 0)
      } KiB |`,
    );
  }
} finally {
  await db.close();
}
