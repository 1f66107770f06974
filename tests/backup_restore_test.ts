// deno task backup, restore and move (cli/backup.ts) as a self-hoster runs them: the real tasks
// on an instance filled by the real server through its API, on the embedded database and on
// PostgreSQL, each way round. After each, every table holds what the source held (row for row,
// the feed's positions and the cursor secret included), and the restored server answers as the
// source did: links and their counters, analytics, the history export, the feed (a cursor issued
// before reads on after it, without a gap or a repeat), a destination's place, feed tokens, API
// keys, accounts' setup links and dashboard sessions. Then what must not happen does not: an
// interrupted backup leaves no file, an interrupted or refused restore leaves the target empty,
// and both run again.
import assert from "node:assert/strict";
import postgres from "postgres";
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { startEmbeddedPostgres } from "../db/embedded.ts";
import { migrate, migrationList } from "../db/migrate.ts";
import { Progress } from "../cli/progress.ts";
import { migrateUpTo } from "./helpers/database.ts";
import { signInOverHttp } from "./helpers/dashboard.ts";
import { listening, startService } from "./helpers/process.ts";
import { eventsOf, startReceiver } from "./helpers/receiver.ts";
import { generateLink, ingest, sdkHeaders } from "./helpers/sdk.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createFeedToken,
  createProject,
} from "./helpers/server.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const PG_BASE = Deno.env.get("DATABASE_URL");
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";

/** A database the tasks and the server are pointed at: DATA_DIR, or DATABASE_URL. */
interface Place {
  kind: "embedded" | "postgresql";
  env: Record<string, string>;
  /** A connection of the test's own (the server and the tasks must be stopped on the embedded one). */
  open(): Promise<{ sql: postgres.Sql; close(): Promise<void> }>;
  drop(): Promise<void>;
}

async function embeddedPlace(): Promise<Place> {
  const dir = await Deno.makeTempDir({ prefix: "backup-test-" });
  const dataDir = `${dir}/data`;
  return {
    kind: "embedded",
    env: { DATA_DIR: dataDir },
    async open() {
      const db = await startEmbeddedPostgres(dataDir);
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      return {
        sql,
        async close() {
          await sql.end();
          await db.stop();
        },
      };
    },
    drop: () => Deno.remove(dir, { recursive: true }),
  };
}

async function postgresPlace(): Promise<Place> {
  const name = `t_backup_${Date.now().toString(36)}_${crypto.randomUUID().slice(0, 6)}`;
  const url = await createDatabase(PG_BASE!, name);
  return {
    kind: "postgresql",
    env: { DATABASE_URL: url },
    open() {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      return Promise.resolve({ sql, close: () => sql.end() });
    },
    drop: () => dropDatabase(PG_BASE!, name),
  };
}

/** The environment every process of this file gets: the place's, and what a run needs. */
function envOf(place: Place, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1", ...place.env, ...extra };
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const v = Deno.env.get(name);
    if (v !== undefined) env[name] = v;
  }
  return env;
}

interface TaskRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `deno task <name> -- <arg>` with exactly the task's permissions, as a self-hoster runs it. */
async function task(name: string, arg: string, env: Record<string, string>): Promise<TaskRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", name, "--", arg],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

function assertTaskOk(run: TaskRun, what: string): void {
  assert.equal(run.code, 0, `${what}: exit ${run.code}\n${run.stdout}\n${run.stderr}`);
  assert.doesNotMatch(run.stderr, /PermissionDenied|NotCapable|Requires \w+ access/);
}

/** main.ts on the place (the source, or a restored target), until `use` returns. */
async function withServer<T>(
  place: Place,
  use: (url: string) => Promise<T>,
): Promise<T> {
  const p = startService({
    ...envOf(place),
    ADMIN_TOKEN,
    DESTINATIONS_ALLOW_PRIVATE: "true",
    FEED_RATE_LIMIT: "100000",
  });
  try {
    return await use(await listening(p, 180_000));
  } finally {
    await p.stop();
  }
}

/** Every kept table's rows as JSON text, sorted, and every sequence's value. */
async function contents(place: Place): Promise<Map<string, string[]>> {
  const { sql, close } = await place.open();
  try {
    const tables = await sql<{ name: string }[]>`
      select c.relname as name from pg_class c
      where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
        and not c.relispartition and c.relname not in ('migrations', 'live_streams')
      order by 1
    `;
    const out = new Map<string, string[]>();
    for (const { name } of tables) {
      const rows = await sql.unsafe(`select row_to_json(t)::text as j from "${name}" t`);
      out.set(name, rows.map((r) => r.j as string).sort());
    }
    const sequences = await sql<{ name: string }[]>`
      select relname as name from pg_class
      where relnamespace = current_schema()::regnamespace and relkind = 'S'
        and relname <> 'migrations_migration_id_seq'
      order by 1
    `;
    for (const { name } of sequences) {
      const [s] = await sql.unsafe(`select last_value::text as v, is_called from "${name}"`);
      out.set(`sequence ${name}`, [`${s!.v} ${s!.is_called}`]);
    }
    return out;
  } finally {
    await close();
  }
}

function assertSameContents(got: Map<string, string[]>, want: Map<string, string[]>): void {
  assert.deepEqual([...got.keys()], [...want.keys()]);
  for (const [name, rows] of want) {
    assert.deepEqual(got.get(name), rows, `${name} differs after the restore`);
  }
}

interface Filled {
  key: string;
  productionId: number;
  hashid: string;
  paths: string[];
  token: string;
  /** The feed's event ids in order, and the cursors after all of them and after the first two. */
  feedIds: string[];
  cursorAll: string;
  cursorTwo: string;
  apiKey: string;
  setupToken: string;
  session: string;
  destinationId: number;
  /** Ids the destination's receiver got before the backup. */
  delivered: string[];
  /** The answers the restored server must give alike. */
  answers: Record<string, string>;
}

async function feedPage(base: string, f: { productionId: number; token: string }, query = "") {
  const res = await call(base, "GET", `/api/v1/projects/${f.productionId}/event_stream${query}`, {
    headers: { Authorization: `Bearer ${f.token}` },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { events: { id: string }[]; next_after: string };
}

/** Everything a restored server is asked again. */
async function answers(base: string, f: Omit<Filled, "answers">): Promise<Record<string, string>> {
  const day = new Date().toISOString().slice(0, 10);
  const next = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const get = async (path: string, headers: Record<string, string>) => {
    const res = await call(base, "GET", path, { headers });
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    return res.text;
  };
  const sdk = sdkHeaders(f.key, "production");
  return {
    metrics: await get("/api/v1/sdk/metrics_for_project", sdk),
    link: await get(`/api/v1/sdk/link/${f.paths[0]}`, sdk),
    analytics: await get(
      `/api/v1/projects/${f.productionId}/analytics?from=${day}&to=${next}&interval=day` +
        `&metrics=views,opens,installs,revenue&group_by=link`,
      adminHeaders,
    ),
    export: await get(
      `/api/v1/projects/${f.productionId}/export?from=${day}&to=${next}`,
      adminHeaders,
    ),
    tokens: await get(`/api/v1/projects/${f.productionId}/event_stream_tokens`, adminHeaders),
    keys: await get(`/api/v1/projects/${f.productionId}/api_keys`, adminHeaders),
    accounts: await get("/api/v1/admin/accounts", adminHeaders),
    audit: await get("/api/v1/admin/audit_log", adminHeaders),
  };
}

/** Fills the place through the API of a real server, and notes what it answered. */
async function fill(place: Place, receiverUrl: string, delivered: () => string[]): Promise<Filled> {
  return await withServer(place, async (base) => {
    const p = await createProject(base, { name: `Backed up ${place.kind}` });
    const paths: string[] = [];
    for (let i = 0; i < 3; i++) {
      paths.push(
        await generateLink(base, p.key, "production", {
          title: `Link ${i}`,
          ios_custom_redirect: { url: "https://apps.apple.com/app/id1" },
        }),
      );
    }
    const token = (await createFeedToken(base, p.productionId)).value;
    const made = await call(base, "POST", `/api/v1/projects/${p.productionId}/destinations`, {
      headers: adminHeaders,
      body: { url: receiverUrl },
    });
    assert.equal(made.status, 201, made.text);
    const now = () => new Date().toISOString();
    await ingest(base, p.key, "production", [
      { type: "open", occurred_at: now(), link_path: paths[0] },
      { type: "install", occurred_at: now(), link_path: paths[0], id: "device-1-install" },
      {
        type: "purchase",
        name: "purchase",
        occurred_at: now(),
        link_path: paths[1],
        purchase: {
          transaction_id: "t-1",
          version: 1,
          amount: 499,
          currency: "EUR",
          product_id: "pro",
          store: "app_store",
        },
      },
      { type: "custom", name: "level_up", occurred_at: now(), user: { id: "u-1" } },
    ]);
    for (const path of paths.slice(0, 2)) {
      const r = await call(base, "GET", `/${path}`, { headers: { "User-Agent": IPHONE } });
      assert.equal(r.status, 302);
    }
    // The destination receives what is captured so far; then more is captured while it is
    // paused, a backlog that travels with its place.
    for (let i = 0; i < 120 && delivered().length < 6; i++) {
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(delivered().length, 6, "the destination got the first six events");
    const paused = await call(
      base,
      "PATCH",
      `/api/v1/projects/${p.productionId}/destinations/${made.body.destination.id}`,
      { headers: adminHeaders, body: { paused: true } },
    );
    assert.equal(paused.status, 200, paused.text);
    await ingest(base, p.key, "production", [
      { type: "open", occurred_at: now(), link_path: paths[2] },
      { type: "reinstall", occurred_at: now(), link_path: paths[2] },
    ]);
    const key = await call(base, "POST", `/api/v1/projects/${p.productionId}/api_keys`, {
      headers: adminHeaders,
      body: { name: "ci", scopes: ["links:read"] },
    });
    assert.equal(key.status, 201, key.text);
    const account = await call(base, "POST", "/api/v1/admin/accounts", {
      headers: adminHeaders,
      body: { email: `ada-${place.kind}@example.test`, name: "Ada" },
    });
    assert.equal(account.status, 201, account.text);
    const session = (await signInOverHttp(base)).cookie;

    // The feed, read whole, and read two events in: the cursors a reader saved.
    const all = await feedPage(base, { productionId: p.productionId, token });
    const two = await feedPage(base, { productionId: p.productionId, token }, "?limit=2");
    assert.equal(all.events.length, 8);
    const filled = {
      key: p.key,
      productionId: p.productionId,
      hashid: p.hashid,
      paths,
      token,
      feedIds: all.events.map((e) => e.id),
      cursorAll: all.next_after,
      cursorTwo: two.next_after,
      apiKey: key.body.api_key.value as string,
      setupToken: new URL(account.body.setup_url).searchParams.get("token")!,
      session,
      destinationId: made.body.destination.id as number,
      delivered: [...delivered()],
    };
    return { ...filled, answers: await answers(base, filled) };
  });
}

/** The restored server answers as the source did, and reads on from the saved cursors. */
async function verify(
  target: Place,
  f: Filled,
  delivered: () => string[],
): Promise<void> {
  await withServer(target, async (base) => {
    assert.deepEqual(await answers(base, f), f.answers);
    const auth = { productionId: f.productionId, token: f.token };
    // The old cursors, with nothing new: an empty page, and the six events after the second.
    assert.deepEqual((await feedPage(base, auth, `?after=${f.cursorAll}`)).events, []);
    assert.deepEqual(
      (await feedPage(base, auth, `?after=${f.cursorTwo}`)).events.map((e) => e.id),
      f.feedIds.slice(2),
    );
    // Events captured after the restore come after every cursor issued before it, once each.
    const now = new Date().toISOString();
    await ingest(base, f.key, "production", [
      { type: "open", occurred_at: now, link_path: f.paths[0] },
      { type: "session", occurred_at: now, time_spent: 12 },
    ]);
    const fresh = await feedPage(base, auth, `?after=${f.cursorAll}`);
    assert.equal(fresh.events.length, 2, JSON.stringify(fresh));
    assert.ok(fresh.events.every((e) => !f.feedIds.includes(e.id)));
    const fromTwo = await feedPage(base, auth, `?after=${f.cursorTwo}`);
    assert.deepEqual(
      fromTwo.events.map((e) => e.id),
      [...f.feedIds.slice(2), ...fresh.events.map((e) => e.id)],
    );
    assert.deepEqual(
      (await feedPage(base, auth)).events.map((e) => e.id),
      [...f.feedIds, ...fresh.events.map((e) => e.id)],
    );
    // The idempotency key travelled: the same install again is a duplicate.
    const again = await ingest(base, f.key, "production", [
      { type: "install", occurred_at: now, link_path: f.paths[0], id: "device-1-install" },
    ]);
    assert.deepEqual(again, { accepted: 0, duplicates: 1 });
    // The API key, the dashboard session and the account's setup link still work.
    const links = await call(base, "GET", `/api/v1/projects/${f.productionId}/links`, {
      headers: { Authorization: `Bearer ${f.apiKey}` },
    });
    assert.equal(links.status, 200, links.text);
    assert.equal(links.body.links.length, 3);
    const dashboard = await fetch(`${base}/dashboard`, {
      headers: { cookie: f.session },
      redirect: "manual",
    });
    assert.equal(dashboard.status, 200, "the dashboard session is still signed in");
    await dashboard.body?.cancel();
    const setup = await call(base, "GET", `/dashboard/setup?token=${f.setupToken}`);
    assert.equal(setup.status, 200);
    assert.match(setup.text, /name="password"/);
    // The paused destination, resumed, receives its backlog and the new events: nothing twice.
    const resumed = await call(
      base,
      "PATCH",
      `/api/v1/projects/${f.productionId}/destinations/${f.destinationId}`,
      { headers: adminHeaders, body: { paused: false } },
    );
    assert.equal(resumed.status, 200, resumed.text);
    const everything = [...f.feedIds, ...fresh.events.map((e) => e.id)];
    for (let i = 0; i < 240 && delivered().length < everything.length; i++) {
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.deepEqual(delivered(), everything);
  });
}

/** A receiver that keeps the ids of the events delivered to it, in order. */
function idsReceiver() {
  const r = startReceiver();
  return { receiver: r, ids: () => r.received.flatMap((x) => eventsOf(x).map((e) => e.id)) };
}

async function backupFile(): Promise<string> {
  return `${await Deno.makeTempDir({ prefix: "backup-file-" })}/instance.backup`;
}

for (
  const [name, source, targetKind] of [
    ["PostgreSQL → backup → restore on PostgreSQL", "postgresql", "postgresql"],
    ["PostgreSQL → backup → restore on the embedded database", "postgresql", "embedded"],
    ["embedded → backup → restore on the embedded database", "embedded", "embedded"],
    ["embedded → move → PostgreSQL", "embedded", "move"],
  ] as const
) {
  const needsPostgres = source === "postgresql" || targetKind !== "embedded";
  Deno.test({
    name: `${name}: nothing is lost, and saved cursors read on`,
    ignore: needsPostgres && !PG_BASE,
    async fn() {
      const src = source === "postgresql" ? await postgresPlace() : await embeddedPlace();
      const tgt = targetKind === "embedded" ? await embeddedPlace() : await postgresPlace();
      const { receiver, ids } = idsReceiver();
      const file = await backupFile();
      try {
        const filled = await fill(src, receiver.url, ids);
        const before = await contents(src);
        if (targetKind === "move") {
          const moved = await task("move", (tgt.env.DATABASE_URL)!, envOf(src));
          assertTaskOk(moved, "move");
          assert.match(moved.stderr, /moved: \d+ tables, \d+ rows/);
        } else {
          const backedUp = await task("backup", file, envOf(src));
          assertTaskOk(backedUp, "backup");
          assert.match(backedUp.stderr, /backup written: .*, \d+ tables, \d+ rows/);
          const restored = await task("restore", file, envOf(tgt));
          assertTaskOk(restored, "restore");
          assert.match(restored.stderr, /restored: \d+ tables, \d+ rows/);
          // PostgreSQL's transaction ids run far ahead of a new embedded database's: the
          // restore moves the target's feed positions past the backup's.
          if (source === "postgresql" && targetKind === "embedded") {
            assert.match(restored.stderr, /feed positions: .*offset \d+/);
          }
        }
        assertSameContents(await contents(tgt), before);
        await verify(tgt, filled, ids);
      } finally {
        await receiver.close();
        await src.drop();
        await tgt.drop();
        await Deno.remove(file.replace(/\/[^/]+$/, ""), { recursive: true });
      }
    },
  });
}

/** A database with `n` rows in one table: enough for a task to be interrupted in the middle. */
async function bulkPlace(n: number): Promise<Place> {
  const place = PG_BASE ? await postgresPlace() : await embeddedPlace();
  // The embedded database serves one connection at a time: migrated first, then filled.
  if (place.kind === "postgresql") await migrate(place.env.DATABASE_URL!);
  else {
    const db = await startEmbeddedPostgres(place.env.DATA_DIR!);
    try {
      await migrate(db.url);
    } finally {
      await db.stop();
    }
  }
  const { sql, close } = await place.open();
  try {
    await sql`
      insert into retired_link_paths (path, retired_at)
      select 'bulk-' || g || '-' || md5(g::text), now() from generate_series(1, ${n}) g
    `;
  } finally {
    await close();
  }
  return place;
}

/** Starts a task, sends it SIGINT once its stderr matches `when`, and waits for it. */
async function interruptTask(
  name: string,
  arg: string,
  env: Record<string, string>,
  when: RegExp,
): Promise<TaskRun & { interruptedAt: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", name, "--", arg],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  let stderr = "";
  let stdout = "";
  let interruptedAt = "";
  const decoder = new TextDecoder();
  const errDone = (async () => {
    for await (const chunk of child.stderr) {
      stderr += decoder.decode(chunk, { stream: true });
      if (!interruptedAt && when.test(stderr)) {
        interruptedAt = stderr;
        // The group: `deno task` and the `deno run` it started, as a terminal's Ctrl-C does.
        Deno.kill(-child.pid, "SIGINT");
      }
    }
  })();
  const outDone = (async () => {
    for await (const chunk of child.stdout) stdout += decoder.decode(chunk, { stream: true });
  })();
  const status = await child.status;
  await Promise.all([errDone, outDone]);
  return { code: status.code, stdout, stderr, interruptedAt };
}

async function tableCount(place: Place): Promise<number> {
  const { sql, close } = await place.open();
  try {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_class
      where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p')
    `;
    return row!.n;
  } finally {
    await close();
  }
}

Deno.test("interrupted, cut short or refused: no backup file is left, the target stays empty, and each runs again", async () => {
  const rows = 300_000;
  const src = await bulkPlace(rows);
  const tgt = PG_BASE ? await postgresPlace() : await embeddedPlace();
  const file = await backupFile();
  try {
    // A backup interrupted (Ctrl-C) once its progress shows: no file, no partial file.
    const cut = await interruptTask("backup", file, envOf(src), /backup .*: 0 of [\d,]+ rows/);
    assert.ok(cut.interruptedAt, cut.stderr);
    assert.equal(cut.code, 130, cut.stderr);
    assert.match(cut.stderr, /interrupted: no backup written/);
    await assert.rejects(Deno.stat(file), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(`${file}.partial`), Deno.errors.NotFound);
    // Run again: whole.
    assertTaskOk(await task("backup", file, envOf(src)), "backup again");

    // A file cut short is refused, and nothing is written.
    const whole = await Deno.readFile(file);
    const short = `${file}.short`;
    await Deno.writeFile(short, whole.slice(0, Math.floor(whole.length / 2)));
    const refused = await task("restore", short, envOf(tgt));
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /cut short|cannot be read/);
    assert.equal(await tableCount(tgt), 0);

    // A restore interrupted half-way: the target is left without a table, as it was.
    const stopped = await interruptTask(
      "restore",
      file,
      envOf(tgt),
      /restore .*: 0 of [\d,]+ rows/,
    );
    assert.ok(stopped.interruptedAt, stopped.stderr);
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(stopped.stderr, /interrupted: nothing was loaded/);
    assert.equal(await tableCount(tgt), 0);
    // Run again: whole.
    const restored = await task("restore", file, envOf(tgt));
    assertTaskOk(restored, "restore again");
    assert.match(restored.stderr, new RegExp(`restored: \\d+ tables, ${rows} rows`));
    assertSameContents(await contents(tgt), await contents(src));

    // Restoring into a database that holds rows is refused, and changes nothing.
    const twice = await task("restore", file, envOf(tgt));
    assert.equal(twice.code, 2, twice.stderr);
    assert.match(twice.stderr, /the target database is not empty \(.*retired_link_paths/);
    assertSameContents(await contents(tgt), await contents(src));
  } finally {
    await src.drop();
    await tgt.drop();
    await Deno.remove(file.replace(/\/[^/]+$/, ""), { recursive: true });
  }
});

Deno.test("backup of the embedded database refuses while its server runs, saying why", async () => {
  const place = await embeddedPlace();
  const file = await backupFile();
  try {
    await withServer(place, async () => {
      const run = await task("backup", file, envOf(place));
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /in use by another process \(stop the running server first/);
    });
    await assert.rejects(Deno.stat(file), Deno.errors.NotFound);
    const empty = await embeddedPlace();
    const missing = await task("backup", file, envOf(empty));
    await empty.drop();
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /there is no embedded database in DATA_DIR/);
  } finally {
    await place.drop();
    await Deno.remove(file.replace(/\/[^/]+$/, ""), { recursive: true });
  }
});

Deno.test({
  name: "a backup of an earlier version's database restores at that version, then is upgraded",
  ignore: !PG_BASE,
  async fn() {
    const src = await postgresPlace();
    const tgt = await postgresPlace();
    const file = await backupFile();
    try {
      // As the version before migration 00024 left it: no feed_xid_offset() yet.
      await migrateUpTo(src.env.DATABASE_URL!, 23);
      const { sql, close } = await src.open();
      try {
        await sql`insert into instance_settings (key, value) values ('cursor_secret', 'kept')`;
        await sql`
          insert into projects (hashid, name, enterprise, key_hash)
          values ('old1', 'Older', true, repeat('a', 64))
        `;
      } finally {
        await close();
      }
      assertTaskOk(await task("backup", file, envOf(src)), "backup");
      assertTaskOk(await task("restore", file, envOf(tgt)), "restore");
      const restored = await tgt.open();
      try {
        const migrations = await restored.sql<{ id: number }[]>`
          select migration_id as id from migrations order by 1
        `;
        assert.deepEqual(migrations.map((m) => m.id), migrationList().map((m) => m.id));
        assert.deepEqual([...await restored.sql`select hashid, name from projects`], [
          { hashid: "old1", name: "Older" },
        ]);
        assert.deepEqual([...await restored.sql`select value from instance_settings`], [
          { value: "kept" },
        ]);
        const [f] = await restored.sql`select feed_xid_offset()::int as offset`;
        assert.equal(f!.offset, 0, "the same cluster's ids are ahead of the backup's already");
      } finally {
        await restored.close();
      }
    } finally {
      await src.drop();
      await tgt.drop();
      await Deno.remove(file.replace(/\/[^/]+$/, ""), { recursive: true });
    }
  },
});

Deno.test("progress: a bar redrawn in place on a terminal, a line now and then elsewhere", () => {
  const sink = (terminal: boolean) => {
    let text = "";
    return {
      out: {
        writeSync(b: Uint8Array) {
          text += new TextDecoder().decode(b);
          return b.length;
        },
        isTerminal: () => terminal,
      },
      text: () => text,
    };
  };
  const tty = sink(true);
  const bar = new Progress("backup x", 200, tty.out);
  bar.update(50, 2048, true);
  bar.done(200, 10 * 1024 * 1024);
  assert.equal(
    tty.text(),
    "\r\x1b[2K[########----------------------]  25% backup x: 50 of 200 rows, 2.0 KiB" +
      "\r\x1b[2K[##############################] 100% backup x: 200 of 200 rows, 10.0 MiB\n",
  );
  const log = sink(false);
  const lines = new Progress("restore y", 1_500_000, log.out);
  lines.update(0, 0, true);
  lines.update(10, 100); // within five seconds of the last line: not written
  lines.done(1_500_000, 3 * 1024 ** 3);
  assert.equal(
    log.text(),
    "restore y: 0 of 1,500,000 rows, 0 B\nrestore y: 1,500,000 of 1,500,000 rows, 3.00 GiB\n",
  );
});
