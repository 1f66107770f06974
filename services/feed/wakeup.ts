// Wakes feed followers (push destinations, live readers) when an environment captures events.
// Captures NOTIFY on FEED_CHANNEL with the environment id (services/feed/capture.ts); each
// process holds one LISTEN connection (postgres.js `sql.listen`, outside the pool, reconnecting
// by itself) and fans the notifications out to its subscribers.
//
// A notification is a hint, never the record: subscribers still read the feed from its table,
// and they poll as well, because a notification can be missed (the LISTEN connection was being
// re-established) and because the embedded database cannot deliver them: PGlite behind
// pglite-socket serves one connection, and a LISTEN connection would take it from the pool
// (checked: queries then hang), while PGlite's in-process listen() does not see a NOTIFY sent
// through the socket. There `startFeedWakeup(null)` returns a subscriber that never fires, and
// followers fall back to polling.
import type { Sql } from "../../db/connect.ts";
import { FEED_CHANNEL } from "./capture.ts";
import { describeError, type Logger } from "../../infra/log.ts";

export type WakeupCallback = (environmentId: number) => void;

export interface FeedWakeup {
  /** True when notifications arrive; false means subscribers must rely on polling alone. */
  readonly live: boolean;
  /** Calls `callback` after each capture of `environmentId` ("*": of any environment). */
  subscribe(environmentId: number | "*", callback: WakeupCallback): () => void;
  close(): Promise<void>;
}

export async function startFeedWakeup(sql: Sql | null, logger: Logger): Promise<FeedWakeup> {
  const subscribers = new Map<number | "*", Set<WakeupCallback>>();
  const dispatch = (environmentId: number) => {
    for (const key of [environmentId, "*"] as const) {
      for (const callback of subscribers.get(key) ?? []) {
        try {
          callback(environmentId);
        } catch (err) {
          logger.warn("feed wake-up subscriber failed", describeError(err));
        }
      }
    }
  };
  let unlisten: (() => Promise<void>) | null = null;
  if (sql) {
    try {
      const listening = await sql.listen(FEED_CHANNEL, (payload) => {
        const id = Number(payload);
        if (Number.isInteger(id)) dispatch(id);
      });
      unlisten = listening.unlisten;
    } catch (err) {
      // The LISTEN's connection was lost while it was being set up (a start during a restart or
      // a failover of the database). postgres.js keeps the listener and listens again when that
      // connection comes back (its onclose), so notifications resume by themselves; calling
      // listen again here would register the callback twice. Until then followers poll.
      logger.warn("feed wake-up: LISTEN failed; postgres.js listens again on reconnecting", {
        ...describeError(err),
      });
    }
  }
  return {
    live: sql !== null,
    subscribe(environmentId, callback) {
      let set = subscribers.get(environmentId);
      if (!set) subscribers.set(environmentId, set = new Set());
      set.add(callback);
      return () => {
        set!.delete(callback);
        if (set!.size === 0) subscribers.delete(environmentId);
      };
    },
    async close() {
      subscribers.clear();
      await unlisten?.().catch(() => {});
    },
  };
}
