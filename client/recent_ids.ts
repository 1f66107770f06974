// The bounded window of recently processed event ids that deduplicates rereads.

/** Insertion-ordered set that forgets its oldest ids beyond `capacity`. */
export class RecentIds {
  readonly capacity: number;
  readonly #ids = new Set<string>();

  constructor(capacity: number, initial: readonly string[] = []) {
    this.capacity = capacity;
    for (const id of initial) this.add(id);
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(id: string): void {
    if (this.capacity <= 0 || this.#ids.has(id)) return;
    this.#ids.add(id);
    if (this.#ids.size > this.capacity) {
      // A Set iterates in insertion order: the first id is the oldest.
      this.#ids.delete(this.#ids.values().next().value!);
    }
  }

  get size(): number {
    return this.#ids.size;
  }

  /** Oldest first, as persisted with the cursor. */
  toArray(): string[] {
    return [...this.#ids];
  }
}
