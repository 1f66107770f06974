// Standard Webhooks headers, signed by the maintained `standardwebhooks` implementation.
import { Webhook } from "standardwebhooks";
import { ulid } from "ulid";

/** A new `webhook-id`: kept by every retry of one batch. */
export function newMessageId(): string {
  return `msg_${ulid()}`;
}

/**
 * The headers of one attempt. With two secrets (for 24 h after a rotation) the signature
 * header carries both signatures, space-separated, so receivers on either secret verify.
 */
export function webhookHeaders(
  secrets: readonly string[],
  messageId: string,
  at: Date,
  body: string,
): Record<string, string> {
  const signatures = secrets.map((s) => new Webhook(s).sign(messageId, at, body));
  return {
    "Content-Type": "application/json",
    "User-Agent": "link-event-feed-webhooks/1",
    "webhook-id": messageId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}
