// Recording analytics events: the one path every event takes, whether the app SDKs send it
// (POST {base_url}/events) or the service records it itself (a link-host view).
import { monotonicFactory } from "ulid";
import type { Db, Sql } from "../db/connect.ts";
import type { Clock } from "./clock.ts";
import { type CapturedEvent, captureEvents } from "./feed_capture.ts";
import { accessPath } from "./links.ts";
import type { Environment } from "./projects.ts";

/** Types the app SDKs may send. `view` is recorded by the link host only. */
export const INGESTED_EVENT_TYPES = [
  "open",
  "install",
  "reinstall",
  "reactivation",
  "app_open",
  "user_referred",
  "session",
  "purchase",
  "custom",
] as const;

export type EventType = (typeof INGESTED_EVENT_TYPES)[number] | "view";

export interface Purchase {
  transaction_id: string;
  version: number;
  amount: number;
  currency: string;
  product_id: string;
  store: string;
}

/** A validated event, as the ingestion schema produces it. */
export interface NewEvent {
  /** The client's idempotency key. Optional fields take null as absent. */
  id?: string | null | undefined;
  type: EventType;
  name?: string | null | undefined;
  occurred_at: Date;
  link_path?: string | null | undefined;
  time_spent?: number | null | undefined;
  device?: Record<string, unknown> | null | undefined;
  user?: Record<string, unknown> | null | undefined;
  attribution?: Record<string, unknown> | null | undefined;
  geo?: { country: string } | null | undefined;
  purchase?: Purchase | null | undefined;
}

export type EventEnvironment = Pick<Environment, "id" | "kind" | "hashid">;

export interface RecordContext {
  environment: EventEnvironment;
  clock: Clock;
  linkBaseUrl: string;
}

export interface RecordResult {
  accepted: number;
  duplicates: number;
}

interface LinkRef {
  id: number;
  path: string;
  /** The project's link domain when the event is recorded: it fixes the envelope's access_path. */
  link_domain: string | null;
}

/** A newly stored event, with what moves the counters. */
interface StoredEvent {
  event: NewEvent;
  eventId: string;
  link: LinkRef | undefined;
  body: string;
}

type CounterName =
  | "views"
  | "opens"
  | "installs"
  | "reinstalls"
  | "reactivations"
  | "app_opens"
  | "user_referred";

/** Event types that count one on a link counter (session and purchase move sums instead). */
const COUNTED: Partial<Record<EventType, CounterName>> = {
  view: "views",
  open: "opens",
  install: "installs",
  reinstall: "reinstalls",
  reactivation: "reactivations",
  app_open: "app_opens",
  user_referred: "user_referred",
};

type Deltas = Record<CounterName | "time_spent" | "revenue", number>;

const newEventId = monotonicFactory();

/**
 * Stores a batch of events all-or-nothing in one transaction: the analytics rows, the link
 * counters they move, the purchase versions behind revenue, and last the captured feed.
 * Events whose client `id` is already stored in the environment (or repeated in the batch) are
 * duplicates: they are not stored and move nothing. Statements are per batch, never per event.
 */
export async function recordEvents(
  sql: Sql,
  ctx: RecordContext,
  events: readonly NewEvent[],
  /** Links already resolved by the caller, by path (the link host has its link at hand). */
  known: readonly LinkRef[] = [],
): Promise<RecordResult> {
  const receivedAt = ctx.clock.now();
  const unique = withoutRepeatedIds(events);
  const stored = await sql.begin(async (tx) => {
    const links = await resolveLinks(tx, ctx.environment.id, unique, known);
    const prepared = unique.map((event): StoredEvent => {
      const link = event.link_path == null ? undefined : links.get(event.link_path);
      const eventId = "evt_" + newEventId(receivedAt.getTime());
      return { event, eventId, link, body: envelope(ctx, eventId, event, link) };
    });
    const inserted = await insertEvents(tx, ctx.environment.id, receivedAt, prepared);
    const deltas = countEvents(inserted);
    await applyPurchases(tx, ctx.environment.id, inserted, deltas);
    await applyDeltas(tx, deltas);
    await captureEvents(
      tx,
      ctx.environment.id,
      receivedAt,
      inserted.map((s): CapturedEvent => ({ type: s.event.type, body: s.body })),
    );
    return inserted.length;
  });
  return { accepted: stored, duplicates: events.length - stored };
}

/** The batch with every client id kept once (its first occurrence). */
function withoutRepeatedIds(events: readonly NewEvent[]): NewEvent[] {
  const seen = new Set<string>();
  return events.filter((e) => {
    if (e.id == null) return true;
    if (seen.has(e.id)) return false;
    seen.add(e.id);
    return true;
  });
}

/** One query for the batch's distinct link paths; unknown paths stay unattributed. */
async function resolveLinks(
  db: Db,
  environmentId: number,
  events: readonly NewEvent[],
  known: readonly LinkRef[],
): Promise<Map<string, LinkRef>> {
  const links = new Map(known.map((l) => [l.path, l]));
  const paths = [
    ...new Set(
      events.flatMap((e) => e.link_path != null && !links.has(e.link_path) ? [e.link_path] : []),
    ),
  ];
  if (paths.length === 0) return links;
  const rows = await db<LinkRef[]>`
    select l.id, l.path, p.link_domain
    from links l join environments e on e.id = l.environment_id join projects p on p.id = e.project_id
    where l.environment_id = ${environmentId} and l.path = any(${paths}::text[])
  `;
  for (const row of rows) links.set(row.path, row);
  return links;
}

/** The feed-event envelope, serialised once: absent keys are left out, never null. */
function envelope(
  ctx: RecordContext,
  eventId: string,
  e: NewEvent,
  link: LinkRef | undefined,
): string {
  const purchase = e.type === "purchase" ? e.purchase ?? undefined : undefined;
  return JSON.stringify({
    schema_version: 1,
    id: eventId,
    type: e.type,
    name: storedName(e) ?? undefined,
    occurred_at: e.occurred_at.toISOString(),
    project: { id: ctx.environment.hashid, test: ctx.environment.kind === "test" },
    device: e.device ?? undefined,
    user: e.user ?? undefined,
    link: link && {
      id: link.id,
      path: link.path,
      // As of recording: envelopes are stored and served byte for byte, so a later change of
      // the project's link domain does not rewrite them (the Link object shows the new one).
      access_path: accessPath(ctx.linkBaseUrl, link),
    },
    attribution: e.attribution ?? undefined,
    geo: e.geo ? { country: e.geo.country } : undefined,
    purchase: purchase && {
      transaction_id: purchase.transaction_id,
      version: purchase.version,
      amount: purchase.amount,
      currency: purchase.currency,
      product_id: purchase.product_id,
      store: purchase.store,
    },
    // An addition within schema_version 1: a session's length in seconds.
    time_spent: e.type === "session" ? e.time_spent ?? undefined : undefined,
  });
}

/** Inserts the batch in one statement; returns the events actually stored (not duplicates). */
async function insertEvents(
  db: Db,
  environmentId: number,
  receivedAt: Date,
  events: readonly StoredEvent[],
): Promise<StoredEvent[]> {
  if (events.length === 0) return [];
  const rows = await db<{ event_id: string }[]>`
    insert into analytics_events (
      environment_id, event_id, client_id, type, name, occurred_at, received_at, link_id, body
    )
    select ${environmentId}, event_id, client_id, type, name, occurred_at, ${receivedAt}, link_id,
      body
    from unnest(
      ${events.map((s) => s.eventId)}::text[],
      ${events.map((s) => s.event.id ?? null)}::text[],
      ${events.map((s) => s.event.type)}::text[],
      ${events.map((s) => storedName(s.event))}::text[],
      ${events.map((s) => s.event.occurred_at.toISOString())}::timestamptz[],
      ${events.map((s) => s.link?.id ?? null)}::int[],
      ${events.map((s) => s.body)}::text[]
    ) with ordinality as t(event_id, client_id, type, name, occurred_at, link_id, body, ord)
    -- Two batches with the same client ids in another order would wait on each other's index
    -- entries in a cycle (a deadlock); in one order they simply queue. Events without an id
    -- keep the batch's order.
    order by client_id, ord
    on conflict (environment_id, client_id) where client_id is not null do nothing
    returning event_id
  `;
  if (rows.length === events.length) return [...events];
  const inserted = new Set(rows.map((r) => r.event_id));
  return events.filter((s) => inserted.has(s.eventId));
}

function storedName(e: NewEvent): string | null {
  return (e.type === "custom" || e.type === "purchase") && e.name != null ? e.name : null;
}

function emptyDeltas(): Deltas {
  return {
    views: 0,
    opens: 0,
    installs: 0,
    reinstalls: 0,
    reactivations: 0,
    app_opens: 0,
    user_referred: 0,
    time_spent: 0,
    revenue: 0,
  };
}

/** Per-link counter deltas of the stored events, revenue aside (see applyPurchases). */
function countEvents(events: readonly StoredEvent[]): Map<number, Deltas> {
  const deltas = new Map<number, Deltas>();
  for (const { event, link } of events) {
    if (!link) continue;
    const counter = COUNTED[event.type];
    if (counter === undefined && event.type !== "session") continue;
    let d = deltas.get(link.id);
    if (!d) deltas.set(link.id, d = emptyDeltas());
    if (counter !== undefined) d[counter] += 1;
    else d.time_spent += event.time_spent ?? 0;
  }
  return deltas;
}

interface PurchaseVersionRow {
  transaction_id: string;
  name: string;
  version: number;
  amount: string;
  link_id: number | null;
}

/**
 * Revenue counts, per (transaction_id, name), only the highest version seen: a correction
 * replaces the earlier amount (which may have been attributed to another link), and an older
 * version arriving late changes nothing. The first statement creates missing records as
 * version 0 and locks every record of the batch, in key order so that concurrent batches never
 * deadlock, returning the current values; the second writes the newer versions.
 */
async function applyPurchases(
  db: Db,
  environmentId: number,
  events: readonly StoredEvent[],
  deltas: Map<number, Deltas>,
): Promise<void> {
  const newest = new Map<string, { name: string; purchase: Purchase; linkId: number | null }>();
  for (const { event, link } of events) {
    if (event.type !== "purchase" || !event.purchase || event.name == null) continue;
    const key = JSON.stringify([event.purchase.transaction_id, event.name]);
    const seen = newest.get(key);
    if (!seen || event.purchase.version > seen.purchase.version) {
      newest.set(key, { name: event.name, purchase: event.purchase, linkId: link?.id ?? null });
    }
  }
  if (newest.size === 0) return;
  const incoming = [...newest.values()].sort((a, b) =>
    compare(a.purchase.transaction_id, b.purchase.transaction_id) || compare(a.name, b.name)
  );
  const current = await db<PurchaseVersionRow[]>`
    insert into purchase_versions (environment_id, transaction_id, name, version, amount)
    select ${environmentId}, transaction_id, name, 0, 0
    from unnest(
      ${incoming.map((p) => p.purchase.transaction_id)}::text[],
      ${incoming.map((p) => p.name)}::text[]
    ) with ordinality as t(transaction_id, name, ord)
    order by ord
    on conflict (environment_id, transaction_id, name)
      do update set version = purchase_versions.version
    returning transaction_id, name, version, amount, link_id
  `;
  const byKey = new Map(current.map((r) => [JSON.stringify([r.transaction_id, r.name]), r]));
  const newer = incoming.filter((p) => {
    const old = byKey.get(JSON.stringify([p.purchase.transaction_id, p.name]));
    if (!old || p.purchase.version <= old.version) return false;
    if (old.link_id !== null && old.version > 0) {
      addRevenue(deltas, old.link_id, -Number(old.amount));
    }
    if (p.linkId !== null) addRevenue(deltas, p.linkId, p.purchase.amount);
    return true;
  });
  if (newer.length === 0) return;
  await db`
    update purchase_versions p
    set version = u.version, amount = u.amount, link_id = u.link_id
    from unnest(
      ${newer.map((p) => p.purchase.transaction_id)}::text[],
      ${newer.map((p) => p.name)}::text[],
      ${newer.map((p) => p.purchase.version)}::int[],
      ${newer.map((p) => p.purchase.amount)}::bigint[],
      ${newer.map((p) => p.linkId)}::int[]
    ) as u(transaction_id, name, version, amount, link_id)
    where p.environment_id = ${environmentId}
      and p.transaction_id = u.transaction_id and p.name = u.name
  `;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function addRevenue(deltas: Map<number, Deltas>, linkId: number, amount: number): void {
  let d = deltas.get(linkId);
  if (!d) deltas.set(linkId, d = emptyDeltas());
  d.revenue += amount;
}

/**
 * Moves the link counters in one UPDATE, after locking the rows in link order (so that
 * concurrent batches touching the same links queue instead of deadlocking). Sums saturate at
 * the bigint range rather than fail.
 */
async function applyDeltas(db: Db, deltas: Map<number, Deltas>): Promise<void> {
  if (deltas.size === 0) return;
  const ids = [...deltas.keys()].sort((a, b) => a - b);
  const col = (name: keyof Deltas) => ids.map((id) => deltas.get(id)![name]);
  await db`
    select link_id from link_counters where link_id = any(${ids}::int[])
    order by link_id for update
  `;
  await db`
    update link_counters c set
      total_views = c.total_views + d.views,
      total_opens = c.total_opens + d.opens,
      total_installs = c.total_installs + d.installs,
      total_reinstalls = c.total_reinstalls + d.reinstalls,
      total_reactivations = c.total_reactivations + d.reactivations,
      total_app_opens = c.total_app_opens + d.app_opens,
      total_user_referred = c.total_user_referred + d.user_referred,
      total_time_spent = least(c.total_time_spent::numeric + d.time_spent, 9223372036854775807)::bigint,
      total_revenue = greatest(-9223372036854775807,
        least(c.total_revenue::numeric + d.revenue, 9223372036854775807))::bigint
    from unnest(
      ${ids}::int[], ${col("views")}::bigint[], ${col("opens")}::bigint[],
      ${col("installs")}::bigint[], ${col("reinstalls")}::bigint[],
      ${col("reactivations")}::bigint[], ${col("app_opens")}::bigint[],
      ${col("user_referred")}::bigint[], ${col("time_spent")}::numeric[],
      ${col("revenue")}::numeric[]
    ) as d(link_id, views, opens, installs, reinstalls, reactivations, app_opens, user_referred,
      time_spent, revenue)
    where c.link_id = d.link_id
  `;
}
