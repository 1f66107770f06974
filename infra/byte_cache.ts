// In-process caches bounded by an estimate of the bytes they hold, not by a count of entries: a
// count lets a caller who chooses large keys (a long credential, a long GraphQL document) pin
// as much memory as it likes, while a byte bound holds whatever the keys are. Only caches of
// values derived from their key live here (digests, parsed documents, normalised URLs): nothing
// that another instance could change, so nothing here ever needs invalidating.
import { LRUCache } from "lru-cache";

/** The bytes a JavaScript string of `length` UTF-16 units takes, rounded up to be safe. */
export function stringBytes(length: number): number {
  return 2 * length + 32;
}

/** What a cache holds and how often it served a lookup, for tests and diagnostics. */
export interface CacheReport {
  name: string;
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
}

export interface ByteCacheOptions<K, V> {
  /** Named in reports. */
  name: string;
  maxBytes: number;
  /** The estimated bytes of one entry, key included; entries over `maxBytes / 8` are not kept. */
  sizeOf: (value: V, key: K) => number;
}

/** A least-recently-used cache whose entries' estimated sizes never add up past `maxBytes`. */
export class ByteCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>> {
  readonly name: string;
  readonly maxBytes: number;
  #lru: LRUCache<K, V>;
  #hits = 0;
  #misses = 0;

  constructor(options: ByteCacheOptions<K, V>) {
    this.name = options.name;
    this.maxBytes = options.maxBytes;
    this.#lru = new LRUCache<K, V>({
      maxSize: options.maxBytes,
      // One entry may not take more than an eighth: a single huge value would otherwise evict
      // every small, useful one.
      maxEntrySize: Math.floor(options.maxBytes / 8),
      sizeCalculation: (value, key) => Math.max(1, Math.ceil(options.sizeOf(value, key))),
    });
    registry.add(new WeakRef<Reporter>(this));
  }

  get(key: K): V | undefined {
    const value = this.#lru.get(key);
    if (value === undefined) this.#misses++;
    else this.#hits++;
    return value;
  }

  set(key: K, value: V): void {
    this.#lru.set(key, value);
  }

  report(): CacheReport {
    return {
      name: this.name,
      entries: this.#lru.size,
      bytes: this.#lru.calculatedSize,
      maxBytes: this.maxBytes,
      hits: this.#hits,
      misses: this.#misses,
    };
  }
}

// Every cache made in this process (weakly: a dropped app's caches go with it).
interface Reporter {
  report(): CacheReport;
}
const registry = new Set<WeakRef<Reporter>>();

/** The reports of this process's live caches. */
export function cacheReports(): CacheReport[] {
  const reports: CacheReport[] = [];
  for (const ref of registry) {
    const cache = ref.deref();
    if (cache) reports.push(cache.report());
    else registry.delete(ref);
  }
  return reports;
}
