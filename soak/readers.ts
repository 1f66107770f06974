// The feed's consumers in a soak: pull readers (each request to the next instance, resuming from
// the last cursor after any failure), one live-tail reader (SSE; reconnects with Last-Event-ID
// when its instance dies), and the auditor that reads the whole feed from the start at the end.
// Each keeps the sequence of event ids it received, duplicates included: the checks compare it
// with the auditor's.
import { EventSourceParserStream } from "eventsource-parser/stream";
import { ConnectionFailed, errorCode } from "./cluster.ts";
import { adminHeaders, feedPath, retryAfterMs, sleep, type SoakContext } from "./context.ts";

export interface ConsumerLog {
  name: string;
  ids: string[];
  /** Answers other than 200 and 503 (status → count): none is expected. */
  unexpected: Map<number, number>;
  /** 503 answers (rate_limited, unavailable) it waited out. */
  waited503: number;
  reconnects: number;
}

function newConsumerLog(name: string): ConsumerLog {
  return { name, ids: [], unexpected: new Map(), waited503: 0, reconnects: 0 };
}

interface Envelope {
  id: string;
  type: string;
  link?: { path: string };
  attribution?: { soak_id?: string };
}

export interface AuditedEvent {
  id: string;
  type: string;
  /** The attributed link's path. */
  link: string | null;
  /** The client id the soak's writers put in `attribution` (null for link views). */
  soakId: string | null;
}

interface FeedPageBody {
  events: { id: string }[];
  next_after: string;
}

/**
 * A pull reader: reads pages of `limit` after its cursor until `stop` aborts; polls every
 * `pollMs` once caught up. A failed request leaves the cursor where it was (rule 6).
 */
export class PullReader {
  readonly log: ConsumerLog;
  #cursor: string | undefined;

  constructor(
    private readonly ctx: SoakContext,
    name: string,
    private readonly token: string,
    private readonly options: { limit: number; pollMs: number },
  ) {
    this.log = newConsumerLog(name);
  }

  async run(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      const path = feedPath(this.ctx, { limit: String(this.options.limit), after: this.#cursor });
      let answer;
      try {
        answer = await this.ctx.cluster.request(this.log.name, path, {
          headers: { Authorization: `Bearer ${this.token}` },
        });
      } catch (err) {
        if (!(err instanceof ConnectionFailed)) throw err;
        this.log.reconnects++;
        await sleep(200, stop);
        continue;
      }
      if (answer.status === 200) {
        const page = JSON.parse(answer.text) as FeedPageBody;
        for (const e of page.events) this.log.ids.push(e.id);
        this.#cursor = page.next_after;
        if (page.events.length < this.options.limit) await sleep(this.options.pollMs, stop);
      } else if (answer.status === 503) {
        this.log.waited503++;
        await sleep(retryAfterMs(answer.headers), stop);
      } else {
        this.log.unexpected.set(answer.status, (this.log.unexpected.get(answer.status) ?? 0) + 1);
        await sleep(1000, stop);
      }
    }
  }
}

/**
 * The live-tail reader. It stays with one instance ("home", instance 0 at first, so the first
 * kill hits it) and, when that one dies, waits a few seconds for it to come back before moving
 * to another: a token holds at most 2 open streams across instances and a killed instance's
 * stream keeps counting for up to 30 s (docs/live-tail.md), so hopping onto the next instance to
 * be killed would soon meet that cap. That refusal is right (503 rate_limited), but it costs
 * the short soak time it does not have; the restarted instance is the last the rotation kills.
 */
export class LiveReader {
  readonly log: ConsumerLog;
  #cursor: string | undefined;
  #home = 0;
  #homeDownSince: number | null = null;

  constructor(private readonly ctx: SoakContext, private readonly token: string) {
    this.log = newConsumerLog("live tail (SSE)");
  }

  /** Home if it is up; else null for a while (it is restarting), then another live instance. */
  #choose(): { index: number; url: string } | null {
    const home = this.ctx.cluster.instances[this.#home]!;
    if (home.url !== null) {
      this.#homeDownSince = null;
      return { index: home.index, url: home.url };
    }
    this.#homeDownSince ??= Date.now();
    if (Date.now() - this.#homeDownSince < 5_000) return null;
    const other = this.ctx.cluster.live().sort((a, b) => b.startedAt - a.startedAt)[0];
    if (!other?.url) return null;
    this.#home = other.index;
    this.#homeDownSince = null;
    return { index: other.index, url: other.url };
  }

  async run(stop: AbortSignal): Promise<void> {
    const label = this.log.name;
    while (!stop.aborted) {
      const inst = this.#choose();
      if (!inst) {
        await sleep(100, stop);
        continue;
      }
      const headers: Record<string, string> = {
        Authorization: `Bearer ${this.token}`,
        Accept: "text/event-stream",
      };
      if (this.#cursor) headers["Last-Event-ID"] = this.#cursor;
      let res: Response;
      try {
        res = await fetch(`${inst.url}/api/v1/projects/${this.ctx.envId}/event_stream/live`, {
          headers,
          signal: stop,
        });
      } catch {
        if (stop.aborted) return;
        this.ctx.cluster.connectionError(label);
        this.log.reconnects++;
        await sleep(200, stop);
        continue;
      }
      if (res.status !== 200 || !res.body) {
        const text = await res.text().catch(() => "");
        this.ctx.cluster.account(label, {
          status: res.status,
          headers: res.headers,
          text,
          instance: inst.index,
        });
        if (res.status === 503) {
          this.log.waited503++;
          await sleep(retryAfterMs(res.headers), stop);
        } else {
          this.log.unexpected.set(res.status, (this.log.unexpected.get(res.status) ?? 0) + 1);
          await sleep(1000, stop);
        }
        continue;
      }
      this.ctx.cluster.account(label, { status: 200, headers: res.headers, instance: inst.index });
      const messages = res.body
        .pipeThrough(new TextDecoderStream() as TransformStream<Uint8Array, string>)
        .pipeThrough(new EventSourceParserStream())
        .getReader();
      // Stopping cancels the read in progress (an idle stream would otherwise hold it).
      const cancel = () => void messages.cancel().catch(() => {});
      stop.addEventListener("abort", cancel, { once: true });
      try {
        for (;;) {
          const { value: m, done } = await messages.read();
          if (done) break; // the server ended the stream (shutdown, 1 h): resume from the cursor
          if (m.event !== "feed_event" || !m.id) continue;
          this.log.ids.push((JSON.parse(m.data) as { id: string }).id);
          this.#cursor = m.id; // after the event is handled, as docs/live-tail.md says
        }
      } catch {
        // The instance died under the stream.
        if (!stop.aborted) this.ctx.cluster.connectionError(label);
      } finally {
        stop.removeEventListener("abort", cancel);
      }
      if (stop.aborted) return;
      this.log.reconnects++;
    }
  }
}

/**
 * The auditor: reads the whole feed from the start (no `after`) with pages of 1000, then follows
 * it with `poll()`. Its reads count against a token's limit like anyone's, so it switches to a
 * fresh token whenever one is rate-limited rather than wait a minute.
 */
export class Auditor {
  readonly log = newConsumerLog("auditor");
  #cursor: string | undefined;
  #token: string | null = null;
  tokensUsed = 0;

  constructor(private readonly ctx: SoakContext) {}

  /**
   * Reads until a page comes back short; true when that read found nothing new. Gives up
   * (false) at `until`, should no instance answer.
   */
  async poll(until: number): Promise<boolean> {
    let found = 0;
    while (Date.now() < until) {
      const token = this.#token ?? await this.#newToken(until);
      if (!token) break;
      let answer;
      try {
        answer = await this.ctx.cluster.request(
          "auditor",
          feedPath(this.ctx, { limit: "1000", after: this.#cursor }),
          { headers: { Authorization: `Bearer ${token}` } },
        );
      } catch (err) {
        if (!(err instanceof ConnectionFailed)) throw err;
        await sleep(200);
        continue;
      }
      if (answer.status === 503 && errorCode(answer.text) === "rate_limited") {
        this.#token = null;
        continue;
      }
      if (answer.status !== 200) {
        this.log.unexpected.set(answer.status, (this.log.unexpected.get(answer.status) ?? 0) + 1);
        await sleep(retryAfterMs(answer.headers));
        continue;
      }
      const page = JSON.parse(answer.text) as { events: Envelope[]; next_after: string };
      for (const e of page.events) {
        this.log.ids.push(e.id);
        this.events.push({
          id: e.id,
          type: e.type,
          link: e.link?.path ?? null,
          soakId: e.attribution?.soak_id ?? null,
        });
      }
      found += page.events.length;
      this.#cursor = page.next_after;
      if (page.events.length < 1000) return found === 0;
    }
    return false;
  }

  /** What the checks need of every event read, in feed order. */
  readonly events: AuditedEvent[] = [];

  async #newToken(until: number): Promise<string | null> {
    while (Date.now() < until) {
      try {
        const a = await this.ctx.cluster.request(
          "auditor: token",
          `/api/v1/projects/${this.ctx.envId}/event_stream_tokens`,
          {
            method: "POST",
            headers: adminHeaders(this.ctx),
            body: JSON.stringify({ name: `${this.ctx.runTag}-auditor-${this.tokensUsed}` }),
          },
        );
        if (a.status === 201) {
          this.tokensUsed++;
          this.#token = (JSON.parse(a.text) as { token: { value: string } }).token.value;
          return this.#token;
        }
        await sleep(retryAfterMs(a.headers));
      } catch (err) {
        if (!(err instanceof ConnectionFailed)) throw err;
        await sleep(200);
      }
    }
    return null;
  }
}
