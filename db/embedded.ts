// The embedded default: PGlite behind a loopback socket, so the postgres.js code path is the same
// as on a real PostgreSQL. PGlite is one connection; the socket server must serve one client.
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * PostgreSQL settings of the embedded database, on top of PGlite's own. Its shared buffers live
 * in the process's WebAssembly memory and are all touched at start: PGlite's default of 128 MB
 * was the largest part of an idle instance's memory. The pages it reads come from the operating
 * system's file cache beyond them (docs/operations.md, "Memory").
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: "32MB",
};

/** Starts PGlite on `dataDir` ("memory://" for a throwaway database) and serves it on 127.0.0.1. */
export async function startEmbeddedPostgres(
  dataDir: string,
): Promise<EmbeddedPostgres> {
  const inMemory = dataDir.startsWith("memory://");
  const lock = inMemory ? null : await lockDataDir(dataDir);
  try {
    if (!inMemory) await initialiseDataDir(dataDir);
    const db = await PGlite.create(dataDir, {
      startParams: [
        ...PGlite.defaultStartParams,
        ...Object.entries(EMBEDDED_SETTINGS).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
      ],
    });
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
  } catch (err) {
    lock?.close();
    throw err;
  }
}

/**
 * A data directory's first start creates its cluster (initdb). In this process that would leave
 * a second WebAssembly instance and what it allocated behind, garbage the engine collects late
 * or never: the instance then idled at twice its memory until restarted. So the cluster is made
 * by a worker, whose memory is returned when it is terminated, in `.initdb` inside the
 * directory, and its files are then moved into place with PG_VERSION (what marks a cluster)
 * last: a first start killed half-way leaves no half-made cluster, and the next start makes it
 * again.
 */
async function initialiseDataDir(dataDir: string): Promise<void> {
  if (await exists(`${dataDir}/PG_VERSION`)) return;
  const staging = `${dataDir}/.initdb`;
  await Deno.remove(staging, { recursive: true }).catch(() => {});
  const worker = new Worker(new URL("./embedded_initdb.ts", import.meta.url), { type: "module" });
  try {
    const answer = await new Promise<{ ok: boolean; message?: string }>((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message));
      };
      worker.postMessage({ dataDir: staging });
    });
    if (!answer.ok) throw new Error(`creating the embedded database failed: ${answer.message}`);
  } finally {
    worker.terminate();
  }
  const names = [...Deno.readDirSync(staging)].map((e) => e.name).filter((n) => n !== "PG_VERSION");
  for (const name of [...names, "PG_VERSION"]) {
    // Left by a first start killed while moving: this cluster's files replace it.
    await Deno.remove(`${dataDir}/${name}`, { recursive: true }).catch(() => {});
    await Deno.rename(`${staging}/${name}`, `${dataDir}/${name}`);
  }
  await Deno.remove(staging, { recursive: true });
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
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
