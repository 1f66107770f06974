// The request's DataLoaders: every field that would otherwise read once per parent object
// (FeedEvent.link, Link.metrics, LinkMetrics.link, Link.analytics) asks its loader, which reads
// the whole page's worth in one query. One loader per request and per edge:
// - a link edge is keyed by the Link fields its selection asks for, so each reads only the
//   columns those fields need (two edges selecting the same fields share one loader);
// - Link.analytics by the edge's field nodes, whose arguments are the same for every link of
//   the page;
// - Link.metrics has one loader: its items are the same whatever is selected.
//
// The caches live as long as the request. A subscription's events are executed one at a time
// over up to an hour, so a subscription makes a fresh set per page of events (`forPage`)
// instead of caching every link it ever saw.
import DataLoader from "dataloader";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import type { AppDeps } from "../services/deps.ts";
import { listLinksByIds } from "../services/links/links.ts";
import { linkMetricsByIds, type LinkMetricsNode } from "../services/links/metrics.ts";
import { linkColumns, type LinkField, linkFields, type LinkNode, linkNode } from "./nodes.ts";
import { selectedFields } from "./selection.ts";

/** The Link fields an edge selects, and the key of the loader that reads them. */
interface LinkEdgeFields {
  fields: readonly LinkField[];
  key: string;
}

function edgeFieldsOf(fields: readonly LinkField[]): LinkEdgeFields {
  const sorted = [...new Set(fields)].sort();
  return { fields: sorted, key: sorted.join(",") };
}

/** The Link fields each edge selects, by its field nodes (fixed for a parsed document). */
const edgeFields = new WeakMap<readonly FieldNode[], LinkEdgeFields>();

/** The Link fields the field being resolved selects, through fragments and aliases. */
export function selectedLinkFields(info: GraphQLResolveInfo): LinkEdgeFields {
  let fields = edgeFields.get(info.fieldNodes);
  if (!fields) {
    fields = edgeFieldsOf(linkFields(selectedFields(info, []) ?? []));
    edgeFields.set(info.fieldNodes, fields);
  }
  return fields;
}

/**
 * A link loader, and the links it has read: a field asking for one already read gets it at
 * once rather than through a promise (a 1,000-event feed page asks 1,000 times, once the page's
 * loader has been primed with its ids).
 */
interface LinkLoader {
  loader: DataLoader<number, LinkNode | null>;
  read: Map<number, LinkNode | null>;
}

export class Loaders {
  readonly #deps: AppDeps;
  readonly #links = new Map<string, LinkLoader>();
  #metrics: DataLoader<number, LinkMetricsNode | null> | null = null;
  readonly #byField = new Map<readonly FieldNode[], DataLoader<unknown, unknown>>();
  /** Set for a subscription's page: every link edge reads these fields (see forPage). */
  readonly #fixedLinkFields: LinkEdgeFields | null;

  constructor(deps: AppDeps, fixedLinkFields: readonly LinkField[] | null = null) {
    this.#deps = deps;
    this.#fixedLinkFields = fixedLinkFields ? edgeFieldsOf(fixedLinkFields) : null;
  }

  /**
   * A fresh set for one page of a subscription, whose link edges all read `linkFields` (the
   * union of what the subscription selects on `link`), so that priming it with the page's ids
   * serves every event of the page.
   */
  forPage(linkFields: readonly LinkField[]): Loaders {
    return new Loaders(this.#deps, linkFields);
  }

  #linkLoader(edge: LinkEdgeFields): LinkLoader {
    const wanted = this.#fixedLinkFields ?? edge;
    let links = this.#links.get(wanted.key);
    if (!links) {
      const { sql, config, clock } = this.#deps;
      const columns = linkColumns(wanted.fields);
      const read = new Map<number, LinkNode | null>();
      const loader = new DataLoader<number, LinkNode | null>(async (ids) => {
        const rows = await listLinksByIds(sql, ids, columns);
        const byId = new Map(rows.map((row) => [row.id, row]));
        const now = clock.now();
        return ids.map((id) => {
          const row = byId.get(id);
          const node = row ? linkNode(row, config.linkBaseUrl, now, wanted.fields) : null;
          read.set(id, node);
          return node;
        });
      });
      links = { loader, read };
      this.#links.set(wanted.key, links);
    }
    return links;
  }

  /** The loader of links by id with these fields; null for a link that no longer exists. */
  links(fields: readonly LinkField[]): DataLoader<number, LinkNode | null> {
    return this.#linkLoader(edgeFieldsOf(fields)).loader;
  }

  /**
   * The link `id` for the edge being resolved (a field of type Link), through the loader of
   * the fields it selects: at once when that loader has read it already.
   */
  linkFor(info: GraphQLResolveInfo, id: number): LinkNode | null | Promise<LinkNode | null> {
    const links = this.#linkLoader(this.#fixedLinkFields ?? selectedLinkFields(info));
    const read = links.read.get(id);
    return read !== undefined ? read : links.loader.load(id);
  }

  /** Link metrics by link id; null for a link that no longer exists. */
  get metrics(): DataLoader<number, LinkMetricsNode | null> {
    if (!this.#metrics) {
      const { sql } = this.#deps;
      this.#metrics = new DataLoader(async (ids) => {
        const byId = new Map((await linkMetricsByIds(sql, ids)).map((m) => [m.id, m]));
        return ids.map((id) => byId.get(id) ?? null);
      });
    }
    return this.#metrics;
  }

  /**
   * The loader of one field of the document (its field nodes), made by `make` on the first
   * call of the request: the per-field batches that need the field's arguments (Link.analytics,
   * resolvers/link_fields.ts).
   */
  forField<K, V>(field: readonly FieldNode[], make: () => DataLoader<K, V>): DataLoader<K, V> {
    let loader = this.#byField.get(field) as DataLoader<K, V> | undefined;
    if (!loader) {
      loader = make();
      this.#byField.set(field, loader as DataLoader<unknown, unknown>);
    }
    return loader;
  }
}
