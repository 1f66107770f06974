// The feed's wire format (specification, "Feed page" and "Feed event"), as a consumer reads it.

/** The payload format this client understands; a page or event of another version is refused. */
export const SUPPORTED_SCHEMA_VERSION = 1;

/** The purchase details of a `purchase` event; corrections carry a higher `version`. */
export interface FeedPurchase {
  transaction_id: string;
  version: number;
  amount?: number;
  currency?: string;
  product_id?: string;
  store?: string;
  [field: string]: unknown;
}

/**
 * One feed event. Fields beyond the ones named here may appear within schema_version 1 and are
 * kept as they are.
 */
export interface FeedEvent {
  schema_version: number;
  /** The deduplication key: the same id delivered twice is the same event. */
  id: string;
  type: string;
  /** A custom event's name, or a purchase's store action (`purchase`, `refund`, …). */
  name?: string;
  /** ISO 8601. Not a cursor: events come in arrival order. */
  occurred_at: string;
  project: { id: string; test: boolean; [field: string]: unknown };
  device?: Record<string, unknown>;
  user?: Record<string, unknown>;
  link?: Record<string, unknown>;
  attribution?: Record<string, unknown>;
  geo?: Record<string, unknown>;
  purchase?: FeedPurchase;
  /** A session's length in whole seconds. */
  time_spent?: number;
  [field: string]: unknown;
}

/** One page of `GET /api/v1/projects/:project_id/event_stream`. */
export interface FeedPage {
  schema_version: number;
  events: FeedEvent[];
  /** Opaque: sent back unchanged, never decoded or built. */
  next_after: string;
  [field: string]: unknown;
}
