// The deliverer: pushes each destination's matching captured events to it, in arrival order,
// at least once. Every instance runs one; a lease in PostgreSQL lets one instance at a time
// deliver a given destination.
//
// What a process that dies mid-way leaves behind, and why nothing is skipped:
// - The destination's place (`cursor_xid`, `cursor_seq`) moves only after the receiver answered 2xx, in one
//   UPDATE, and only forward (greatest()). A process killed before that update leaves the
//   cursor where it was: the batch is sent again (same webhook-id, same events) by whichever
//   instance takes the destination next. A batch can be delivered twice, never skipped.
// - The batch in flight is recorded (`batch_id`, `batch_last_*`) before it is sent, so a
//   retry after a crash sends the same id and events.
// - The lease (`lease_owner`, `lease_expires_at`) is renewed before every attempt for LEASE_MS,
//   longer than an attempt can take (DELIVERY_TIMEOUT_MS); a dead instance's lease lapses at
//   most LEASE_MS later and the next poll of another instance takes the destination.
// - Events that leave the feed's seven days while pending are counted in `dropped` and logged
//   (accountDrops, called before each batch and by the retention purge before it deletes), in
//   the same transaction that moves the cursor past them: counted once, never silently skipped.
// - The receiver connection kept alive between a destination's batches (ReceiverConnections)
//   holds no state of the delivery: a process that dies closes it, and the batch it carried is
//   sent again as above. A batch resent on a new connection, because the receiver closed the
//   kept one before answering, may arrive twice (same webhook-id), never not at all.
// - A batch's success and the next batch are recorded without waiting for the disk (`records`,
//   DeliveryDeps): a crash of PostgreSQL itself, not of this process, can undo the last of
//   those records, which sends the batches they recorded again, never skips one.
import type { Config } from "../../config.ts";
import { onCitus } from "../../db/cluster.ts";
import type { Db, Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { accountDrops, logDrops } from "./drops.ts";
import { isUnsealed, sealSecret } from "./secret.ts";
import { DELIVERY_TIMEOUT_MS, type SecretsRow, signingSecrets } from "./destinations.ts";
import {
  type EnvironmentPage,
  HORIZON_WAIT_MS,
  planUnfilteredPageOnce,
  selectEnvironmentPage,
  waitForHorizon,
} from "../feed/feed.ts";
import { comparePoints, type FeedPoint } from "../feed/cursor.ts";
import { FEED_SCHEMA_VERSION } from "../feed/envelope.ts";
import { feedRetentionCutoff } from "../feed/retention.ts";
import type { FeedWakeup } from "../feed/wakeup.ts";
import { describeError, type Logger } from "../../infra/log.ts";
import { type PostResult, postWebhook } from "./webhook_post.ts";
import { ReceiverConnections } from "./receiver_connections.ts";
import { newMessageId, webhookHeaders } from "./webhook_sign.ts";
import { countDelivered, countFailedAttempt } from "../monitoring/metrics.ts";

export const MAX_BATCH_EVENTS = 100;
/**
 * Events read at a time while batches are sent: four batches' worth, so one read (its drop
 * accounting, its transaction) serves four batches. A destination holds at most two reads'
 * events (the one being sent from, the one after it).
 */
export const READ_AHEAD_EVENTS = 4 * MAX_BATCH_EVENTS;
/** Lease length: an attempt (at most DELIVERY_TIMEOUT_MS) always ends well within it. */
export const LEASE_MS = 20_000;
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 10 * 60_000;

export interface DeliveryDeps {
  sql: Sql;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, "destinationsAllowPrivate">;
  cursorSecret: string;
  /**
   * Where a delivered batch's success and the next batch are recorded (#planNext): a pool whose
   * commits do not wait for their WAL to reach disk (`synchronous_commit = off`, main.ts), so
   * that the next batch is sent one disk flush sooner. Defaults to `sql`. What it can lose: only
   * a crash of PostgreSQL itself (not of an instance, not a shutdown of PostgreSQL) can undo the
   * last fraction of a second of such records, and then the batches they recorded as delivered
   * are sent again (at least once), the last one possibly under a new webhook-id with the same
   * events first; nothing is skipped, because a record that survives a crash is never newer than
   * one that was lost. Claims, drops and failures stay on `sql` with durable commits, so the
   * lease (one batch in flight) never rests on a record that can be lost.
   */
  records?: Sql;
}

export interface DeliveryOptions {
  /** This instance's lease name; random by default. */
  instanceId?: string;
  /** Pause between polls for due work (wake-ups come sooner). */
  pollMs?: number;
  leaseMs?: number;
  timeoutMs?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** Destinations delivered at once by this instance. */
  concurrency?: number;
  wakeup?: FeedWakeup | null;
  /** [0, 1): the jitter's source. */
  random?: () => number;
}

interface Claimed extends SecretsRow {
  id: number;
  environment_id: number;
  url: string;
  event_types: string[];
  cursor_xid: string;
  cursor_seq: string;
}

/** A batch the receiver accepted, still to be recorded (see #run). */
interface Delivered {
  plan: Plan;
  /** When the attempt started, and when its answer came. */
  at: Date;
  now: Date;
  status: number | null;
  durationMs: number;
  /** The page after the batch, read while it was sent (#prefetch). */
  next?: Promise<Prefetched | null>;
}

/** Events read ahead (#prefetch), not yet in a batch: the page, less the batches taken from it. */
interface Prefetched {
  page: EnvironmentPage;
}

interface Plan {
  batchId: string;
  /** The place the batch covers the feed up to (events of other types included). */
  last: FeedPoint;
  events: { body: string }[];
  attempts: number;
}

/**
 * The delay before retry n (1-based): full jitter, uniform in [0, min(cap, base·2^(n-1))),
 * and never sooner than the receiver's Retry-After.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterMs: number | null,
  options: { baseMs: number; capMs: number; random: () => number },
): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.min(attempt - 1, 30));
  const jittered = Math.floor(options.random() * ceiling);
  // A Retry-After beyond the feed's retention would only turn into drops: seven days at most.
  const floor = Math.min(retryAfterMs ?? 0, 7 * 24 * 3600_000);
  return Math.max(jittered, floor);
}

/** Seals the secrets a migration generated (see 00004), once, on whichever instance starts. */
export async function sealMigratedSecrets(sql: Sql, cursorSecret: string): Promise<void> {
  const rows = await sql<{ id: number; secret_sealed: string }[]>`
    select id, secret_sealed from destinations where secret_sealed like 'plain:%'
  `;
  for (const row of rows) {
    if (!isUnsealed(row.secret_sealed)) continue;
    const sealed = sealSecret(cursorSecret, row.secret_sealed.slice("plain:".length));
    await sql`
      update destinations set secret_sealed = ${sealed}
      where id = ${row.id} and secret_sealed = ${row.secret_sealed}
    `;
  }
}

/** SET clauses moving a destination's place forward to `to`, never back. */
function advanceCursor(db: Db, to: FeedPoint) {
  // Both right-hand sides see the row as it was, so they compare the same old pair.
  return db`
    cursor_xid = case when (${to.xid}::bigint, ${to.seq}::bigint) > (cursor_xid, cursor_seq)
      then ${to.xid}::bigint else cursor_xid end,
    cursor_seq = case when (${to.xid}::bigint, ${to.seq}::bigint) > (cursor_xid, cursor_seq)
      then ${to.seq}::bigint else cursor_seq end
  `;
}

export class DeliveryWorker {
  readonly instanceId: string;
  #deps: DeliveryDeps;
  #pollMs: number;
  #leaseMs: number;
  #timeoutMs: number;
  #backoff: { baseMs: number; capMs: number; random: () => number };
  #concurrency: number;
  #wakeup: FeedWakeup | null;
  #active = new Map<number, Promise<void>>();
  /** Each destination's receiver connection, kept between its batches. */
  #connections = new ReceiverConnections();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #unsubscribe: (() => void) | undefined;
  #ticking: Promise<void> | null = null;
  #again = false;
  #stopped = false;

  constructor(deps: DeliveryDeps, options: DeliveryOptions = {}) {
    this.#deps = deps;
    // The pid in the name lets an operator (and the takeover test) see which process holds a lease.
    this.instanceId = options.instanceId ??
      `pid${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`;
    this.#pollMs = options.pollMs ?? 1_000;
    this.#leaseMs = options.leaseMs ?? LEASE_MS;
    this.#timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.#backoff = {
      baseMs: options.backoffBaseMs ?? BACKOFF_BASE_MS,
      capMs: options.backoffCapMs ?? BACKOFF_CAP_MS,
      random: options.random ?? Math.random,
    };
    this.#concurrency = options.concurrency ?? 8;
    this.#wakeup = options.wakeup ?? null;
  }

  /** Polls every pollMs, and at once on a capture notification. */
  start(): void {
    this.#unsubscribe = this.#wakeup?.subscribe("*", () => this.wake());
    const loop = () => {
      if (this.#stopped) return;
      this.wake();
      this.#timer = setTimeout(loop, this.#pollMs);
      Deno.unrefTimer(this.#timer);
    };
    loop();
  }

  /** Stops claiming; waits for the attempts in flight, then gives their leases up. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#unsubscribe?.();
    await this.#ticking;
    await Promise.all(this.#active.values());
    this.#connections.closeIdle();
    await this.#deps.sql`
      update destinations set lease_owner = null, lease_expires_at = null
      where lease_owner = ${this.instanceId}
    `.catch(() => {});
  }

  /** Runs a claim pass now (or right after the one running). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#ticking = (async () => {
      do {
        this.#again = false;
        try {
          await this.#claimAndRun();
        } catch (err) {
          this.#deps.logger.warn("delivery poll failed", describeError(err));
        }
      } while (this.#again && !this.#stopped);
      this.#ticking = null;
    })();
  }

  /**
   * For tests and tools: claim and deliver until nothing is due, then return. Destinations
   * waiting for a retry are not waited for.
   */
  async drain(): Promise<void> {
    for (;;) {
      const claimed = await this.#claimAndRun();
      await Promise.all(this.#active.values());
      if (claimed === 0) return this.#connections.closeIdle();
    }
  }

  /**
   * The claim on Citus, which takes no row lock on a reference table (destinations) in a query
   * over the distributed feed: the due destinations first, each one's pending events checked by
   * a query routed to its feed's worker, then each claimed by an UPDATE that re-checks the lease
   * (concurrent instances queue on the row, and the second finds it taken).
   */
  async #claimOnCitus(
    room: number,
    now: Date,
    leaseUntil: Date,
    active: number[],
  ): Promise<Claimed[]> {
    const sql = this.#deps.sql;
    const due = await sql<
      {
        id: number;
        environment_id: number;
        cursor_xid: string;
        cursor_seq: string;
        sending: boolean;
      }[]
    >`
      select id, environment_id, cursor_xid::text, cursor_seq::text,
        batch_id is not null as sending
      from destinations
      where not paused
        and (next_attempt_at is null or next_attempt_at <= ${now})
        and (lease_owner is null or lease_owner = ${this.instanceId} or lease_expires_at <= ${now})
        and id <> all(${active}::int[])
      order by next_attempt_at nulls first, id
    `;
    const claimed: Claimed[] = [];
    for (const d of due) {
      if (claimed.length >= room) break;
      if (!d.sending) {
        const [pending] = await sql`
          select 1 from feed_events
          where environment_id = ${d.environment_id}
            and (xid, seq) > (${d.cursor_xid}::bigint, ${d.cursor_seq}::bigint)
          limit 1
        `;
        if (!pending) continue;
      }
      const [row] = await sql<Claimed[]>`
        update destinations set lease_owner = ${this.instanceId}, lease_expires_at = ${leaseUntil}
        where id = ${d.id} and not paused
          and (lease_owner is null or lease_owner = ${this.instanceId}
            or lease_expires_at <= ${now})
        returning id, environment_id, url, event_types, secret_sealed, previous_secret_sealed,
          previous_secret_expires_at, cursor_xid::text, cursor_seq::text
      `;
      if (row) claimed.push(row);
    }
    return claimed;
  }

  async #claimAndRun(): Promise<number> {
    const room = this.#concurrency - this.#active.size;
    if (room <= 0 || this.#stopped) return 0;
    const now = this.#deps.clock.now();
    const leaseUntil = new Date(now.getTime() + this.#leaseMs);
    const active = [...this.#active.keys()];
    // Due: not paused, something to send, no retry waiting, and no other live lease.
    // SKIP LOCKED: instances polling at once claim different destinations.
    const claimed = onCitus()
      ? await this.#claimOnCitus(room, now, leaseUntil, active)
      : await this.#deps.sql<Claimed[]>`
      update destinations d set lease_owner = ${this.instanceId}, lease_expires_at = ${leaseUntil}
      from (
        select d2.id from destinations d2
        where not d2.paused
          and (d2.batch_id is not null or exists (
            select 1 from feed_events f
            where f.environment_id = d2.environment_id
              and (f.xid, f.seq) > (d2.cursor_xid, d2.cursor_seq)
          ))
          and (d2.next_attempt_at is null or d2.next_attempt_at <= ${now})
          and (d2.lease_owner is null or d2.lease_owner = ${this.instanceId}
            or d2.lease_expires_at <= ${now})
          and d2.id <> all(${active}::int[])
        order by d2.next_attempt_at nulls first, d2.id
        limit ${room}
        for update of d2 skip locked
      ) due
      where d.id = due.id
      returning d.id, d.environment_id, d.url, d.event_types, d.secret_sealed,
        d.previous_secret_sealed, d.previous_secret_expires_at, d.cursor_xid::text,
        d.cursor_seq::text
    `;
    for (const dest of claimed) {
      const run = this.#run(dest)
        .catch((err) => {
          this.#deps.logger.warn("delivery failed", {
            destination_id: dest.id,
            ...describeError(err),
          });
        })
        .finally(() => {
          this.#active.delete(dest.id);
          // Whatever is pending next (more batches, other destinations) is taken at once.
          this.wake();
        });
      this.#active.set(dest.id, run);
    }
    return claimed.length;
  }

  /**
   * Delivers batches to one claimed destination while there are any and they succeed.
   *
   * The events after batch n are read while it is sent (with the drops accounted first, in the
   * same transaction, as before every read), up to four batches' worth at a time; the read after
   * those starts as soon as the first batch is taken from them, so a read has three batches'
   * time to end: one read in flight at most, one read's events waiting. Once the receiver
   * accepts n, one statement records that success and batch n+1 from those events (and renews
   * the lease), and n+1 is sent; one batch is still in flight at a time. That statement applies
   * only if nothing changed the destination meanwhile (its batch is still n: drop accounting,
   * the retention purge or a takeover would have cleared it, and it is not paused); otherwise,
   * and when a read found drops or nothing to send, the events read ahead are set aside and the
   * success is recorded in the transaction that plans the next batch (#plan), which reads from
   * the destination's row again. A success not recorded when the loop stops is recorded on the
   * way out; a failure to record one means the batch is sent again (at least once), never
   * skipped.
   */
  async #run(dest: Claimed): Promise<void> {
    let delivered: Delivered | null = null;
    let cursor: FeedPoint = { xid: dest.cursor_xid, seq: dest.cursor_seq };
    let plan: Plan | { pendingXid: string } | null = null;
    /** The events after the last batch planned: read, or being read. */
    let after: Promise<Prefetched | null> | null = null;
    /** The read after those, when they are already read. */
    let ahead: Promise<Prefetched | null> | null = null;
    const read = (from: FeedPoint) => {
      const reading = this.#prefetch(dest, from);
      // Marked handled at once: when #attempt throws (a dropped connection while it records a
      // failure), nothing awaits a read any more, and its rejection must not be an unhandled
      // one, which ends the process. Whoever awaits it below still sees its failure.
      reading.catch(() => {});
      return reading;
    };
    try {
      while (!this.#stopped) {
        const pending = delivered;
        delivered = null;
        const next = pending && await this.#planNext(dest, pending);
        if (next) {
          plan = next.plan;
          // The events left of that read follow the new batch, and the read after them starts
          // now; or, when it took the read's last events, the read already made comes next.
          if (next.rest) {
            after = Promise.resolve(next.rest);
            if (next.rest.page.hasMore) ahead ??= read(next.rest.page.events.at(-1)!);
          } else [after, ahead] = [ahead, null];
        } else {
          // Planned from the row: what was read ahead starts from a place that may be stale.
          await Promise.all([after?.catch(() => {}), ahead?.catch(() => {})]);
          after = ahead = null;
          plan = await this.#plan(dest, cursor, pending);
        }
        if (!plan) return;
        if ("pendingXid" in plan) {
          // Committed events wait behind an older transaction still running (services/feed/feed.ts).
          // Waited for here, outside the plan's transaction, whose own id would hold them back.
          if (
            await waitForHorizon(
              this.#deps.sql,
              dest.environment_id,
              plan.pendingXid,
              HORIZON_WAIT_MS,
            )
          ) continue;
          await this.#deps.sql`
            update destinations set lease_owner = null, lease_expires_at = null
            where id = ${dest.id} and lease_owner = ${this.instanceId}
          `;
          return;
        }
        after ??= read(plan.last);
        delivered = await this.#attempt(dest, plan);
        if (!delivered) return;
        delivered.next = after;
        cursor = plan.last;
      }
    } finally {
      await Promise.all([after?.catch(() => {}), ahead?.catch(() => {})]);
      if (delivered) await this.#recordSuccess(this.#deps.sql, dest, delivered);
    }
  }

  /**
   * The events after `after`, read while the batch before them is sent: drops accounted first
   * (in the same transaction). null when there were drops (they moved the destination and ended
   * its batch) or nothing to send yet: #plan then takes over.
   */
  #prefetch(dest: Claimed, after: FeedPoint): Promise<Prefetched | null> {
    const now = this.#deps.clock.now();
    return this.#deps.sql.begin(async (tx) => {
      // Each sent as it is made, so they run in this order (the plan settings before the page).
      const [drops, , page] = await Promise.all([
        accountDrops(tx, feedRetentionCutoff(now), dest.id),
        planUnfilteredPageOnce(tx, dest.event_types)?.execute(),
        selectEnvironmentPage(
          tx,
          dest.environment_id,
          {
            after,
            eventTypes: dest.event_types,
            limit: READ_AHEAD_EVENTS,
          },
          now,
          true,
        ),
      ]);
      logDrops(this.#deps.logger, drops);
      if (drops.length > 0 || page.events.length === 0) return null;
      return { page };
    });
  }

  /**
   * Batch n+1 from the events read while n was sent, recorded in the statement that records n's
   * success (see #run), and the events read that are left for the batches after it. null when
   * that does not apply; nothing was written then.
   */
  async #planNext(
    dest: Claimed,
    done: Delivered,
  ): Promise<{ plan: Plan; rest: Prefetched | null } | null> {
    const next = await done.next?.catch(() => null);
    if (!next) return null;
    const { plan, at, now } = done;
    const { page } = next;
    const events = page.events.slice(0, MAX_BATCH_EVENTS);
    const more = page.events.length > MAX_BATCH_EVENTS;
    // A batch that stops short of a full read covers everything up to its head.
    const last = more || page.hasMore ? events.at(-1)! : page.head;
    const id = newMessageId();
    const leaseUntil = new Date(this.#deps.clock.now().getTime() + this.#leaseMs);
    const records = this.#deps.records ?? this.#deps.sql;
    const updated = await records<{ attempts: number }[]>`
      update destinations set ${advanceCursor(records, plan.last)},
        batch_id = ${id}, batch_last_xid = ${last.xid}, batch_last_seq = ${last.seq},
        attempts = 0, next_attempt_at = null, failing_since = null,
        last_attempt_at = ${at}, last_success_at = ${now}, last_error = null,
        lease_expires_at = ${leaseUntil}
      where id = ${dest.id} and lease_owner = ${this.instanceId} and batch_id = ${plan.batchId}
        and not paused
      returning attempts
    `;
    if (updated.length === 0) return null;
    this.#deps.logger.debug("delivered", {
      destination_id: dest.id,
      webhook_id: plan.batchId,
      events: plan.events.length,
      status: done.status,
      duration_ms: done.durationMs,
    });
    return {
      plan: { batchId: id, last: { xid: last.xid, seq: last.seq }, events, attempts: 0 },
      rest: more ? { page: { ...page, events: page.events.slice(MAX_BATCH_EVENTS) } } : null,
    };
  }

  /** Records an accepted batch: the place moves past it. False if the lease is gone. */
  #recordSuccess(db: Db, dest: Claimed, done: Delivered): Promise<boolean> {
    const { plan, at, now } = done;
    // Sent at the call: in #plan it is the first of the statements sent together.
    return db`
      update destinations set ${advanceCursor(db, plan.last)},
        batch_id = case when batch_id = ${plan.batchId} then null else batch_id end,
        batch_last_xid = case when batch_id = ${plan.batchId} then null else batch_last_xid end,
        batch_last_seq = case when batch_id = ${plan.batchId} then null else batch_last_seq end,
        attempts = 0, next_attempt_at = null, failing_since = null,
        last_attempt_at = ${at}, last_success_at = ${now}, last_error = null
      where id = ${dest.id} and lease_owner = ${this.instanceId}
      returning id
    `.execute().then((updated) => updated.length > 0); // else deleted, or another took over
  }

  /**
   * In one transaction holding the destination row: record the previous batch's success
   * (`delivered`), account drops, then take the batch in flight (retry) or form the next one
   * and record it, and renew the lease. null: nothing to send (the cursor moved past events
   * filtered out), or the lease is gone. `pendingXid`: nothing to send yet, but committed
   * events will be once the feed's horizon passes it; the lease is kept.
   *
   * `expected` is where the destination's place should be (from the claim, or the batch just
   * delivered): the page is read from there in the same round trip as the row, the success and
   * the drops, and read again only if the row says otherwise.
   */
  #plan(
    dest: Claimed,
    expected: FeedPoint,
    delivered: Delivered | null,
  ): Promise<Plan | { pendingXid: string } | null> {
    const now = this.#deps.clock.now();
    return this.#deps.sql.begin(async (tx) => {
      const readPage = (after: FeedPoint) =>
        selectEnvironmentPage(
          tx,
          dest.environment_id,
          {
            after,
            eventTypes: dest.event_types,
            limit: MAX_BATCH_EVENTS,
          },
          now,
          true,
        );
      // Sent together, run in this order: each statement sees what the ones before it did. Each
      // is sent as it is made (.execute(), or sent at the call): postgres.js otherwise sends a
      // query when its promise is first awaited, and Promise.all awaits a plain query only after
      // the async calls beside it have sent theirs (the row lock came after the page, and the
      // page's plan settings after the page, tests/feed_plan_test.ts).
      const [recorded, [row], drops, , guessed] = await Promise.all([
        delivered ? this.#recordSuccess(tx, dest, delivered) : true,
        tx<
          {
            cursor_xid: string;
            cursor_seq: string;
            batch_id: string | null;
            batch_last_xid: string | null;
            batch_last_seq: string | null;
            attempts: number;
            paused: boolean;
          }[]
        >`
          select cursor_xid::text, cursor_seq::text, batch_id, batch_last_xid::text,
            batch_last_seq::text, attempts, paused
          from destinations where id = ${dest.id} and lease_owner = ${this.instanceId}
          for update
        `.execute(),
        accountDrops(tx, feedRetentionCutoff(now), dest.id),
        // After the drops, whose plan depends on the cutoff's value; before the page.
        planUnfilteredPageOnce(tx, dest.event_types)?.execute(),
        readPage(delivered ? delivered.plan.last : expected),
      ]);
      if (delivered && recorded) {
        this.#deps.logger.debug("delivered", {
          destination_id: dest.id,
          webhook_id: delivered.plan.batchId,
          events: delivered.plan.events.length,
          status: delivered.status,
          duration_ms: delivered.durationMs,
        });
      }
      // Drops are counted even when the row is not ours (paused, or the lease gone): as the
      // retention purge would count them, under the row's lock.
      logDrops(this.#deps.logger, drops);
      if (!row || row.paused) return null;
      let cursor: FeedPoint = { xid: row.cursor_xid, seq: row.cursor_seq };
      const through = drops[0]?.through;
      if (through && comparePoints(through, cursor) > 0) cursor = through;
      const batchId = drops.length > 0 ? null : row.batch_id;
      const page = comparePoints(cursor, delivered ? delivered.plan.last : expected) === 0
        ? guessed
        : await readPage(cursor);
      const leaseUntil = new Date(now.getTime() + this.#leaseMs);
      if (batchId !== null && row.batch_last_xid !== null && row.batch_last_seq !== null) {
        // A retry: the same events. Nothing can have joined (no event appears before the
        // horizon the batch was formed under), and what left the seven days was just
        // accounted, which ended the batch.
        const last = { xid: row.batch_last_xid, seq: row.batch_last_seq };
        const events = page.events.filter((e) => comparePoints(e, last) <= 0);
        if (events.length > 0) {
          await tx`
            update destinations set lease_expires_at = ${leaseUntil} where id = ${dest.id}
          `;
          return { batchId, last, events, attempts: row.attempts };
        }
      }
      // A batch that stops short of a full page covers everything up to the head (events of
      // other types included): the next one starts after it.
      const last = page.hasMore ? page.events.at(-1)! : page.head;
      if (page.events.length === 0) {
        const pending = page.pendingXid;
        await tx`
          update destinations set ${advanceCursor(tx, last)},
            batch_id = null, batch_last_xid = null, batch_last_seq = null,
            lease_owner = ${pending === null ? null : this.instanceId},
            lease_expires_at = ${pending === null ? null : leaseUntil}
          where id = ${dest.id}
        `;
        // Caught up: the lease is given up, so the next capture's wake-up lets any instance
        // (the first to claim) deliver.
        return pending === null ? null : { pendingXid: pending };
      }
      const id = newMessageId();
      await tx`
        update destinations set batch_id = ${id}, batch_last_xid = ${last.xid},
          batch_last_seq = ${last.seq}, lease_expires_at = ${leaseUntil}
        where id = ${dest.id}
      `;
      return {
        batchId: id,
        last: { xid: last.xid, seq: last.seq },
        events: page.events,
        attempts: row.attempts,
      };
    });
  }

  /**
   * One POST of the plan. On success, what to record (by #plan or #run: see #run); on failure,
   * the retry is recorded here and null returned.
   */
  async #attempt(dest: Claimed, plan: Plan): Promise<Delivered | null> {
    const { sql, clock, logger, config, cursorSecret } = this.#deps;
    let body = `{"schema_version":${FEED_SCHEMA_VERSION},"events":[`;
    for (let i = 0; i < plan.events.length; i++) {
      body += (i > 0 ? "," : "") + plan.events[i]!.body;
    }
    body += "]}";
    const at = clock.now();
    const headers = webhookHeaders(signingSecrets(cursorSecret, dest, at), plan.batchId, at, body);
    let result: PostResult;
    try {
      const allowPrivate = config.destinationsAllowPrivate;
      result = await this.#connections.use(
        String(dest.id),
        new URL(dest.url),
        allowPrivate,
        (agent) =>
          postWebhook(dest.url, headers, body, { allowPrivate, timeoutMs: this.#timeoutMs, agent }),
      );
    } catch (err) {
      result = { status: null, error: "internal error", retryAfterMs: null, durationMs: 0 };
      logger.warn("delivery attempt failed", { destination_id: dest.id, ...describeError(err) });
    }
    const now = clock.now();
    if (result.error === null) {
      countDelivered(dest.id, plan.events.length);
      return { plan, at, now, status: result.status, durationMs: result.durationMs };
    }
    countFailedAttempt(dest.id);
    const attempt = plan.attempts + 1;
    const delay = retryDelayMs(attempt, result.retryAfterMs, this.#backoff);
    await sql`
      update destinations set
        attempts = ${attempt},
        next_attempt_at = ${new Date(now.getTime() + delay)},
        failing_since = coalesce(failing_since, ${at}),
        last_attempt_at = ${at},
        last_error = ${result.error},
        lease_owner = null, lease_expires_at = null
      where id = ${dest.id} and lease_owner = ${this.instanceId}
    `;
    // The receiver's answer body is never logged: only its status and our own description.
    logger.info("delivery attempt failed, will retry", {
      destination_id: dest.id,
      webhook_id: plan.batchId,
      attempt,
      status: result.status,
      error: result.error,
      retry_in_ms: delay,
    });
    return null;
  }
}
