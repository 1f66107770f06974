// Where a reader keeps its position: one cursor per project, integration and filter set.

/** What a reader saves after each completely processed page. */
export interface CursorState {
  /** The `next_after` of the last processed page; null before the first one. */
  after: string | null;
  /** Ids of the most recently processed events, oldest first (a bounded window). */
  recentIds: string[];
}

/**
 * Keeps cursor states by key. `save` must be atomic: after a crash, `load` returns either the
 * previous state or the new one, never a mix.
 */
export interface CursorStore {
  load(key: string): Promise<CursorState | null>;
  save(key: string, state: CursorState): Promise<void>;
  /** Forgets a cursor, so that the next read omits `after` (specification rule 9). */
  delete?(key: string): Promise<void>;
}

export interface CursorKeyParts {
  baseUrl: string;
  projectId: string | number;
  integration: string;
  /** Empty means every type. */
  eventTypes: readonly string[];
}

/** Sorted and deduplicated, so that the same filter set always names the same cursor. */
export function normaliseEventTypes(types: readonly string[]): string[] {
  return [...new Set(types.map((t) => t.trim()).filter((t) => t !== ""))].sort();
}

/** The base URL without trailing slashes: `http://host/` and `http://host` are one service. */
export function normaliseBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "");
}

/**
 * The store key of one cursor. A different filter set is a different key: widening the
 * filters starts a new cursor instead of reusing one that may be past the newly included
 * events (specification rule 5).
 */
export function cursorKey(parts: CursorKeyParts): string {
  return JSON.stringify([
    normaliseBaseUrl(parts.baseUrl),
    String(parts.projectId),
    parts.integration,
    normaliseEventTypes(parts.eventTypes),
  ]);
}

/** Keeps cursors in memory: for tests, and for consumers that keep their position elsewhere. */
export class MemoryCursorStore implements CursorStore {
  readonly #states = new Map<string, CursorState>();

  load(key: string): Promise<CursorState | null> {
    const state = this.#states.get(key);
    return Promise.resolve(state ? copy(state) : null);
  }

  save(key: string, state: CursorState): Promise<void> {
    this.#states.set(key, copy(state));
    return Promise.resolve();
  }

  delete(key: string): Promise<void> {
    this.#states.delete(key);
    return Promise.resolve();
  }
}

function copy(state: CursorState): CursorState {
  return { after: state.after, recentIds: [...state.recentIds] };
}
