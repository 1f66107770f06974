// The embedded database on a data directory: its settings, and its first start (the cluster made
// by a worker and moved into place, db/embedded.ts), also after a first start killed half-way.
import assert from "node:assert/strict";
import postgres from "postgres";
import { EMBEDDED_SETTINGS, startEmbeddedPostgres } from "../db/embedded.ts";

async function withEmbedded<T>(
  dataDir: string,
  use: (sql: postgres.Sql) => Promise<T>,
): Promise<T> {
  const db = await startEmbeddedPostgres(dataDir);
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    return await use(sql);
  } finally {
    await sql.end();
    await db.stop();
  }
}

function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test("embedded database: a first start makes the cluster, keeps it, and runs with its settings", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    await withEmbedded(dataDir, async (sql) => {
      const [row] = await sql<{ shared_buffers: string }[]>`show shared_buffers`;
      assert.equal(row!.shared_buffers, EMBEDDED_SETTINGS.shared_buffers);
      await sql`create table kept (v text)`;
      await sql`insert into kept values ('across a restart')`;
    });
    const files = names(dataDir);
    assert.ok(files.includes("PG_VERSION"), files.join(", "));
    assert.ok(!files.includes(".initdb"), "the staging directory is gone");
    await withEmbedded(dataDir, async (sql) => {
      assert.deepEqual([...await sql`select v from kept`], [{ v: "across a restart" }]);
    });
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("embedded database: what a first start killed half-way left is made again", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    // Killed while the worker made the cluster: a partial staging directory. And killed while
    // moving it into place: some of its directories moved, without PG_VERSION.
    await Deno.mkdir(`${dataDir}/.initdb/base`, { recursive: true });
    await Deno.writeTextFile(`${dataDir}/.initdb/half`, "made before the kill");
    await Deno.mkdir(`${dataDir}/global`);
    await Deno.writeTextFile(`${dataDir}/global/pg_control`, "not a control file");
    await withEmbedded(dataDir, async (sql) => {
      assert.deepEqual([...await sql`select 1 as one`], [{ one: 1 }]);
    });
    const files = names(dataDir);
    assert.ok(files.includes("PG_VERSION"));
    assert.ok(!files.includes(".initdb") && !files.includes("half"), files.join(", "));
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
