// Push destinations, as the instance admin manages them. Delivery itself is services/destinations/delivery.ts.
import { onCitus } from "../../db/cluster.ts";
import type { Db, Sql } from "../../db/connect.ts";
import { type AuditContext, recordAudit } from "../access/audit.ts";
import {
  type MadeBy,
  madeBy,
  madeByColumns,
  type MadeByRow,
  makerColumnsOf,
  makerDetail,
} from "../access/makers.ts";
import type { Clock } from "../../infra/clock.ts";
import { assertDestinationUrl } from "./url.ts";
import { newWebhookSecret, openSecret, sealSecret } from "./secret.ts";
import { notFound } from "../errors.ts";
import { lockCaptureOnCitus, startCapture, stopCaptureIfIdle } from "../feed/capture.ts";
import { feedRetentionCutoff } from "../feed/retention.ts";
import { getEnvironmentOrThrow } from "../projects/projects.ts";
import { type PostResult, postWebhook } from "./webhook_post.ts";
import { newMessageId, webhookHeaders } from "./webhook_sign.ts";

/** How long the replaced secret still signs after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** A destination without a success for this long (since its first failure) is `failing`. */
export const FAILING_AFTER_MS = 60 * 60 * 1000;
/** Success is a 2xx within this time. */
export const DELIVERY_TIMEOUT_MS = 10_000;

export interface DestinationDeps {
  clock: Clock;
  /** The instance secret that seals destination secrets (see destination_secret.ts). */
  cursorSecret: string;
  allowPrivate: boolean;
}

export type DestinationState = "active" | "paused" | "failing";

export interface DestinationStatus extends MadeBy {
  id: number;
  url: string;
  event_types: string[];
  state: DestinationState;
  created_at: string;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  /** Matching events within the feed's seven days not yet delivered. */
  pending: number;
  /** Matching events that left the seven days before they could be delivered. */
  dropped: number;
}

interface StatusRow extends MadeByRow {
  id: number;
  url: string;
  event_types: string[];
  state: DestinationState;
  created_at: Date;
  last_attempt_at: Date | null;
  last_success_at: Date | null;
  last_error: string | null;
  pending: number;
  dropped: string;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

function toStatus(r: StatusRow): DestinationStatus {
  return {
    ...madeBy(r),
    id: r.id,
    url: r.url,
    event_types: r.event_types,
    state: r.state,
    created_at: r.created_at.toISOString(),
    last_attempt_at: iso(r.last_attempt_at),
    last_success_at: iso(r.last_success_at),
    last_error: r.last_error,
    pending: r.pending,
    dropped: Number(r.dropped),
  };
}

/** A destination id as written in a path, or null. */
function parseId(raw: string): number | null {
  return /^[1-9][0-9]{0,8}$/.test(raw) ? Number(raw) : null;
}

/**
 * Registers a destination; like a feed token, it starts the environment's capture. It starts
 * after the last event captured so far: the environment row is locked by startCapture, so no
 * capture can commit between reading that position and this transaction's commit.
 */
export async function createDestination(
  sql: Sql,
  deps: DestinationDeps,
  projectId: string,
  input: { url: string; eventTypes: string[] },
  audit: AuditContext,
): Promise<DestinationStatus & { secret: string }> {
  // Parameters first, then the project (404), then the address, which may take a DNS lookup.
  await getEnvironmentOrThrow(sql, projectId);
  await assertDestinationUrl(input.url, deps.allowPrivate);
  const secret = newWebhookSecret();
  const sealed = sealSecret(deps.cursorSecret, secret);
  const id = await sql.begin(async (tx) => {
    const env = await getEnvironmentOrThrow(tx, projectId);
    const now = deps.clock.now();
    await startCapture(tx, env.id, now);
    // It starts at the feed's horizon (services/feed/feed.ts): after every event already final,
    // before every event still to commit. Read on its own, where the environment's feed is
    // written (on Citus a worker: feed_horizon(integer), migration 00018), not in the INSERT,
    // whose functions Citus evaluates on the coordinator.
    const [h] = await tx<{ x: string }[]>`select feed_horizon(${env.id}::int) as x`;
    const maker = makerColumnsOf(audit);
    const [row] = await tx<{ id: number }[]>`
      insert into destinations (environment_id, url, event_types, secret_sealed, created_at,
        cursor_xid, cursor_seq, created_by_account_id, owner_type, made_by_type, made_by_id,
        made_by_name)
      values (${env.id}, ${input.url}, ${input.eventTypes}::text[], ${sealed}, ${now},
        ${h!.x}::bigint, 0, ${maker.created_by_account_id}, ${maker.owner_type},
        ${maker.made_by_type}, ${maker.made_by_id}, ${maker.made_by_name})
      returning id
    `;
    await recordAudit(tx, audit, {
      action: "destination.create",
      project: { environmentId: env.id },
      target: { type: "destination", id: row!.id },
      detail: makerDetail(maker),
    });
    return row!.id;
  });
  const [status] = await selectStatuses(sql, deps.clock.now(), { id });
  return { ...status!, secret };
}

export async function listDestinations(
  sql: Sql,
  clock: Clock,
  projectId: string,
): Promise<DestinationStatus[]> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  return await selectStatuses(sql, clock.now(), { environmentId: env.id });
}

async function getStatusOrThrow(
  db: Db,
  now: Date,
  environmentId: number,
  id: number | null,
): Promise<DestinationStatus> {
  const [status] = id === null ? [] : await selectStatuses(db, now, { id, environmentId });
  if (!status) throw notFound("destination");
  return status;
}

async function selectStatuses(
  db: Db,
  now: Date,
  where: { id?: number; environmentId?: number },
): Promise<DestinationStatus[]> {
  const cutoff = feedRetentionCutoff(now);
  const failingBefore = new Date(now.getTime() - FAILING_AFTER_MS);
  if (onCitus()) return await selectStatusesOnCitus(db, cutoff, failingBefore, where);
  const rows = await db<StatusRow[]>`
    select d.id, d.url, d.event_types, d.created_at, d.last_attempt_at, d.last_success_at,
      d.last_error, d.dropped::text as dropped, ${madeByColumns(db, "d")},
      case when d.paused then 'paused'
        when d.failing_since <= ${failingBefore} then 'failing'
        else 'active' end as state,
      (select count(*)::int from feed_events f
        where f.environment_id = d.environment_id
          and (f.xid, f.seq) > (d.cursor_xid, d.cursor_seq)
          and f.received_at >= ${cutoff}
          and (cardinality(d.event_types) = 0 or f.type = any(d.event_types))) as pending
    from destinations d
    where (${where.id ?? null}::int is null or d.id = ${where.id ?? null})
      and (${where.environmentId ?? null}::int is null
        or d.environment_id = ${where.environmentId ?? null})
    order by d.id
  `;
  return rows.map(toStatus);
}

/**
 * selectStatuses on Citus, which runs no subquery over the distributed feed correlated with a
 * reference table (destinations): the destinations first, then each one's pending count in a
 * query of its own, routed to the worker holding its environment's feed.
 */
async function selectStatusesOnCitus(
  db: Db,
  cutoff: Date,
  failingBefore: Date,
  where: { id?: number; environmentId?: number },
): Promise<DestinationStatus[]> {
  const rows = await db<
    (StatusRow & { environment_id: number; cursor_xid: string; cursor_seq: string })[]
  >`
    select d.id, d.environment_id, d.url, d.event_types, d.created_at, d.last_attempt_at,
      d.last_success_at, d.last_error, d.dropped::text as dropped, ${madeByColumns(db, "d")},
      case when d.paused then 'paused'
        when d.failing_since <= ${failingBefore} then 'failing'
        else 'active' end as state,
      d.cursor_xid::text as cursor_xid, d.cursor_seq::text as cursor_seq
    from destinations d
    where (${where.id ?? null}::int is null or d.id = ${where.id ?? null})
      and (${where.environmentId ?? null}::int is null
        or d.environment_id = ${where.environmentId ?? null})
    order by d.id
  `;
  for (const d of rows) {
    const [row] = await db<{ pending: number }[]>`
      select count(*)::int as pending from feed_events f
      where f.environment_id = ${d.environment_id}
        and (f.xid, f.seq) > (${d.cursor_xid}::bigint, ${d.cursor_seq}::bigint)
        and f.received_at >= ${cutoff}
        and (cardinality(${d.event_types}::text[]) = 0 or f.type = any(${d.event_types}::text[]))
    `;
    d.pending = row!.pending;
  }
  return rows.map(toStatus);
}

/** Pauses (keeping the destination's place in the feed) or resumes it, at once. */
export async function setDestinationPaused(
  sql: Sql,
  clock: Clock,
  projectId: string,
  destinationId: string,
  paused: boolean,
  audit: AuditContext,
): Promise<DestinationStatus> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  const id = parseId(destinationId);
  await sql.begin(async (tx) => {
    // Resuming clears the wait of a pending retry: the admin asked for delivery now.
    const [row] = id === null ? [] : await tx`
      update destinations set paused = ${paused},
        next_attempt_at = case when ${paused} then next_attempt_at else null end
      where id = ${id} and environment_id = ${env.id}
      returning id
    `;
    if (!row) throw notFound("destination");
    await recordAudit(tx, audit, {
      action: paused ? "destination.pause" : "destination.resume",
      project: { environmentId: env.id },
      target: { type: "destination", id: id! },
    });
  });
  return await getStatusOrThrow(sql, clock.now(), env.id, id);
}

/**
 * Pauses, in the caller's transaction, every destination that belongs to the account (made by
 * them or by a key of theirs) and is not paused yet, one audit entry each: deliveries stop at
 * once and each keeps its place in the feed, so a project admin can resume the ones the team
 * still needs. Returns how many.
 */
export async function pauseDestinationsOf(
  tx: Db,
  accountId: number,
  audit: AuditContext,
): Promise<number> {
  const rows = await tx<{ id: number; environment_id: number }[]>`
    update destinations set paused = true
    where created_by_account_id = ${accountId} and not paused
    returning id, environment_id
  `;
  for (const row of rows.sort((a, b) => a.id - b.id)) {
    await recordAudit(tx, audit, {
      action: "destination.pause",
      project: { environmentId: row.environment_id },
      target: { type: "destination", id: row.id },
    });
  }
  return rows.length;
}

/** A new secret; the replaced one keeps signing, beside it, for ROTATION_OVERLAP_MS. */
export async function rotateDestinationSecret(
  sql: Sql,
  deps: DestinationDeps,
  projectId: string,
  destinationId: string,
  audit: AuditContext,
): Promise<string> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  const id = parseId(destinationId);
  const secret = newWebhookSecret();
  const until = new Date(deps.clock.now().getTime() + ROTATION_OVERLAP_MS);
  await sql.begin(async (tx) => {
    const [row] = id === null ? [] : await tx`
      update destinations set
        previous_secret_sealed = secret_sealed,
        previous_secret_expires_at = ${until},
        secret_sealed = ${sealSecret(deps.cursorSecret, secret)}
      where id = ${id} and environment_id = ${env.id}
      returning id
    `;
    if (!row) throw notFound("destination");
    await recordAudit(tx, audit, {
      action: "destination.rotate_secret",
      project: { environmentId: env.id },
      target: { type: "destination", id: id! },
    });
  });
  return secret;
}

export interface SecretsRow {
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

/** The secrets that sign at `now`: the current one, and the replaced one during its overlap. */
export function signingSecrets(cursorSecret: string, row: SecretsRow, now: Date): string[] {
  const secrets = [openSecret(cursorSecret, row.secret_sealed)];
  if (
    row.previous_secret_sealed && row.previous_secret_expires_at &&
    row.previous_secret_expires_at > now
  ) {
    secrets.push(openSecret(cursorSecret, row.previous_secret_sealed));
  }
  return secrets;
}

/** One signed delivery with no events and `"test": true`, now; the destination's state is untouched. */
export async function testDestination(
  sql: Sql,
  deps: DestinationDeps,
  projectId: string,
  destinationId: string,
): Promise<PostResult> {
  const env = await getEnvironmentOrThrow(sql, projectId);
  const id = parseId(destinationId);
  const [row] = id === null ? [] : await sql<(SecretsRow & { url: string })[]>`
    select url, secret_sealed, previous_secret_sealed, previous_secret_expires_at
    from destinations where id = ${id} and environment_id = ${env.id}
  `;
  if (!row) throw notFound("destination");
  const now = deps.clock.now();
  const body = `{"schema_version":1,"events":[],"test":true}`;
  const headers = webhookHeaders(
    signingSecrets(deps.cursorSecret, row, now),
    newMessageId(),
    now,
    body,
  );
  return await postWebhook(row.url, headers, body, {
    allowPrivate: deps.allowPrivate,
    timeoutMs: DELIVERY_TIMEOUT_MS,
  });
}

export function deleteDestination(
  sql: Sql,
  projectId: string,
  destinationId: string,
  audit: AuditContext,
): Promise<void> {
  return sql.begin(async (tx) => {
    const env = await getEnvironmentOrThrow(tx, projectId);
    const id = parseId(destinationId);
    // Capture's lock before the write, as revokeFeedToken (services/feed/tokens.ts) says why.
    await lockCaptureOnCitus(tx, env.id, "exclusive");
    const [row] = id === null ? [] : await tx`
      delete from destinations where id = ${id} and environment_id = ${env.id}
      returning id
    `;
    if (!row) throw notFound("destination");
    await stopCaptureIfIdle(tx, env.id);
    await recordAudit(tx, audit, {
      action: "destination.delete",
      project: { environmentId: env.id },
      target: { type: "destination", id: id! },
    });
  });
}
