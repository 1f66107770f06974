// Loads a project's feed into PostgreSQL idempotently: every event once by id, and per
// (transaction_id, name) only the purchase with the highest version.
//
//   FEED_TOKEN=est_… WAREHOUSE_URL=postgres://… \
//     deno run --allow-net --allow-env --allow-read --allow-write \
//     client/examples/load_into_postgres.ts http://localhost:8000 1
//
// Not part of the client library (which has no dependencies): it uses postgres.js.
import postgres from "postgres";
import { FeedReader, FileCursorStore, reducePurchases } from "../mod.ts";

export const WAREHOUSE_SCHEMA = `
  create table if not exists warehouse_events (
    id text primary key,
    type text not null,
    name text,
    occurred_at timestamptz not null,
    body jsonb not null
  );
  create table if not exists warehouse_purchases (
    transaction_id text not null,
    name text not null,
    version integer not null,
    event_id text not null,
    amount bigint,
    currency text,
    occurred_at timestamptz not null,
    primary key (transaction_id, name)
  );
`;

export interface LoadOptions {
  baseUrl: string;
  projectId: string | number;
  token: string;
  cursorFile: string;
  follow?: boolean;
  signal?: AbortSignal;
}

/** Reads the feed into the two tables; each page is one transaction, then the cursor is saved. */
export async function loadFeed(sql: postgres.Sql, options: LoadOptions) {
  await sql.unsafe(WAREHOUSE_SCHEMA);
  const reader = new FeedReader({
    baseUrl: options.baseUrl,
    projectId: options.projectId,
    token: options.token,
    integration: "warehouse",
    store: new FileCursorStore(options.cursorFile),
    limit: 1000,
    follow: options.follow ?? false,
    signal: options.signal,
  });
  return await reader.run(async (events) => {
    // One row per (transaction_id, name) in the page, so that one statement never updates a
    // row twice; across pages the WHERE below keeps the highest version.
    const purchases = reducePurchases(events);
    await sql.begin(async (tx) => {
      await tx`
        insert into warehouse_events (id, type, name, occurred_at, body)
        select * from unnest(
          ${events.map((e) => e.id)}::text[],
          ${events.map((e) => e.type)}::text[],
          ${events.map((e) => e.name ?? null)}::text[],
          ${events.map((e) => e.occurred_at)}::timestamptz[],
          ${events.map((e) => JSON.stringify(e))}::jsonb[]
        )
        on conflict (id) do nothing
      `;
      if (purchases.length === 0) return;
      await tx`
        insert into warehouse_purchases
          (transaction_id, name, version, event_id, amount, currency, occurred_at)
        select * from unnest(
          ${purchases.map((e) => e.purchase!.transaction_id)}::text[],
          ${purchases.map((e) => e.name ?? "")}::text[],
          ${purchases.map((e) => e.purchase!.version)}::int[],
          ${purchases.map((e) => e.id)}::text[],
          ${purchases.map((e) => e.purchase!.amount ?? null)}::bigint[],
          ${purchases.map((e) => e.purchase!.currency ?? null)}::text[],
          ${purchases.map((e) => e.occurred_at)}::timestamptz[]
        )
        on conflict (transaction_id, name) do update set
          version = excluded.version, event_id = excluded.event_id, amount = excluded.amount,
          currency = excluded.currency, occurred_at = excluded.occurred_at
        where warehouse_purchases.version < excluded.version
      `;
    });
  });
}

if (import.meta.main) {
  const [baseUrl, projectId] = Deno.args;
  const token = Deno.env.get("FEED_TOKEN");
  const url = Deno.env.get("WAREHOUSE_URL");
  if (!baseUrl || !projectId || !token || !url) {
    throw new Error("usage: FEED_TOKEN=… WAREHOUSE_URL=postgres://… load_into_postgres.ts URL ID");
  }
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const controller = new AbortController();
  Deno.addSignalListener("SIGINT", () => controller.abort());
  try {
    const result = await loadFeed(sql, {
      baseUrl,
      projectId,
      token,
      cursorFile: "./warehouse.cursor",
      follow: Deno.args.includes("--follow"),
      signal: controller.signal,
    });
    // deno-lint-ignore no-console
    console.error(`loaded ${result.stats.events} events (${result.reason})`);
  } finally {
    await sql.end();
  }
}
