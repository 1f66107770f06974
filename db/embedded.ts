// The embedded default: PGlite behind a loopback socket, so the postgres.js code path is the same
// as on a real PostgreSQL. PGlite is one connection; the socket server must serve one client.
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/** Starts PGlite on `dataDir` ("memory://" for a throwaway database) and serves it on 127.0.0.1. */
export async function startEmbeddedPostgres(
  dataDir: string,
): Promise<EmbeddedPostgres> {
  if (!dataDir.startsWith("memory://")) {
    await Deno.mkdir(dataDir, { recursive: true });
  }
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
