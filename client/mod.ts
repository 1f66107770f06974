/**
 * A consumer of the event feed (`GET /api/v1/projects/:project_id/event_stream`) that keeps
 * every client rule of the specification. It runs on Deno and Node.js and needs nothing beyond
 * the platform's fetch (the file cursor store uses `node:fs/promises`).
 *
 * ```ts
 * import { FeedReader, FileCursorStore } from "./client/mod.ts";
 *
 * const reader = new FeedReader({
 *   baseUrl: "https://feed.example.com",
 *   projectId: 1,
 *   token: process.env.FEED_TOKEN!,
 *   integration: "warehouse",
 *   eventTypes: ["install", "purchase"],
 *   store: new FileCursorStore("./feed.cursor"),
 * });
 * await reader.run(async (events) => {
 *   await saveIdempotently(events); // upsert by id: delivery is at least once
 * });
 * ```
 *
 * @module
 */
export {
  type EventHandler,
  type FeedPageContext,
  type FeedProgress,
  FeedReader,
  type FeedReaderOptions,
  type FeedRunResult,
  type FeedStats,
  type PageHandler,
} from "./reader.ts";
export { FeedError, type FeedErrorKind, recoveryFor } from "./errors.ts";
export {
  cursorKey,
  type CursorKeyParts,
  type CursorState,
  type CursorStore,
  MemoryCursorStore,
  normaliseEventTypes,
} from "./cursor_store.ts";
export { FileCursorStore } from "./file_cursor_store.ts";
export { purchaseKey, PurchaseReducer, reducePurchases } from "./purchases.ts";
export { backoffDelay, type BackoffOptions, parseRetryAfter } from "./backoff.ts";
export {
  type FeedEvent,
  type FeedPage,
  type FeedPurchase,
  SUPPORTED_SCHEMA_VERSION,
} from "./types.ts";
