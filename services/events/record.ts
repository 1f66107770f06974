// Recording analytics events: the one path every event takes, whether the app SDKs send it
// (POST {base_url}/events) or the service records it itself (a link-host view).
import { monotonicFactory } from "ulid";
import type { Db, Sql } from "../../db/connect.ts";
import { jsonColumn } from "../../db/params.ts";
import type { Clock } from "../../infra/clock.ts";
import { ApiError, isForeignKeyViolation } from "../errors.ts";
import { onCitus } from "../../db/cluster.ts";
import { announceCapture, capturingEnvironment, lockCaptureOnCitus } from "../feed/capture.ts";
import { FEED_SCHEMA_VERSION, type Purchase, serialiseEnvelope } from "../feed/envelope.ts";
import {
  addRevenue,
  applyDeltas,
  countersInStatement,
  countEvents,
  type Deltas,
} from "../links/counters.ts";
import type { NewEvent } from "./event.ts";
import { accessPath } from "../links/links.ts";
import { deleteDefaultRowsBefore } from "../maintenance/partitions.ts";
import type { Environment } from "../projects/projects.ts";
import {
  eventDimensions,
  type PurchaseBucket,
  type PurchaseDelta,
  purchaseRollupRows,
  rollupInsertSql,
  utcHour,
} from "../analytics/rollups.ts";
import { countIngested } from "../monitoring/metrics.ts";
import { convertWith, ingestionRates, utcDay } from "../fx/rates.ts";
import {
  attributeBatch,
  attributedUserId,
  type Decision,
  envelopeAttribution,
  type LinkRef,
  needsAttribution,
  type NewTouch,
  UnreadTouches,
} from "../attribution/attribute.ts";
import type { ClickIds } from "../attribution/click_ids.ts";
import { bucketSql } from "../attribution/install_days.ts";

export type EventEnvironment = Pick<Environment, "id" | "kind" | "hashid">;

export interface RecordContext {
  environment: EventEnvironment;
  clock: Clock;
  linkBaseUrl: string;
  /**
   * An idempotency key for the whole batch, for a writer that retries a batch it could not
   * confirm (the link host's views carry no client ids): a batch whose key is already stored
   * was committed by an earlier attempt, and is stored and counted no second time.
   */
  batchKey?: string;
  /**
   * False only in bench/analytics.ts's baseline, which measures ingestion without the rollups:
   * the batch's rollup rows are then not written, and analytics never count it.
   */
  rollups?: boolean;
  /** Reads the click ids events carry; without it, no event is attributed by click id. */
  clickIds?: ClickIds;
  /**
   * False only in bench/attribution.ts's baseline, which measures ingestion without click and
   * user attribution: events then count for their `link_path` alone.
   */
  attribution?: boolean;
  /**
   * Known links (recordEvents' `known`) found deleted since the caller read them: their events
   * keep the envelope they were answered with but are stored with no link, and move no counter,
   * as if they had been stored in time and the deletion had then cleared them. Set by
   * recordEvents itself when a write fails on one.
   */
  deletedLinks?: ReadonlySet<number>;
}

export interface RecordResult {
  accepted: number;
  duplicates: number;
}

/** A newly stored event, with what moves the counters. */
interface StoredEvent {
  event: NewEvent;
  eventId: string;
  link: LinkRef | undefined;
  /** How the event was attributed to `link`. */
  decision: Decision | undefined;
  body: string;
}

const newEventId = monotonicFactory();

/** How far ahead of the server's clock `occurred_at` may be. */
export const MAX_FUTURE_MS = 24 * 60 * 60 * 1000;

/** 400 `invalid_field` naming the first event that occurred more than 24 hours after `now`. */
export function assertOccurredInTime(events: readonly { occurred_at: Date }[], now: Date): void {
  const latest = now.getTime() + MAX_FUTURE_MS;
  const index = events.findIndex((e) => e.occurred_at.getTime() > latest);
  if (index >= 0) {
    throw new ApiError(
      "invalid_field",
      `events[${index}].occurred_at: must not be more than 24 hours in the future`,
      { field: `events[${index}].occurred_at` },
    );
  }
}

/**
 * Stores a batch of events all-or-nothing in one transaction: the analytics rows and the
 * captured feed, the analytics rollups (services/analytics/rollups.ts), the link counters they
 * move, and the purchase versions behind revenue.
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
  try {
    return await recordOnce(sql, ctx, events, known);
  } catch (err) {
    // A link deleted between its reading and the write fails the batch's foreign key from the
    // purchases' versions (the history keeps no key to links since migration 00031): a batch's
    // links are read without a lock. The batch was rolled back; once more, the links read again
    // and the caller's known ones that are gone left out, rather than a 500.
    if (!isForeignKeyViolation(err)) throw err;
    const ids = known.flatMap((l) => ctx.deletedLinks?.has(l.id) ? [] : [l.id]);
    const present = await sql<{ id: number }[]>`select id from links where id = any(${ids}::int[])`;
    const deletedLinks = new Set(ctx.deletedLinks);
    for (const id of ids) if (!present.some((r) => r.id === id)) deletedLinks.add(id);
    return await recordOnce(sql, { ...ctx, deletedLinks }, events, known);
  }
}

/** The batch stored once, or again with every user's touches read (attribute.ts UnreadTouches). */
async function recordOnce(
  sql: Sql,
  ctx: RecordContext,
  events: readonly NewEvent[],
  known: readonly LinkRef[],
): Promise<RecordResult> {
  try {
    return await recordInTransaction(sql, ctx, events, known, false);
  } catch (err) {
    if (!(err instanceof UnreadTouches)) throw err;
    return await recordInTransaction(sql, ctx, events, known, true);
  }
}

async function recordInTransaction(
  sql: Sql,
  ctx: RecordContext,
  events: readonly NewEvent[],
  known: readonly LinkRef[],
  probeAll: boolean,
): Promise<RecordResult> {
  const receivedAt = ctx.clock.now();
  const unique = withoutRepeatedIds(events);
  // Stored whole or not at all (no client ids, no purchases, links known, no click id or user to
  // attribute by): the counters move in the statement that stores the events (inOneStatement).
  const attributable = needsAttribution(unique);
  const together = !attributable && inOneStatement(unique, known);
  const stored = await sql.begin(async (tx) => {
    const newIds = () => unique.map(() => "evt_" + newEventId(receivedAt.getTime()));
    let decisions: (Decision | undefined)[];
    let touches: NewTouch[] = [];
    let eventIds: string[];
    if (attributable && (ctx.attribution ?? true)) {
      ({ decisions, touches, eventIds } = await attributeBatch(
        tx,
        ctx.environment.id,
        ctx.clickIds,
        unique,
        known,
        newIds,
        probeAll,
      ));
    } else {
      const links = together
        ? new Map(known.map((l) => [l.path, l]))
        : await resolveLinks(tx, ctx.environment.id, unique, known);
      eventIds = newIds();
      decisions = unique.map((event) => {
        const link = event.link_path == null ? undefined : links.get(event.link_path);
        return link && { method: "link_path", link };
      });
    }
    const prepared = unique.map((event, i): StoredEvent => {
      const eventId = eventIds[i]!;
      const decision = decisions[i];
      const link = decision?.link;
      return {
        event,
        eventId,
        link: link && ctx.deletedLinks?.has(link.id) ? undefined : link,
        decision,
        body: envelope(ctx, eventId, event, decision),
      };
    });
    const { inserted, captured } = await insertEvents(
      tx,
      ctx.environment.id,
      receivedAt,
      prepared,
      ctx.batchKey ?? null,
      ctx.rollups ?? true,
      together ? countEvents(prepared) : null,
      touches,
    );
    if (!together) {
      const deltas = countEvents(inserted);
      await applyPurchases(tx, ctx.environment.id, inserted, deltas);
      await applyDeltas(tx, ctx.environment.id, deltas);
    }
    return { inserted, captured };
  });
  countIngested(stored.inserted.map((e) => e.event.type));
  // A lost wake-up only delays readers until their next poll (see announceCapture): the events
  // are committed and the request has succeeded.
  if (stored.captured) await announceCapture(sql, ctx.environment.id).catch(() => {});
  const n = stored.inserted.length;
  return { accepted: n, duplicates: events.length - n };
}

/**
 * Whether the batch's counters move in the statement that stores it: when the batch is stored
 * whole or not at all (no client ids: the link host's views, under their batch key), moves no
 * revenue (no purchases) and needs no link looked up (the caller knows them). Three statements
 * per batch (begin, the insert with the counters, commit) instead of five. Still in a
 * transaction, on a connection of its own: sent as one statement through the pool, the
 * redirect with its view cost more (docs/SCALING.md: probably the hits' queries pipelined
 * behind the batch on a shared connection). Not on Citus, whose distributed counters were not
 * tried as a CTE of the insert.
 */
function inOneStatement(events: readonly NewEvent[], known: readonly LinkRef[]): boolean {
  if (onCitus()) return false;
  const paths = new Set(known.map((l) => l.path));
  return events.every((e) =>
    e.id == null && e.type !== "purchase" && (e.link_path == null || paths.has(e.link_path))
  );
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
    from links l join projects p on p.id = l.project_id
    where l.environment_id = ${environmentId} and l.path = any(${paths}::text[])
  `;
  for (const row of rows) links.set(row.path, row);
  return links;
}

/** The event's feed envelope (services/feed/envelope.ts), serialised once. */
function envelope(
  ctx: RecordContext,
  eventId: string,
  e: NewEvent,
  decision: Decision | undefined,
): string {
  const link = decision?.link;
  return serialiseEnvelope({
    schema_version: FEED_SCHEMA_VERSION,
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
    attribution: envelopeAttribution(e, decision),
    geo: e.geo ? { country: e.geo.country } : undefined,
    purchase: e.type === "purchase" ? e.purchase ?? undefined : undefined,
    time_spent: e.type === "session" ? e.time_spent ?? undefined : undefined,
  });
}

/**
 * Inserts the batch in one statement; returns the events actually stored (not duplicates), and
 * whether they were captured.
 * - The history is partitioned by day (services/maintenance/partitions.ts), where no unique index can span
 *   the days: client ids are claimed in analytics_event_keys by the same statement, and only
 *   the events whose id was claimed (or that have none) are stored.
 * - What is stored is appended to the environment's feed when it captures
 *   (services/feed/capture.ts says how capture orders and locks), by the same statement: the
 *   envelopes are sent once for both tables.
 * - And rolled up (services/analytics/rollups.ts), by the same statement again: only what was
 *   inserted, in the transaction that inserts it, so a rollup never counts an event twice or
 *   never.
 */
async function insertEvents(
  db: Db,
  environmentId: number,
  receivedAt: Date,
  events: readonly StoredEvent[],
  batchKey: string | null,
  rollups: boolean,
  /** Counters to move in the same statement, if the whole batch is stored (see inOneStatement). */
  counters: Map<number, Deltas> | null = null,
  /** The users' touches the batch adds (services/attribution/attribute.ts). */
  touches: readonly NewTouch[] = [],
): Promise<{ inserted: StoredEvent[]; captured: boolean }> {
  if (events.length === 0) return { inserted: [], captured: false };
  await lockCaptureOnCitus(db, environmentId, "share");
  const rows = await db<{ event_id: string; captured: boolean }[]>`
    with batch as (
      select event_id, client_id, type, name, occurred_at::timestamptz as occurred_at,
        link_id::int as link_id, body::text as body, ord
      from rows from (
        json_array_elements_text((${jsonColumn(events.map((s) => s.eventId))}::text)::json),
        json_array_elements_text((${
    jsonColumn(events.map((s) => s.event.id ?? null))
  }::text)::json),
        json_array_elements_text((${jsonColumn(events.map((s) => s.event.type))}::text)::json),
        json_array_elements_text((${
    jsonColumn(events.map((s) => storedName(s.event)))
  }::text)::json),
        json_array_elements_text(
          (${jsonColumn(events.map((s) => s.event.occurred_at.toISOString()))}::text)::json
        ),
        json_array_elements_text((${
    jsonColumn(events.map((s) => s.link?.id ?? null))
  }::text)::json),
        -- The envelopes as one JSON array of them, not of strings: nothing to escape here or
        -- unescape there, and a json (not jsonb) element's text is the envelope's own.
        json_array_elements((${`[${events.map((s) => s.body).join(",")}]`}::text)::json)
      ) with ordinality as t(event_id, client_id, type, name, occurred_at, link_id, body, ord)
    ), claimed as (
      insert into analytics_event_keys (environment_id, client_id, received_at)
      select ${environmentId}, client_id, ${receivedAt}::timestamptz
      from batch
      where client_id is not null
      -- Two batches with the same client ids in another order would wait on each other's key
      -- entries in a cycle (a deadlock); in one order they simply queue.
      order by client_id
      on conflict (environment_id, client_id) do nothing
      returning client_id
    ), batch_claimed as (
      -- The batch's own key, when it has one: kept like a client id, and nothing is stored
      -- when an earlier attempt already stored it.
      insert into analytics_event_keys (environment_id, client_id, received_at)
      select ${environmentId}, ${batchKey}::text, ${receivedAt}::timestamptz
      where ${batchKey}::text is not null
      on conflict (environment_id, client_id) do nothing
      returning client_id
    ), inserted as (
      insert into analytics_events (
        environment_id, event_id, client_id, type, name, occurred_at, received_at, link_id, body
      )
      select ${environmentId}, event_id, client_id, type, name, occurred_at, ${receivedAt},
        link_id, body
      from batch
      where (client_id is null or client_id in (select client_id from claimed))
        and (${batchKey}::text is null or exists (select 1 from batch_claimed))
      -- Events without an id keep the batch's order.
      order by client_id, ord
      returning event_id
    ), capturing as (
      ${capturingEnvironment(db, environmentId)}
    ), captured as (
      -- In the batch's order: seq follows it.
      insert into feed_events (environment_id, type, received_at, body, link_id)
      select capturing.id, b.type, ${receivedAt}, b.body, b.link_id
      from capturing cross join batch b
      where b.event_id in (select event_id from inserted)
      order by b.ord
    ), rolled as (
      ${rollups ? rollupInsertSql(db, environmentId, events.map((s) => s.event)) : db`select 1`}
    )${touchesInStatement(db, environmentId, touches)}${
    installsInStatement(db, environmentId, events)
  }${
    counters && counters.size > 0 ? db`, ${countersInStatement(db, environmentId, counters)}` : db``
  }
    select event_id, exists (select 1 from capturing) as captured from inserted
  `;
  const captured = rows[0]?.captured ?? false;
  if (rows.length === events.length) return { inserted: [...events], captured };
  const stored = new Set(rows.map((r) => r.event_id));
  return { inserted: events.filter((s) => stored.has(s.eventId)), captured };
}

/**
 * The CTE that stores the batch's touches (services/attribution/attribute.ts), of the events the
 * statement actually inserted: a duplicate's touch was stored with its first copy.
 */
function touchesInStatement(db: Db, environmentId: number, touches: readonly NewTouch[]) {
  if (touches.length === 0) return db``;
  const rows = touches.map((t) => ({
    event_id: t.eventId,
    user_id: t.userId,
    occurred_at: t.occurredAt.toISOString(),
    link_id: t.decision.link.id,
    click_id: t.decision.clickId ?? null,
    clicked_at: t.decision.clickedAt?.toISOString() ?? null,
  }));
  return db`, touched as (
    insert into attribution_touches (
      environment_id, user_id, occurred_at, event_id, link_id, click_id, clicked_at
    )
    select ${environmentId}, t.user_id, t.occurred_at, t.event_id, t.link_id, t.click_id,
      t.clicked_at
    from json_to_recordset((${JSON.stringify(rows)}::text)::json) as t(
      event_id text, user_id text, occurred_at timestamptz, link_id int, click_id text,
      clicked_at timestamptz
    )
    where t.event_id in (select event_id from inserted)
  )`;
}

/**
 * The CTE that stores the batch's attributed installs (the funnel's installs, and the seconds
 * from click to install when the attribution has a click; never below 0, as a device's clock may
 * run behind the link host's).
 */
function installsInStatement(db: Db, environmentId: number, events: readonly StoredEvent[]) {
  const rows = events.flatMap((s) =>
    s.event.type === "install" && s.decision
      ? [{
        event_id: s.eventId,
        occurred_at: s.event.occurred_at.toISOString(),
        link_id: s.decision.link.id,
        seconds: s.decision.clickedAt
          ? Math.max(
            0,
            Math.floor((s.event.occurred_at.getTime() - s.decision.clickedAt.getTime()) / 1000),
          )
          : null,
      }]
      : []
  );
  if (rows.length === 0) return db``;
  // Each also queued for its day (services/attribution/install_days.ts), with its bucket.
  return db`, installed as (
    insert into attributed_installs (environment_id, occurred_at, link_id, seconds, bucket)
    select ${environmentId}, t.occurred_at, t.link_id, t.seconds, ${db.unsafe(INSTALL_BUCKET)}
    from json_to_recordset((${JSON.stringify(rows)}::text)::json) as t(
      event_id text, occurred_at timestamptz, link_id int, seconds bigint
    )
    where t.event_id in (select event_id from inserted)
    returning occurred_at, bucket
  ), install_queued as (
    insert into attributed_install_queue (environment_id, occurred_at, bucket)
    select ${environmentId}, occurred_at, bucket from installed
  )`;
}

const INSTALL_BUCKET = bucketSql("t.seconds");

function storedName(e: NewEvent): string | null {
  return (e.type === "custom" || e.type === "purchase") && e.name != null ? e.name : null;
}

interface PurchaseVersionRow {
  transaction_id: string;
  name: string;
  version: number;
  amount: string;
  /** Upper case; null only on a version-0 record created by this batch. */
  currency: string | null;
  /** The amount in the reporting currency; null when no rate converted it. */
  converted: string | null;
  link_id: number | null;
  /** Where the version counts in the rollups; null when unknown (stored before them). */
  hour: Date | null;
  country: string | null;
  platform: string | null;
  os: string | null;
  rule: string | null;
  variant: number | null;
}

/**
 * Revenue counts, per (transaction_id, name), only the highest version seen: a correction
 * replaces the earlier amount (which may have been attributed to another link), and an older
 * version arriving late changes nothing. The first statement creates missing records as
 * version 0 and locks every record of the batch, in key order so that concurrent batches never
 * deadlock, returning the current values; the second writes the newer versions, with where
 * each counts in the rollups, and appends the rollup deltas (the new version's bucket gains a
 * purchase and its amount, the replaced one's loses them).
 */
async function applyPurchases(
  db: Db,
  environmentId: number,
  events: readonly StoredEvent[],
  deltas: Map<number, Deltas>,
): Promise<void> {
  const newest = new Map<
    string,
    {
      name: string;
      purchase: Purchase;
      linkId: number | null;
      userId: string | null;
      bucket: PurchaseBucket;
    }
  >();
  for (const { event, link } of events) {
    if (event.type !== "purchase" || !event.purchase || event.name == null) continue;
    const key = JSON.stringify([event.purchase.transaction_id, event.name]);
    const seen = newest.get(key);
    if (!seen || event.purchase.version > seen.purchase.version) {
      const linkId = link?.id ?? null;
      const bucket = {
        hour: utcHour(event.occurred_at),
        link_id: linkId,
        name: event.name,
        currency: event.purchase.currency.toUpperCase(),
        ...eventDimensions(event),
      };
      newest.set(key, {
        name: event.name,
        purchase: event.purchase,
        linkId,
        userId: attributedUserId(event),
        bucket,
      });
    }
  }
  if (newest.size === 0) return;
  const incoming = [...newest.values()].sort((a, b) =>
    compare(a.purchase.transaction_id, b.purchase.transaction_id) || compare(a.name, b.name)
  );
  // The rates are read (under the conversion lock, services/fx/rates.ts) in statements sent
  // with the first one: no round trip of their own.
  const [{ reporting, rates }, current] = await Promise.all([
    ingestionRates(
      db,
      environmentId,
      incoming.map((p) => ({ currency: p.bucket.currency, day: utcDay(p.bucket.hour) })),
    ),
    db<PurchaseVersionRow[]>`
    insert into purchase_versions (environment_id, transaction_id, name, version, amount)
    select ${environmentId}, transaction_id, name, 0, 0
    from unnest(
      ${incoming.map((p) => p.purchase.transaction_id)}::text[],
      ${incoming.map((p) => p.name)}::text[]
    ) with ordinality as t(transaction_id, name, ord)
    order by ord
    on conflict (environment_id, transaction_id, name)
      do update set version = purchase_versions.version
    returning transaction_id, name, version, amount, currency, converted::text, link_id, hour,
      country, platform, os, rule, variant
  `,
  ]);
  const byKey = new Map(current.map((r) => [JSON.stringify([r.transaction_id, r.name]), r]));
  const rollups: PurchaseDelta[] = [];
  const converted = new Map<string, bigint | null>();
  const newer = incoming.filter((p) => {
    const id = JSON.stringify([p.purchase.transaction_id, p.name]);
    const old = byKey.get(id);
    if (!old || p.purchase.version <= old.version) return false;
    const oldConverted = old.converted === null ? null : Number(old.converted);
    if (old.link_id !== null && old.version > 0 && oldConverted !== null) {
      addRevenue(deltas, old.link_id, -oldConverted);
    }
    const next = convertWith(
      rates,
      p.purchase.amount,
      p.bucket.currency,
      reporting,
      utcDay(p.bucket.hour),
    );
    converted.set(id, next);
    if (p.linkId !== null && next !== null) addRevenue(deltas, p.linkId, Number(next));
    if (old.version > 0 && old.hour !== null) {
      rollups.push({
        bucket: { ...old, hour: old.hour, name: p.name, currency: old.currency ?? reporting },
        purchases: oldConverted === null ? 0 : -1,
        revenue: -(oldConverted ?? 0),
        amount: -Number(old.amount),
        unconverted: oldConverted === null ? -1 : 0,
      });
    }
    rollups.push({
      bucket: p.bucket,
      purchases: next === null ? 0 : 1,
      revenue: next === null ? 0 : Number(next),
      amount: p.purchase.amount,
      unconverted: next === null ? 1 : 0,
    });
    return true;
  });
  if (newer.length === 0) return;
  const col = <T>(f: (p: (typeof newer)[number]) => T) => newer.map(f);
  await db`
    with updated as (
      update purchase_versions p
      set version = u.version, amount = u.amount, link_id = u.link_id, hour = u.hour,
        country = u.country, platform = u.platform, os = u.os, rule = u.rule, variant = u.variant,
        currency = u.currency, converted = u.converted, user_id = u.user_id
      from unnest(
        ${col((p) => p.purchase.transaction_id)}::text[],
        ${col((p) => p.name)}::text[],
        ${col((p) => p.purchase.version)}::int[],
        ${col((p) => p.purchase.amount)}::bigint[],
        ${col((p) => p.linkId)}::int[],
        ${col((p) => p.bucket.hour.toISOString())}::timestamptz[],
        ${col((p) => p.bucket.country)}::text[],
        ${col((p) => p.bucket.platform)}::text[],
        ${col((p) => p.bucket.os)}::text[],
        ${col((p) => p.bucket.rule)}::text[],
        ${col((p) => p.bucket.variant)}::smallint[],
        ${col((p) => p.bucket.currency)}::text[],
        ${
    col((p) =>
      converted.get(JSON.stringify([p.purchase.transaction_id, p.name]))?.toString() ?? null
    )
  }::bigint[],
        ${col((p) => p.userId)}::text[]
      ) as u(transaction_id, name, version, amount, link_id, hour, country, platform, os, rule,
        variant, currency, converted, user_id)
      where p.environment_id = ${environmentId}
        and p.transaction_id = u.transaction_id and p.name = u.name
    )
    ${purchaseRollupRows(db, environmentId, rollups)}
  `;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The partitioned table of the analytics history (services/maintenance/partitions.ts). */
export const ANALYTICS_EVENTS_TABLE = "analytics_events";

/**
 * Deletes up to `batch` analytics events received before `cutoff` from the default partition;
 * the rows of a day partition go with their whole day (dropPartitionsBefore).
 * services/feed/retention.ts decides when (one job and one lock govern every purge); this
 * module owns the tables.
 */
export function deleteAnalyticsEventsBefore(db: Db, cutoff: Date, batch: number): Promise<number> {
  return deleteDefaultRowsBefore(db, ANALYTICS_EVENTS_TABLE, cutoff, batch);
}

/**
 * Deletes up to `batch` client ids received before `cutoff`: an id is a duplicate for as long
 * as the history keeps events, and may be sent again once they are gone.
 */
export async function deleteAnalyticsKeysBefore(
  db: Db,
  cutoff: Date,
  batch: number,
): Promise<number> {
  if (onCitus()) {
    // Citus plans no distributed DELETE by ctid: every expired key at once there, each shard's
    // in one statement on its worker.
    const rows = await db`delete from analytics_event_keys where received_at < ${cutoff}`;
    return rows.count;
  }
  // By ctid, as keys are never updated: matching on the key columns hashed the whole table.
  const rows = await db`
    delete from analytics_event_keys
    where ctid = any(array(
      select ctid from analytics_event_keys where received_at < ${cutoff} limit ${batch}
    ))
  `;
  return rows.count;
}
