// An event as ingestion takes it: what the app SDKs send, validated (inputs/events.ts), and what
// the service records itself (a link-host view).
import type { EventType, Purchase } from "../feed/envelope.ts";

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
