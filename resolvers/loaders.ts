import DataLoader from "dataloader";
import type { Db } from "../db/connect.ts";
import { type Link, listLinksByIds, toLink } from "../services/links.ts";

export interface Loaders {
  /** Links by id: every link of a feed page in one query, each mapped once. */
  linkById: DataLoader<number, Link | null>;
}

/** Fresh loaders per request, so no cache outlives it (a deactivation shows on the next one). */
export function createLoaders(db: Db, linkBaseUrl: string): Loaders {
  return {
    linkById: new DataLoader(async (ids) => {
      const rows = await listLinksByIds(db, ids);
      const byId = new Map(rows.map((r) => [r.id, toLink(r, linkBaseUrl)]));
      return ids.map((id) => byId.get(id) ?? null);
    }, { maxBatchSize: 1000 }),
  };
}
