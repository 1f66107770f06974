// Creating and dropping a whole database on the server of a DATABASE_URL, for tests and
// benchmarks. On a plain PostgreSQL that is one CREATE DATABASE. On a Citus coordinator (its
// database lists worker nodes in pg_dist_node) a new database is a new cluster: it is created on
// every worker too, the extension is created in each, and the coordinator's copy registers the
// same nodes (docs/SCALING.md, "Running on Citus"). Migrations then distribute the tables
// (db/migrations/00018_citus).
import postgres from "postgres";

interface Node {
  nodename: string;
  nodeport: number;
}

/** The worker nodes of the Citus cluster whose coordinator `sql` is, [] when not one. */
async function workerNodes(sql: postgres.Sql): Promise<Node[] | null> {
  const [ext] = await sql<{ citus: boolean }[]>`
    select exists (select from pg_extension where extname = 'citus') as citus
  `;
  if (!ext?.citus) return null;
  return await sql<Node[]>`
    select nodename, nodeport from pg_dist_node
    where groupid <> 0 and noderole = 'primary' and isactive
    order by nodeid
  `;
}

function nodeUrl(base: string, node: Node | null, name: string): string {
  const u = new URL(base);
  if (node) {
    u.hostname = node.nodename;
    u.port = String(node.nodeport);
  }
  u.pathname = `/${name}`;
  return u.toString();
}

async function onNode(url: string, ...statements: string[]): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    for (const s of statements) await sql.unsafe(s);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Creates database `name` on the server of `base` (a URL of an existing database there), and on
 * a Citus coordinator the same database on each worker, made one cluster. The new database's URL.
 */
export async function createDatabase(base: string, name: string): Promise<string> {
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  try {
    const workers = await workerNodes(admin);
    await admin.unsafe(`create database "${name}"`);
    if (workers === null) return nodeUrl(base, null, name);
    await Promise.all(workers.map(async (w) => {
      await onNode(nodeUrl(base, w, "postgres"), `create database "${name}"`);
      await onNode(nodeUrl(base, w, name), "create extension citus");
    }));
    const host = new URL(base);
    await onNode(
      nodeUrl(base, null, name),
      "create extension citus",
      `select citus_set_coordinator_host('${host.hostname}', ${Number(host.port || 5432)})`,
      ...workers.map((w) => `select citus_add_node('${w.nodename}', ${w.nodeport})`),
    );
    return nodeUrl(base, null, name);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** Drops database `name` (on every node of a Citus cluster), ending its sessions. */
export async function dropDatabase(base: string, name: string): Promise<void> {
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  try {
    const workers = await workerNodes(admin);
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await Promise.all(
      (workers ?? []).map((w) =>
        onNode(nodeUrl(base, w, "postgres"), `drop database if exists "${name}" with (force)`)
      ),
    );
  } finally {
    await admin.end({ timeout: 5 });
  }
}
