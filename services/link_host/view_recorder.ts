import type { Sql } from "../../db/connect.ts";
import type { Clock } from "../../infra/clock.ts";
import { type EventEnvironment, recordEvents } from "../events/record.ts";
import type { HostedLink } from "../links/links.ts";
import type { Logger } from "../../infra/log.ts";
import { describeError } from "../../infra/log.ts";
import { getEnvironmentOrThrow } from "../projects/projects.ts";
import type { Visitor } from "./visitor.ts";

/** `attribution.rule` (the rule's name or 1-based index) and `attribution.variant` (1-based). */
export interface Decided {
  rule: string | number | null;
  variant: number | null;
}

interface PendingView {
  link: Pick<HostedLink, "id" | "environment_id" | "path" | "link_domain">;
  platform: string;
  visitor: Visitor | undefined;
  /** The rule and split variant that decided the hit, when they did. */
  decided: Decided | undefined;
  /** The view's click id (services/attribution/click_ids.ts), minted for `at`. */
  clickId: string | undefined;
  at: Date;
  attempts: number;
  /** Set once a write of this view's batch failed: the retry carries the same key. */
  batchKey?: string;
}

/** Views buffered at most, should the database stay away: beyond it the oldest are dropped. */
const MAX_PENDING = 100_000;
const MAX_BATCH = 1000;
const RETRY_MS = 1000;
/** A batch the database refuses this many times in a row is dropped, with an error logged. */
const MAX_ATTEMPTS = 30;

/**
 * Records link-host views behind the response. A redirect answers as soon as its link is read;
 * its view joins a queue that one writer drains through recordEvents, each pass taking whatever
 * arrived meanwhile: one transaction per batch instead of one per hit, which would queue every
 * hit of a popular link on its counter row. Idle, a view is written at once; busy, within one
 * transaction's time. A failed write is retried (MAX_ATTEMPTS times, a second apart, then the
 * batch is dropped and logged) under the batch key of its first attempt, so a write that did
 * commit before its connection dropped is never counted twice. A view whose link was deleted
 * before it was written is stored as it was recorded and counted nowhere (its link's counters
 * went with the link). `flush()` (shutdown, tests)
 * waits for the queue. A process killed mid-way loses the views it had not yet written (at
 * most a transaction's worth when busy, as docs/link-host.md says) and never counts one twice.
 */
export class ViewRecorder {
  #pending: PendingView[] = [];
  #writing: Promise<void> | null = null;
  /** Views of the batch being written, out of #pending meanwhile. */
  #inFlight = 0;
  // Kind and hashid of an environment never change: safe to keep.
  #environments = new Map<number, EventEnvironment>();

  constructor(
    private readonly sql: Sql,
    private readonly deps: { clock: Clock; linkBaseUrl: string; logger: Logger },
    private readonly retryMs = RETRY_MS,
  ) {}

  /** Views answered but not yet written (the metrics' linkfeed_views_waiting). */
  get waiting(): number {
    return this.#pending.length + this.#inFlight;
  }

  /**
   * Queues a view. `click`: the click id the link host minted for it and the time it was minted
   * for, which is then the view's `occurred_at` (so the id reads back to the view's own time);
   * without one, the view happens now.
   */
  record(
    link: Pick<HostedLink, "id" | "environment_id" | "path" | "link_domain">,
    platform: string,
    visitor?: Visitor,
    decided?: Decided,
    click?: { id: string; at: Date },
  ): void {
    if (this.#pending.length >= MAX_PENDING) {
      this.#pending.shift();
      this.deps.logger.error("view dropped: too many views waiting for the database");
    }
    this.#pending.push({
      link,
      platform,
      visitor,
      decided,
      clickId: click?.id,
      at: click?.at ?? this.deps.clock.now(),
      attempts: 0,
    });
    this.#writing ??= this.#drain();
  }

  /**
   * Resolves once every view recorded so far is stored (or has been retried and dropped), or
   * after `timeoutMs`, whichever comes first: a stopping instance must not wait forever for a
   * database that is gone.
   */
  async flush(timeoutMs = Infinity): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = Number.isFinite(timeoutMs)
      ? new Promise<"expired">((r) => (timer = setTimeout(() => r("expired"), timeoutMs)))
      : null;
    try {
      while (this.#writing) {
        if (expired && (await Promise.race([this.#writing, expired])) === "expired") return;
        if (!expired) await this.#writing;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, MAX_BATCH);
      this.#inFlight = batch.length;
      // A batch being retried stays whole, under the key of its first attempt.
      const groups = Map.groupBy(batch, (v) => `${v.link.environment_id} ${v.batchKey ?? ""}`);
      for (const views of groups.values()) {
        // A write that failed may still have committed (the connection dropped before the
        // answer): its retry, under the same key, then stores and counts nothing again.
        const key = views[0]!.batchKey ?? `view batch ${crypto.randomUUID()}`;
        try {
          await this.#write(views, key);
          this.#inFlight -= views.length;
        } catch (err) {
          this.#inFlight -= views.length;
          const attempts = views[0]!.attempts + 1;
          if (attempts >= MAX_ATTEMPTS) {
            this.deps.logger.error("views dropped: the database refused them", {
              views: views.length,
              attempts,
              ...describeError(err),
            });
            continue;
          }
          this.deps.logger.error("views not recorded yet, retrying", {
            views: views.length,
            ...describeError(err),
          });
          for (const v of views) {
            v.attempts = attempts;
            v.batchKey = key;
          }
          this.#pending.unshift(...views);
          await new Promise((r) => setTimeout(r, this.retryMs));
        }
      }
    }
    this.#writing = null;
  }

  async #environment(id: number): Promise<EventEnvironment> {
    let env = this.#environments.get(id);
    if (!env) {
      const { kind, hashid } = await getEnvironmentOrThrow(this.sql, id);
      env = { id, kind, hashid };
      this.#environments.set(id, env);
    }
    return env;
  }

  async #write(views: PendingView[], batchKey: string): Promise<void> {
    const environment = await this.#environment(views[0]!.link.environment_id);
    const links = new Map(
      views.map((v) => [v.link.id, {
        id: v.link.id,
        path: v.link.path,
        link_domain: v.link.link_domain,
      }]),
    );
    await recordEvents(
      this.sql,
      { environment, clock: this.deps.clock, linkBaseUrl: this.deps.linkBaseUrl, batchKey },
      views.map((v) => ({
        type: "view" as const,
        occurred_at: v.at,
        link_path: v.link.path,
        // Unknown values are left out (CONTRACT, "Analytics").
        device: {
          platform: v.platform,
          ...(v.visitor?.os ? { os: v.visitor.os } : {}),
          ...(v.visitor?.browser ? { browser: v.visitor.browser } : {}),
        },
        attribution: attributionOf(v),
        geo: v.visitor?.country ? { country: v.visitor.country } : null,
      })),
      [...links.values()],
    );
  }
}

/**
 * A view's attribution: the referrer's host, the deciding rule and variant, the click id; null
 * when none.
 */
function attributionOf(v: PendingView): Record<string, unknown> | null {
  const referrer = v.visitor?.referrerHost;
  const rule = v.decided?.rule ?? null;
  const variant = v.decided?.variant ?? null;
  if (!referrer && rule === null && variant === null && !v.clickId) return null;
  return {
    ...(v.clickId ? { click_id: v.clickId } : {}),
    ...(referrer ? { referrer_host: referrer } : {}),
    ...(rule !== null ? { rule } : {}),
    ...(variant !== null ? { variant } : {}),
  };
}
