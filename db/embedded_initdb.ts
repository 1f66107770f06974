// A worker that creates a new embedded database cluster (PGlite's initdb) in the directory it is
// sent, then answers and is terminated: db/embedded.ts says why this runs apart.
/// <reference lib="deno.worker" />
import { PGlite } from "@electric-sql/pglite";

self.onmessage = async (event: MessageEvent<{ dataDir: string }>) => {
  try {
    const db = await PGlite.create(event.data.dataDir);
    await db.close();
    self.postMessage({ ok: true });
  } catch (err) {
    self.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
  }
};
