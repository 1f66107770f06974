// Purchase corrections (specification rule 8): per (transaction_id, name), the highest version.
import type { FeedEvent } from "./types.ts";

/**
 * The record a purchase event belongs to, as a string key, or null for an event that is not a
 * purchase. Different `name` values (store actions) of one transaction are separate records.
 */
export function purchaseKey(event: FeedEvent): string | null {
  const purchase = event.purchase;
  if (event.type !== "purchase" || !purchase || typeof purchase.transaction_id !== "string") {
    return null;
  }
  return JSON.stringify([purchase.transaction_id, event.name ?? ""]);
}

/**
 * Keeps, per (`purchase.transaction_id`, `name`), the event with the highest
 * `purchase.version`, whatever order corrections arrive in. A correction is a new event with a
 * new id, so deduplicating by id alone would keep every version.
 */
export class PurchaseReducer {
  readonly #records = new Map<string, FeedEvent>();

  /**
   * Offers an event. Returns true when it is now its record's current version (store it), and
   * false when it is not a purchase, or an older or equal version than the one kept.
   */
  offer(event: FeedEvent): boolean {
    const key = purchaseKey(event);
    if (key === null) return false;
    const kept = this.#records.get(key);
    if (kept && kept.purchase!.version >= event.purchase!.version) return false;
    this.#records.set(key, event);
    return true;
  }

  /** The current version of one record. */
  get(transactionId: string, name: string): FeedEvent | undefined {
    return this.#records.get(JSON.stringify([transactionId, name]));
  }

  /** The current version of every record, in the order the records first appeared. */
  records(): FeedEvent[] {
    return [...this.#records.values()];
  }

  get size(): number {
    return this.#records.size;
  }
}

/** The current version of every purchase record among `events` (non-purchases are left out). */
export function reducePurchases(events: Iterable<FeedEvent>): FeedEvent[] {
  const reducer = new PurchaseReducer();
  for (const event of events) reducer.offer(event);
  return reducer.records();
}
