// The request's DataLoaders: every field that would otherwise read once per parent object (a
// feed event's link, …) asks its loader, which reads the whole page's worth in one query. One
// loader per request and per edge: a link edge is keyed by the fields its selection asks for,
// so each reads only the columns those fields need, and two edges selecting the same fields
// share one loader (and its cache).
//
// The caches live as long as the request. A subscription's events are executed one at a time
// over up to an hour, so a subscription makes a fresh set per page of events (`forPage`)
// instead of caching every link it ever saw.
import DataLoader from "dataloader";
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import type { AppDeps } from "../services/deps.ts";
import { listLinksByIds } from "../services/links/links.ts";
import { linkColumns, type LinkField, linkFields, type LinkNode, linkNode } from "./nodes.ts";
import { selectedFields } from "./selection.ts";

/** The Link fields each edge selects, by its field nodes (fixed for a parsed document). */
const edgeFields = new WeakMap<readonly FieldNode[], LinkField[]>();

/** The Link fields the field being resolved selects, through fragments and aliases. */
export function selectedLinkFields(info: GraphQLResolveInfo): LinkField[] {
  let fields = edgeFields.get(info.fieldNodes);
  if (!fields) {
    fields = linkFields(selectedFields(info, []) ?? []).sort();
    edgeFields.set(info.fieldNodes, fields);
  }
  return fields;
}

export class Loaders {
  readonly #deps: AppDeps;
  readonly #links = new Map<string, DataLoader<number, LinkNode | null>>();
  /** Set for a subscription's page: every link edge reads these fields (see forPage). */
  readonly #fixedLinkFields: readonly LinkField[] | null;

  constructor(deps: AppDeps, fixedLinkFields: readonly LinkField[] | null = null) {
    this.#deps = deps;
    this.#fixedLinkFields = fixedLinkFields;
  }

  /**
   * A fresh set for one page of a subscription, whose link edges all read `linkFields` (the
   * union of what the subscription selects on `link`), so that priming it with the page's ids
   * serves every event of the page.
   */
  forPage(linkFields: readonly LinkField[]): Loaders {
    return new Loaders(this.#deps, [...linkFields].sort());
  }

  /** The loader of links by id with these fields; null for a link that no longer exists. */
  links(fields: readonly LinkField[]): DataLoader<number, LinkNode | null> {
    const wanted = this.#fixedLinkFields ?? fields;
    const key = wanted.join(",");
    let loader = this.#links.get(key);
    if (!loader) {
      const { sql, config } = this.#deps;
      const columns = linkColumns(wanted);
      loader = new DataLoader(async (ids) => {
        const rows = await listLinksByIds(sql, ids, columns);
        const byId = new Map(rows.map((row) => [row.id, row]));
        return ids.map((id) => {
          const row = byId.get(id);
          return row ? linkNode(row, config.linkBaseUrl, wanted) : null;
        });
      });
      this.#links.set(key, loader);
    }
    return loader;
  }

  /** The link loader of the edge being resolved (a field of type Link). */
  linksFor(info: GraphQLResolveInfo): DataLoader<number, LinkNode | null> {
    return this.links(this.#fixedLinkFields ?? selectedLinkFields(info));
  }
}
