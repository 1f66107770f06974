// The feed event envelope: the one definition of what a captured event looks like on every
// surface (the REST feed, the export, webhooks, the live tail, GraphQL's FeedEvent, OpenAPI and
// the client library). GraphQL, OpenAPI and the client are checked against ENVELOPE_FIELDS by
// tests/feed_envelope_test.ts, so a field added here cannot be forgotten there.

export const FEED_SCHEMA_VERSION = 1;

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

/** Every type the feed can carry: what the SDKs send, and the link host's views. */
export const FEED_EVENT_TYPES = ["view", ...INGESTED_EVENT_TYPES] as const;

export type EventType = (typeof FEED_EVENT_TYPES)[number];

/** A purchase as ingested and delivered (amount in minor currency units). */
export interface Purchase {
  transaction_id: string;
  version: number;
  amount: number;
  currency: string;
  product_id: string;
  store: string;
}

/** The attributed link as the envelope carries it. */
export interface EnvelopeLink {
  id: number;
  path: string;
  access_path: string;
}

/** A feed event envelope. Absent fields are left out of the JSON, never null. */
export interface FeedEnvelope {
  schema_version: number;
  /** `evt_` + a sortable unique id, stable across redeliveries. */
  id: string;
  type: EventType;
  /** The custom event's name, or a purchase's store action. */
  name?: string;
  occurred_at: string;
  project: { id: string; test: boolean };
  device?: Record<string, unknown>;
  user?: Record<string, unknown>;
  link?: EnvelopeLink;
  attribution?: Record<string, unknown>;
  /** Country only (ISO 3166-1 alpha-2). */
  geo?: { country: string };
  purchase?: Purchase;
  /** A session's length in whole seconds (an addition within schema_version 1). */
  time_spent?: number;
}

/** Every envelope field, in the order it is serialised. */
export const ENVELOPE_FIELDS = [
  "schema_version",
  "id",
  "type",
  "name",
  "occurred_at",
  "project",
  "device",
  "user",
  "link",
  "attribution",
  "geo",
  "purchase",
  "time_spent",
] as const satisfies readonly (keyof FeedEnvelope)[];

// Compile-time: ENVELOPE_FIELDS names every field of FeedEnvelope.
type Missing = Exclude<keyof FeedEnvelope, (typeof ENVELOPE_FIELDS)[number]>;
const _allFieldsListed: [Missing] extends [never] ? true : Missing = true;

/** The fields of the envelope's purchase object, in order. */
export const PURCHASE_FIELDS = [
  "transaction_id",
  "version",
  "amount",
  "currency",
  "product_id",
  "store",
] as const satisfies readonly (keyof Purchase)[];

/**
 * Serialises an envelope once, at capture; every reader passes the text on unparsed. Keys go
 * in ENVELOPE_FIELDS order and undefined ones are dropped (JSON.stringify leaves them out).
 */
export function serialiseEnvelope(e: FeedEnvelope): string {
  return JSON.stringify(
    {
      schema_version: e.schema_version,
      id: e.id,
      type: e.type,
      name: e.name,
      occurred_at: e.occurred_at,
      project: { id: e.project.id, test: e.project.test },
      device: e.device,
      user: e.user,
      link: e.link && { id: e.link.id, path: e.link.path, access_path: e.link.access_path },
      attribution: e.attribution,
      geo: e.geo && { country: e.geo.country },
      purchase: e.purchase && {
        transaction_id: e.purchase.transaction_id,
        version: e.purchase.version,
        amount: e.purchase.amount,
        currency: e.purchase.currency,
        product_id: e.purchase.product_id,
        store: e.purchase.store,
      },
      time_spent: e.time_spent,
    } satisfies Record<(typeof ENVELOPE_FIELDS)[number], unknown>,
  );
}
