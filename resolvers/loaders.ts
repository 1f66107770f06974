import DataLoader from "dataloader";
import type { Db } from "../db/connect.ts";
import { type LinkRow, listLinksByIds } from "../services/links.ts";

export interface Loaders {
  /** Links by id: every link of a feed page in one query. */
  linkById: DataLoader<number, LinkRow | null>;
}

/** Fresh loaders per request, so no cache outlives it (a deactivation shows on the next one). */
export function createLoaders(db: Db): Loaders {
  return {
    linkById: new DataLoader(async (ids) => {
      const rows = await listLinksByIds(db, ids);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    }, { maxBatchSize: 1000 }),
  };
}
