// Why a reader stopped, and what the specification says to do about it.

/**
 * - `http`: the feed answered with a status the reader must not retry (400, 401, 402, 403, …)
 * - `schema_version`: a page or event of a payload version this client does not understand
 * - `retries_exhausted`: too many consecutive 503s, network errors or unreadable pages
 * - `handler_failed`: the page handler kept throwing (its last error is the `cause`)
 * - `cursor_store`: the saved cursor could not be read or written
 */
export type FeedErrorKind =
  | "http"
  | "schema_version"
  | "retries_exhausted"
  | "handler_failed"
  | "cursor_store";

export interface FeedErrorDetails {
  /** The HTTP status, for `http` errors (and the last one seen for `retries_exhausted`). */
  status?: number | undefined;
  /** The error body's `code` (`bad_cursor`, `unauthorized`, …), when the body had one. */
  code?: string | undefined;
  /** The error body's `message`, when it had one. */
  serverMessage?: string | undefined;
  cause?: unknown;
}

/**
 * A reader stopped and will not retry by itself. The saved cursor was not advanced past any
 * page that was not completely processed, so running the reader again (after the recovery)
 * resumes where it stopped.
 */
export class FeedError extends Error {
  override name = "FeedError";
  readonly kind: FeedErrorKind;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly serverMessage: string | undefined;
  /** What to do, in the specification's words. */
  readonly recovery: string;

  constructor(
    kind: FeedErrorKind,
    summary: string,
    recovery: string,
    details: FeedErrorDetails = {},
  ) {
    super(`${summary}. Recovery: ${recovery}`, { cause: details.cause });
    this.kind = kind;
    this.status = details.status;
    this.code = details.code;
    this.serverMessage = details.serverMessage;
    this.recovery = recovery;
  }
}

/** The recovery for an unsuccessful feed status (503 is retried and never reaches here). */
export function recoveryFor(status: number, code: string | undefined): string {
  switch (status) {
    case 400:
      if (code === "invalid_event_type") {
        return "filter only by supported event types (e.g. install, purchase)";
      }
      if (code === "invalid_limit") return "use an integer limit from 1 to 1000";
      return "restore the original saved cursor (send next_after unchanged, with the same " +
        "event type filters) and use an integer limit; if the cursor is lost, omit `after` " +
        "(reset the cursor) to reread the retained events, deduplicating by id";
    case 401:
      return "the feed token is invalid or revoked: create a new feed token for this project " +
        "and environment, switch the integration to it, and keep the saved cursor";
    case 402:
      return "Enterprise access is required: the project needs an active Enterprise " +
        "subscription or self-hosted entitlement";
    case 403:
      return "the token does not belong to this project_id (and environment): use the numeric " +
        "project_id the token was created for, or a token of this project and environment";
    default:
      return "unexpected status for the feed API: check the URL and the service, then run again";
  }
}
