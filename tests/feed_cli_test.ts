// cli/feed.ts as a real process: tails a live feed to NDJSON, stops on Ctrl-C with the cursor
// saved, resumes without duplicates; refuses a token flag; stops with the recovery on a 401.
import assert from "node:assert/strict";
import { ingestMany, sleep } from "./helpers/client.ts";
import { createFeedToken, createProject, startTestServer } from "./helpers/server.ts";
import { MAX_STREAM_MS } from "../services/feed/live_tail.ts";

const CLI = new URL("../cli/feed.ts", import.meta.url).pathname;
const srv = await startTestServer({ config: { FEED_RATE_LIMIT: "100000" } });
Deno.test.afterAll(() => srv.close());

interface CliRun {
  /** Complete stdout lines so far. */
  lines(): string[];
  stderr(): string;
  child: Deno.ChildProcess;
  done: Promise<{ code: number; stdout: string; stderr: string }>;
}

/** Runs the CLI as the task does (with the literal `--` first). */
function runCli(args: string[], env: Record<string, string>): CliRun {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-write",
      CLI,
      "--",
      ...args,
    ],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, sink: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) sink(decoder.decode(chunk, { stream: true }));
  };
  const pumped = Promise.all([
    pump(child.stdout, (s) => (out += s)),
    pump(child.stderr, (s) => (err += s)),
  ]);
  return {
    child,
    lines: () => out.split("\n").slice(0, -1),
    stderr: () => err,
    done: (async () => {
      const status = await child.status;
      await pumped;
      return { code: status.code, stdout: out, stderr: err };
    })(),
  };
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

Deno.test("feed CLI: tails a live feed to NDJSON, stops on Ctrl-C with the cursor saved, resumes without duplicates", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  const dir = await Deno.makeTempDir();
  const cursorFile = `${dir}/feed.cursor`;
  const args = [
    "--url",
    srv.url,
    "--project-id",
    String(p.productionId),
    "--types",
    "install,custom",
    "--cursor-file",
    cursorFile,
    "--limit",
    "100",
  ];
  const env = { FEED_TOKEN: token.value };
  await ingestMany(srv.url, p.key, 250, { prefix: "x" });
  // Not selected by --types: never printed.
  await ingestMany(srv.url, p.key, 20, { prefix: "o", type: "open" });

  const tail = runCli([...args, "--follow", "--poll-interval", "50"], env);
  await waitFor("the first 250 lines", () => tail.lines().length >= 250);
  await ingestMany(srv.url, p.key, 150, { prefix: "y", type: "custom" });
  await waitFor("the live 150 lines", () => tail.lines().length >= 400);
  tail.child.kill("SIGINT");
  const first = await tail.done;
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /stopping after the current page/);
  assert.match(
    first.stderr,
    /feed: 400 events, \d+ pages, 0 duplicates, 0 retries, lag [^,]+, .*stopped; cursor saved/,
  );
  const firstEvents = first.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(firstEvents.length, 400);
  assert.ok(firstEvents.every((e) => e.schema_version === 1 && e.project.id === p.hashid));
  assert.deepEqual([...new Set(firstEvents.map((e) => e.type))].sort(), ["custom", "install"]);

  const saved = JSON.parse(await Deno.readTextFile(cursorFile));
  assert.equal(saved.format, 1);
  const [key, cursor] = Object.entries(saved.cursors as Record<string, { after: string }>)[0]!;
  assert.deepEqual(JSON.parse(key), [srv.url, String(p.productionId), "cli", [
    "custom",
    "install",
  ]]);
  assert.equal(typeof cursor.after, "string");

  // More events while it was stopped; a second run continues from the cursor and stops when
  // caught up.
  await ingestMany(srv.url, p.key, 120, { prefix: "z" });
  const second = await runCli(args, env).done;
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stderr, /feed: 120 events, .*done/);
  const secondEvents = second.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(secondEvents.length, 120);
  const all = [...firstEvents, ...secondEvents].map((e) => e.id as string);
  assert.equal(new Set(all).size, 520);

  // Caught up: a third run prints nothing.
  const third = await runCli(args, env).done;
  assert.equal(third.code, 0, third.stderr);
  assert.equal(third.stdout, "");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("feed CLI: a usage error names the unknown option, never a value", async () => {
  const env = { FEED_TOKEN: "est_" + "s".repeat(43) };
  const base = ["--url", srv.url, "--project-id", "1"];

  const unknown = await runCli([...base, "--folow"], env).done;
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^feed: unknown option --folow\n/);

  const withValue = await runCli([...base, "--cursor=s3cret-value"], env).done;
  assert.equal(withValue.code, 2);
  assert.match(withValue.stderr, /^feed: unknown option --cursor\n/);
  assert.doesNotMatch(withValue.stderr, /s3cret-value/);

  const missing = await runCli(["--project-id", "1", "--url"], env).done;
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^feed: Option --url <value> argument missing\n/);

  const stray = await runCli([...base, "s3cret-positional"], env).done;
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /^feed: unexpected argument/);
  assert.doesNotMatch(stray.stderr, /s3cret-positional/);
});

Deno.test("feed CLI: the token comes from FEED_TOKEN only; a 401 stops with the recovery", async () => {
  const p = await createProject(srv.url);
  const dir = await Deno.makeTempDir();
  const base = [
    "--url",
    srv.url,
    "--project-id",
    String(p.productionId),
    "--cursor-file",
    `${dir}/c`,
  ];

  const flag = await runCli([...base, "--token", "est_abc"], { FEED_TOKEN: "est_abc" }).done;
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /FEED_TOKEN environment variable only/);
  assert.doesNotMatch(flag.stderr, /est_abc/);

  const missing = await runCli(base, { FEED_TOKEN: "" }).done;
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /set FEED_TOKEN/);

  const revoked = await runCli(base, { FEED_TOKEN: "est_" + "q".repeat(43) }).done;
  assert.equal(revoked.code, 1);
  assert.match(revoked.stderr, /answered 401 unauthorized/);
  assert.match(revoked.stderr, /Recovery: the feed token is invalid or revoked/);
  assert.equal(revoked.stdout, "");
  await assert.rejects(Deno.stat(`${dir}/c`), Deno.errors.NotFound);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("feed CLI --live: receives events ingested after it started, Ctrl-C saves, resumes without duplicates", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  const dir = await Deno.makeTempDir();
  const cursorFile = `${dir}/feed.cursor`;
  const args = [
    "--url",
    srv.url,
    "--project-id",
    String(p.productionId),
    "--types",
    "install,custom",
    "--cursor-file",
    cursorFile,
    "--live",
  ];
  const env = { FEED_TOKEN: token.value };
  await ingestMany(srv.url, p.key, 30, { prefix: "a" });
  await ingestMany(srv.url, p.key, 5, { prefix: "o", type: "open" });

  const live = runCli(args, env);
  await waitFor("the first 30 lines", () => live.lines().length >= 30);
  // Ingested after the stream opened: they arrive over it.
  await ingestMany(srv.url, p.key, 40, { prefix: "b", type: "custom" });
  await waitFor("the live 40 lines", () => live.lines().length >= 70);
  live.child.kill("SIGINT");
  const first = await live.done;
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /stopping after the current event/);
  assert.match(first.stderr, /feed: 70 events, 0 duplicates, 0 reconnects, stopped; cursor saved/);
  const firstEvents = first.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(firstEvents.length, 70);
  assert.deepEqual([...new Set(firstEvents.map((e) => e.type))].sort(), ["custom", "install"]);

  // Stopped: more events; the next run resumes from the saved cursor (shared with the pull
  // mode), without duplicates.
  await ingestMany(srv.url, p.key, 25, { prefix: "c" });
  const again = runCli(args, env);
  await waitFor("the 25 new lines", () => again.lines().length >= 25);
  again.child.kill("SIGINT");
  const second = await again.done;
  assert.equal(second.code, 0, second.stderr);
  const secondEvents = second.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(secondEvents.length, 25);
  const ids = [...firstEvents, ...secondEvents].map((e) => e.id as string);
  assert.equal(new Set(ids).size, 95);

  // The pull mode continues from the live mode's cursor: nothing new.
  const pull = await runCli(args.filter((a) => a !== "--live"), env).done;
  assert.equal(pull.code, 0, pull.stderr);
  assert.equal(pull.stdout, "");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("feed CLI --live: a refusal stops with the pull mode's recovery", async () => {
  const p = await createProject(srv.url);
  const dir = await Deno.makeTempDir();
  const base = [
    "--url",
    srv.url,
    "--project-id",
    String(p.productionId),
    "--cursor-file",
    `${dir}/c`,
    "--live",
  ];
  const revoked = await runCli(base, { FEED_TOKEN: "est_" + "q".repeat(43) }).done;
  assert.equal(revoked.code, 1);
  assert.match(revoked.stderr, /answered 401 unauthorized/);
  assert.match(revoked.stderr, /Recovery: the feed token is invalid or revoked/);
  assert.equal(revoked.stdout, "");

  const token = await createFeedToken(srv.url, p.productionId);
  const key = JSON.stringify([srv.url, String(p.productionId), "cli", []]);
  const stored = { after: "not-a-cursor", recent_ids: [], saved_at: new Date().toISOString() };
  await Deno.writeTextFile(`${dir}/c`, JSON.stringify({ format: 1, cursors: { [key]: stored } }));
  const badCursor = await runCli(base, { FEED_TOKEN: token.value }).done;
  assert.equal(badCursor.code, 1);
  assert.match(badCursor.stderr, /answered 400 bad_cursor/);
  assert.match(badCursor.stderr, /Recovery: restore the original saved cursor/);
  // The saved cursor is untouched.
  const saved = JSON.parse(await Deno.readTextFile(`${dir}/c`));
  assert.equal(saved.cursors[key].after, "not-a-cursor");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("feed CLI --live: a stream the server ends (after 1 h) reconnects from the saved cursor", async () => {
  const p = await createProject(srv.url);
  const token = await createFeedToken(srv.url, p.productionId);
  const dir = await Deno.makeTempDir();
  const args = [
    "--url",
    srv.url,
    "--project-id",
    String(p.productionId),
    "--cursor-file",
    `${dir}/c`,
    "--live",
  ];
  const live = runCli(args, { FEED_TOKEN: token.value });
  await ingestMany(srv.url, p.key, 10, { prefix: "before" });
  await waitFor("the first 10 lines", () => live.lines().length >= 10);
  // The stream reaches its 1 h limit: the server ends it, the CLI reconnects.
  srv.clock.advance(MAX_STREAM_MS);
  await waitFor("a reconnection", () => /reconnecting in \d+ms/.test(live.stderr()));
  await ingestMany(srv.url, p.key, 10, { prefix: "after" });
  await waitFor("the next 10 lines", () => live.lines().length >= 20);
  live.child.kill("SIGINT");
  const run = await live.done;
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /the stream ended/);
  assert.match(run.stderr, /feed: 20 events, 0 duplicates, [1-9]\d* reconnects, stopped/);
  const ids = run.stdout.trim().split("\n").map((l) => JSON.parse(l).id as string);
  assert.equal(ids.length, 20);
  assert.equal(new Set(ids).size, 20);
  await Deno.remove(dir, { recursive: true });
});
