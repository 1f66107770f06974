import type { Db } from "../../db/connect.ts";

/** An item of the metrics array, as `projectMetricsJson` serialises it. */
export interface LinkMetrics {
  id: number;
  /** Links have no separate name: the title, or the path when the title is empty. */
  name: string;
  path: string;
  title: string;
  active: boolean;
  sdk_generated: boolean;
  tags: string[];
  /** Absent when the link has no campaign. */
  tracking_campaign?: string;
  total_views: number;
  total_opens: number;
  total_installs: number;
  total_reinstalls: number;
  total_time_spent: number;
  total_reactivations: number;
  total_app_opens: number;
  total_user_referred: number;
  total_revenue: number;
}

/** The same item under GraphQL's names, as `projectMetricsForGraphQL` answers it. */
export interface LinkMetricsNode {
  id: number;
  name: string;
  path: string;
  title: string;
  active: boolean;
  sdkGenerated: boolean;
  tags: string[];
  trackingCampaign: string | null;
  totalViews: number;
  totalOpens: number;
  totalInstalls: number;
  totalReinstalls: number;
  totalTimeSpent: number;
  totalReactivations: number;
  totalAppOpens: number;
  totalUserReferred: number;
  totalRevenue: number;
}

/**
 * The columns an item is printed from, as `s` (see ITEM_FIELDS): selected and sorted before
 * any JSON is printed. The title and path are escaped here, once each, as the name is one of
 * them.
 */
const ITEM_COLUMNS = `l.id, l.title, to_json(l.title)::text as title_json,
  to_json(l.path)::text as path_json, l.active, l.sdk_generated, l.tags, l.tracking_campaign,
  c.total_views, c.total_opens, c.total_installs, c.total_reinstalls, c.total_time_spent,
  c.total_reactivations, c.total_app_opens, c.total_user_referred, c.total_revenue`;

/**
 * The fields of an item in answer order: the REST name, the GraphQL name, and the SQL printing
 * the value as JSON from `s`. Strings go through to_json, which escapes them; numbers,
 * booleans and the jsonb tags print as JSON already. `optional`: may be null, which REST
 * leaves out (an item may omit tracking_campaign, but must not carry a null where a string is
 * due) and GraphQL answers as null.
 */
const ITEM_FIELDS: readonly {
  rest: keyof LinkMetrics;
  graphql: keyof LinkMetricsNode;
  json: string;
  optional?: true;
}[] = [
  { rest: "id", graphql: "id", json: "s.id" },
  {
    rest: "name",
    graphql: "name",
    json: "case when s.title = '' then s.path_json else s.title_json end",
  },
  { rest: "path", graphql: "path", json: "s.path_json" },
  { rest: "title", graphql: "title", json: "s.title_json" },
  { rest: "active", graphql: "active", json: "s.active::text" },
  { rest: "sdk_generated", graphql: "sdkGenerated", json: "s.sdk_generated::text" },
  { rest: "tags", graphql: "tags", json: "s.tags" },
  {
    rest: "tracking_campaign",
    graphql: "trackingCampaign",
    json: "to_json(s.tracking_campaign)",
    optional: true,
  },
  { rest: "total_views", graphql: "totalViews", json: "s.total_views" },
  { rest: "total_opens", graphql: "totalOpens", json: "s.total_opens" },
  { rest: "total_installs", graphql: "totalInstalls", json: "s.total_installs" },
  { rest: "total_reinstalls", graphql: "totalReinstalls", json: "s.total_reinstalls" },
  { rest: "total_time_spent", graphql: "totalTimeSpent", json: "s.total_time_spent" },
  { rest: "total_reactivations", graphql: "totalReactivations", json: "s.total_reactivations" },
  { rest: "total_app_opens", graphql: "totalAppOpens", json: "s.total_app_opens" },
  { rest: "total_user_referred", graphql: "totalUserReferred", json: "s.total_user_referred" },
  { rest: "total_revenue", graphql: "totalRevenue", json: "s.total_revenue" },
];

/**
 * The SQL text of one item as a JSON object under the REST or the GraphQL names: one concat()
 * of keys and values (which prints each value with its type's output function, and a null as
 * nothing; booleans are cast to text, as their output function prints t and f).
 */
function itemSql(names: "rest" | "graphql"): string {
  const parts = ITEM_FIELDS.map((f, i) => {
    const key = `'${i === 0 ? "{" : ","}"${f[names]}":'`;
    if (!f.optional) return `${key}, ${f.json}`;
    return names === "rest" ? `${key} || ${f.json}` : `${key}, coalesce(${f.json}, 'null')`;
  });
  return `concat(${parts.join(",\n  ")}, '}')`;
}

/**
 * The entity tag's parts: the number of items and the sum of one hash per item over the link's
 * id and the row versions (xmin) of the link and its counters, which the tag is computed from
 * without building the answer. Every write that changes an item (a counter moved, a link
 * renamed, retagged, activated or deactivated) writes a new row version, and so a new tag; a
 * sum rather than XOR, so that two changes cannot cancel out. The sum of the 64-bit hashes is
 * exact (PostgreSQL sums bigint in 128 bits, DecimalSum in parts).
 */
const ROW_HASH = "hashtextextended(l.id || ':' || l.xmin || ':' || c.xmin, 0)";

/** The entity tag of an environment's metrics from its items' count and hash sum. */
const etagOf = (environmentId: number, count: number | string, hashSum: string) =>
  `"m-${environmentId}-${count}-${hashSum}"`;

/** REST's rows: the item and its hash (see ROW_HASH). GraphQL's: the item. */
const REST_ROWS = {
  select: `${itemSql("rest")}, s.row_hash`,
  columns: `${ITEM_COLUMNS}, ${ROW_HASH} as row_hash`,
};
const GRAPHQL_ROWS = { select: itemSql("graphql"), columns: ITEM_COLUMNS };

/**
 * The metrics items of the environment's active links, one a row, sorted by total_views
 * descending and then by id. PostgreSQL sorts the items' values, not their printed JSON, and
 * sends each row as soon as it is printed, while the earlier ones are being read
 * (string_agg(… order by …) sorts the printed items, ~3.4 MB for 10,000 links, and sends
 * nothing until the last one).
 */
const itemsSql = (db: Db, environmentId: number, rows: typeof REST_ROWS) =>
  db`
    select ${db.unsafe(rows.select)}
    from (
      select ${db.unsafe(rows.columns)}
      from links l join link_counters c on c.link_id = l.id
      where l.environment_id = ${environmentId} and l.active and not l.archived
      order by c.total_views desc, l.id
    ) s
    order by s.total_views desc, s.id
  `;

/** Buffers of earlier answers, kept for the next ones (see JsonArrayBytes). */
const spareBuffers: Uint8Array<ArrayBuffer>[] = [];
const SPARE_BUFFERS = 2;
const MAX_SPARE_BYTES = 32 * 1024 * 1024;

/**
 * A JSON array of the items PostgreSQL sends, one a row, copied into one buffer as each row
 * arrives. Once copied, a row (its array and buffers) is garbage: 10,000 rows kept until the
 * last one arrived would survive young-generation collections, to be copied and promoted.
 * The buffer is one of an earlier answer when there is one: a fresh one costs page faults on
 * every first write, and megabytes of external memory that bring V8's full collections forward.
 */
class JsonArrayBytes {
  #bytes = spareBuffers.pop() ?? new Uint8Array(256 * 1024);
  #length = 1;
  #released = false;

  constructor() {
    this.#bytes[0] = 0x5b; // [
  }

  /** Appends an item (a JSON value's UTF-8 bytes), after a comma unless it is the first. */
  add(item: Uint8Array) {
    const needed = this.#length + item.length + 2;
    if (needed > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(needed, 2 * this.#bytes.length));
      grown.set(this.#bytes.subarray(0, this.#length));
      this.#bytes = grown;
    }
    if (this.#length > 1) this.#bytes[this.#length++] = 0x2c; // ,
    this.#bytes.set(item, this.#length);
    this.#length += item.length;
  }

  /** The closed array: a view of the buffer, valid until `release`. */
  close(): Uint8Array<ArrayBuffer> {
    this.#bytes[this.#length++] = 0x5d; // ]
    return this.#bytes.subarray(0, this.#length);
  }

  /** Hands the buffer on to a later answer. */
  release() {
    if (this.#released) return;
    this.#released = true;
    if (spareBuffers.length < SPARE_BUFFERS && this.#bytes.length <= MAX_SPARE_BYTES) {
      spareBuffers.push(this.#bytes);
    }
  }
}

/**
 * The exact sum of 64-bit integers as PostgreSQL prints them (ASCII decimal), printed as it
 * prints sum(bigint). Each is split into its last nine digits and the rest, which are summed
 * as doubles (exact below 2^53) and folded into a BigInt every 100,000 (at most ~10^15 each).
 */
export class DecimalSum {
  #total = 0n;
  #high = 0;
  #low = 0;
  #count = 0;

  add(digits: Uint8Array) {
    const negative = digits[0] === 0x2d; // -
    const split = Math.max(negative ? 1 : 0, digits.length - 9);
    let high = 0;
    for (let i = negative ? 1 : 0; i < split; i++) high = high * 10 + digits[i]! - 0x30;
    let low = 0;
    for (let i = split; i < digits.length; i++) low = low * 10 + digits[i]! - 0x30;
    this.#high += negative ? -high : high;
    this.#low += negative ? -low : low;
    if (++this.#count % 100_000 === 0) this.#fold();
  }

  #fold() {
    this.#total += BigInt(this.#high) * 1_000_000_000n + BigInt(this.#low);
    this.#high = 0;
    this.#low = 0;
  }

  toString(): string {
    this.#fold();
    return this.#total.toString();
  }
}

/**
 * Lifetime metrics of every active link of the environment as the bytes of the JSON array, and
 * its entity tag, from one statement (one snapshot), handed to `respond`: the bytes are valid
 * only while it runs (a Response copies its body as it is constructed).
 *
 * One query whatever the number of links, and PostgreSQL prints the items' JSON (concatenated
 * as text rather than built by json_agg, so that a REST item without a campaign leaves
 * tracking_campaign out): 10,000 links are never parsed and re-serialised in JavaScript, nor
 * decoded from UTF-8 into strings and encoded back (~3.4 MB): the rows are read raw, and their
 * bytes are the response's. The tag's hash sum is added up here from each row's hash: window
 * aggregates over the rows cost PostgreSQL more (docs/SCALING.md, "Metrics").
 */
export async function projectMetricsJson<T>(
  db: Db,
  environmentId: number,
  respond: (body: Uint8Array<ArrayBuffer>, etag: string) => T,
): Promise<T> {
  const items = new JsonArrayBytes();
  try {
    const hashSum = new DecimalSum();
    let count = 0;
    await itemsSql(db, environmentId, REST_ROWS).raw().forEach(([item, hash]) => {
      items.add(item!);
      hashSum.add(hash!);
      count++;
    });
    return respond(items.close(), etagOf(environmentId, count, hashSum.toString()));
  } finally {
    items.release();
  }
}

/**
 * The same items under GraphQL's names (sdkGenerated, trackingCampaign null rather than
 * absent, totalViews, …), so that every LinkMetrics field is its item's own property: compiled
 * GraphQL execution reads it inline, where a resolver costs a call and a resolve info per item
 * and field. Each item is parsed as its row arrives, while PostgreSQL prints the next ones.
 */
export async function projectMetricsForGraphQL(
  db: Db,
  environmentId: number,
): Promise<LinkMetricsNode[]> {
  const items: LinkMetricsNode[] = [];
  const utf8 = new TextDecoder();
  await itemsSql(db, environmentId, GRAPHQL_ROWS).raw().forEach(([row]) => {
    const item: LinkMetricsNode = JSON.parse(utf8.decode(row!));
    // Tags are strings (inputs/links.ts); anything else stored is answered as String() of it.
    if (!item.tags.every((t) => typeof t === "string")) item.tags = item.tags.map(String);
    items.push(item);
  });
  return items;
}

/** The current tag of the environment's metrics, for conditional requests. */
export async function projectMetricsEtag(db: Db, environmentId: number): Promise<string> {
  const [row] = await db<{ count: string; hash_sum: string }[]>`
    select count(*) as count, coalesce(sum(${db.unsafe(ROW_HASH)}), 0) as hash_sum
    from links l join link_counters c on c.link_id = l.id
    where l.environment_id = ${environmentId} and l.active and not l.archived
  `;
  return etagOf(environmentId, row!.count, row!.hash_sum);
}

/**
 * The metrics items of these links (any state: inactive and archived links have counters too),
 * under GraphQL's names, in one query: a GraphQL page's `Link.metrics`.
 */
export async function linkMetricsByIds(
  db: Db,
  ids: readonly number[],
): Promise<LinkMetricsNode[]> {
  if (ids.length === 0) return [];
  const rows = await db<{ item: string }[]>`
    select ${db.unsafe(GRAPHQL_ROWS.select)} as item
    from (
      select ${db.unsafe(GRAPHQL_ROWS.columns)}
      from links l join link_counters c on c.link_id = l.id
      where l.id = any(${ids as number[]}::int[])
    ) s
  `;
  return rows.map(({ item }) => {
    const node: LinkMetricsNode = JSON.parse(item);
    if (!node.tags.every((t) => typeof t === "string")) node.tags = node.tags.map(String);
    return node;
  });
}
