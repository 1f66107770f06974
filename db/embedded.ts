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
  const lock = dataDir.startsWith("memory://") ? null : await lockDataDir(dataDir);
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0 });
  await server.start();
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
      lock?.close();
    },
  };
}

/**
 * PGlite has no lock of its own: two processes on one data directory would corrupt it. An
 * exclusive lock on a file inside it, released when the process ends, keeps a second one out.
 */
async function lockDataDir(dataDir: string): Promise<Deno.FsFile> {
  await Deno.mkdir(dataDir, { recursive: true });
  const file = await Deno.open(`${dataDir}/.lock`, { create: true, write: true });
  if (!(await file.tryLock(true))) {
    file.close();
    throw new Error(
      `the embedded database in ${dataDir} is in use by another process ` +
        "(stop the running server first, or use the HTTP admin API)",
    );
  }
  return file;
}
