// postgres.js 3.4.9 (the latest release, and its main branch alike) keeps a pool's connections
// in queues whose shift() leaves a hole at the front of an array that is reset only when a
// shift empties it. Under steady load two of them never empty: `busy` (every connection busy,
// so each query is pipelined onto the one shifted off the front and pushed back on the end) and
// `open` (some connection always idle). Each query then adds a hole, and every move of a
// connection between queues scans them all (indexOf). Measured here: a pool of 10 at 32
// concurrent queries fell from 49,000 to 10,000 queries/s within 12 seconds, `remove` taking
// 45% of the process; the service's link lookup fell from 16,000 to 5,000 requests/s after a
// minute of load. The holes are never reclaimed while the load lasts.
//
// repairPoolQueues gives those queue objects a plain array of their live connections instead
// (at most the pool's size): the same queue, without the holes. It reaches them through a
// connection, which a query's `onexecute` option hands over, as postgres.js's own transactions
// are handed theirs. Any queue it reaches is repaired; each is the same queue afterwards.
import type postgres from "postgres";

interface PoolQueue {
  readonly length: number;
  remove(x: unknown): unknown;
  push(x: unknown): unknown;
  shift(): unknown;
  [REPAIRED]?: true;
}

interface PoolConnection {
  queue: PoolQueue;
}

const REPAIRED = Symbol("repaired");

/** Whether postgres.js's queue object `queue` has been repaired (for tests). */
export function isRepaired(queue: unknown): boolean {
  return (queue as PoolQueue | undefined)?.[REPAIRED] === true;
}

function repair(queue: PoolQueue | undefined): void {
  if (!queue || queue[REPAIRED] || typeof queue.shift !== "function") return;
  // Taken out in order, synchronously: postgres.js cannot touch the queue meanwhile.
  const items: unknown[] = [];
  while (queue.length > 0) items.push(queue.shift());
  Object.defineProperty(queue, "length", { get: () => items.length, configurable: true });
  queue.remove = (x) => {
    const i = items.indexOf(x);
    if (i === -1) return null;
    items.splice(i, 1);
    return x;
  };
  queue.push = (x) => {
    items.push(x);
    return x;
  };
  queue.shift = () => items.shift();
  queue[REPAIRED] = true;
}

/**
 * Repairs the pool's connection queues, each as one of its connections first enters it: a probe
 * query catches that connection, and its `queue` property, which postgres.js sets on every move
 * between queues, becomes an accessor that repairs the queue it is given. The queue objects are
 * the pool's, shared by all its connections, so one connection's moves repair them for all.
 */
export async function repairPoolQueues(sql: postgres.Sql): Promise<void> {
  const onexecute = (c: PoolConnection) => {
    watchMoves(c);
    return true;
  };
  // `onexecute` is not in postgres.js's published types: its transactions pass it this way.
  await sql.unsafe("select 1", [], { onexecute } as unknown as postgres.UnsafeQueryOptions);
}

function watchMoves(connection: PoolConnection): void {
  let queue = connection.queue;
  repair(queue);
  Object.defineProperty(connection, "queue", {
    get: () => queue,
    // postgres.js pushes the connection onto the new queue, then sets this: the repair drains
    // and refills it, the connection included.
    set: (next: PoolQueue) => {
      repair(next);
      queue = next;
    },
    configurable: true,
    enumerable: true,
  });
}
