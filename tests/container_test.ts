// What can be checked of the Dockerfile, compose.yaml and the Caddyfile without running them
// (tests/container_engine_test.ts builds and runs the image, tests/caddy_test.ts runs Caddy).
// What the image copies exists and is not ignored, it runs the README's start command as a
// non-root user, its port, data directory and health check agree with config.ts and the served
// routes, the health check's own command, run as written, passes against a ready server and
// fails against none, and compose.yaml's Caddy reaches the service where config.ts makes it
// listen.
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { resolveConfig } from "../config.ts";
import { startTestServer } from "./helpers/server.ts";

const dockerfile = await Deno.readTextFile("Dockerfile");
const dockerignore = (await Deno.readTextFile(".dockerignore")).split("\n")
  .map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
const instructions = dockerfile.replace(/\\\n/g, " ").split("\n")
  .map((l) => l.trim()).filter((l) => l && !l.startsWith("#"))
  .map((l) => {
    const [, keyword, rest] = /^(\w+)\s+(.*)$/.exec(l)!;
    return { keyword: keyword!.toUpperCase(), args: rest!.trim() };
  });

function all(keyword: string): string[] {
  return instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}
function one(keyword: string): string {
  const found = all(keyword);
  assert.equal(found.length, 1, `one ${keyword} expected, found ${found.length}`);
  return found[0]!;
}

function env(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const args of all("ENV")) {
    for (const m of args.matchAll(/(\w+)=(\S+)/g)) out[m[1]!] = m[2]!;
  }
  return out;
}

Deno.test("every file the image copies exists and is not excluded by .dockerignore", async () => {
  const copies = all("COPY");
  assert.ok(copies.length >= 2);
  for (const copy of copies) {
    const parts = copy.split(/\s+/).filter((p) => !p.startsWith("--"));
    const sources = parts.slice(0, -1);
    for (const source of sources) {
      if (source === ".") continue;
      assert.ok((await Deno.stat(source)).isFile, `${source} is copied but missing`);
      assert.ok(!dockerignore.includes(source), `${source} is copied but ignored`);
    }
  }
  // What the process needs at run time reaches the image through `COPY . .`.
  for (const needed of ["main.ts", "app.ts", "config.ts", "deno.json", "deno.lock", "db"]) {
    assert.ok(!dockerignore.includes(needed), `${needed} must not be ignored`);
    await Deno.stat(needed);
  }
});

Deno.test("the image runs the README's start command, on CI's Deno, as a non-root user", async () => {
  const readme = await Deno.readTextFile("README.md");
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  const ci = await Deno.readTextFile(".ci/run");

  // The official image's entry point runs `deno` with CMD's arguments.
  assert.deepEqual(JSON.parse(one("CMD")), ["task", "start"]);
  assert.match(readme, /^deno task start\b/m);
  assert.match(config.tasks.start, /\bmain\.ts$/);
  // glibc's mmap threshold fixed at its initial 128 KiB: the embedded default's first start then
  // idles under 300 MB (docs/operations.md, "How much memory each setup needs").
  assert.match(config.tasks.start, /^MALLOC_MMAP_THRESHOLD_=131072 deno run /);

  const ciVersion = /^DENO_VERSION=(\S+)$/m.exec(ci)?.[1];
  assert.equal(one("FROM"), `denoland/deno:${ciVersion}`);

  const user = one("USER");
  assert.notEqual(user, "root");
  assert.notEqual(user, "0");
  const userIndex = instructions.findIndex((i) => i.keyword === "USER");
  const lastRun = instructions.findLastIndex((i) => i.keyword === "RUN");
  assert.ok(userIndex > lastRun, "USER comes after the last RUN, so the process is not root");
  // Dependencies are cached before the source is copied, so a code change reuses that layer.
  const firstCopy = instructions.findIndex((i) => i.keyword === "COPY");
  const install = instructions.findIndex((i) => i.keyword === "RUN" && /deno install/.test(i.args));
  const sourceCopy = instructions.findIndex((i) => i.keyword === "COPY" && i.args === ". .");
  assert.ok(firstCopy < install && install < sourceCopy);
});

Deno.test("port, data directory and health check agree with config.ts and the routes", async () => {
  const vars = env();
  const config = resolveConfig({ PORT: vars.PORT, DATA_DIR: vars.DATA_DIR });
  assert.equal(one("EXPOSE"), String(config.port));
  assert.equal(resolveConfig({}).port, config.port, "the image uses the default port");
  assert.deepEqual(JSON.parse(one("VOLUME")), [config.dataDir]);

  const healthcheck = one("HEALTHCHECK");
  const command = JSON.parse(healthcheck.slice(healthcheck.indexOf("CMD ") + 4)) as string[];
  assert.equal(command[0], "deno");
  assert.match(command.join(" "), /\/readyz/);

  // The health check's command, run as the image runs it, against a ready server and none.
  const srv = await startTestServer();
  try {
    const run = async (port: string) =>
      (await new Deno.Command(Deno.execPath(), {
        args: command.slice(1),
        env: { PORT: port, NO_COLOR: "1" },
        stdout: "null",
        stderr: "null",
      }).output()).code;
    assert.equal(await run(new URL(srv.url).port), 0);
    const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const unused = String(closed.addr.port);
    closed.close();
    assert.equal(await run(unused), 1);
  } finally {
    await srv.close();
  }
});

Deno.test("compose.yaml runs the image beside PostgreSQL with what config.ts requires", async () => {
  // deno-lint-ignore no-explicit-any
  const compose = parseYaml(await Deno.readTextFile("compose.yaml")) as any;
  const app = compose.services.app;
  const db = compose.services.db;
  assert.equal(app.build, ".");
  assert.match(db.image, /^postgres:15\b/);
  assert.equal(app.depends_on.db.condition, "service_healthy");
  assert.match(app.environment.DATABASE_URL, /^postgres:\/\/[^@]+@db:5432\//);
  // config.ts refuses DATABASE_URL without ADMIN_TOKEN: compose refuses to start without it.
  assert.match(app.environment.ADMIN_TOKEN, /^\$\{ADMIN_TOKEN:\?/);
  // Only Caddy is published: the service's port and its internal listener are not.
  assert.equal(app.ports, undefined);
  for (const name of Object.keys(app.environment)) {
    assert.match(
      await Deno.readTextFile("config.ts"),
      new RegExp(`\\b${name}\\b`),
      `${name} is not read by config.ts`,
    );
  }
});

Deno.test("compose.yaml's Caddy reaches the service where it listens and asks its internal port", async () => {
  // deno-lint-ignore no-explicit-any
  const compose = parseYaml(await Deno.readTextFile("compose.yaml")) as any;
  const { app, caddy } = compose.services;
  const caddyfile = await Deno.readTextFile("Caddyfile");
  const config = resolveConfig({
    DATABASE_URL: "postgres://links@db:5432/links",
    ADMIN_TOKEN: "a-secret-of-16-chars",
    METRICS_PORT: String(app.environment.METRICS_PORT),
    LINK_BASE_URL: "https://links.example.com",
  });
  // Caddy 2.6, the version tests/caddy_test.ts runs (Debian's), with the repository's Caddyfile.
  assert.match(caddy.image, /^caddy:2\.6\b/);
  assert.ok(caddy.volumes.includes("./Caddyfile:/etc/caddy/Caddyfile:ro"));
  assert.deepEqual(caddy.ports, ["80:80", "443:443", "443:443/udp"]);
  assert.equal(caddy.environment.APP, `app:${config.port}`);
  assert.equal(caddy.environment.APP_INTERNAL, `app:${config.metricsPort}`);
  // The Caddyfile's defaults agree, and every variable it reads is given.
  assert.match(caddyfile, new RegExp(`\\{\\$APP:app:${config.port}\\}`));
  assert.match(caddyfile, new RegExp(`\\{\\$APP_INTERNAL:app:${config.metricsPort}\\}`));
  for (const [, name] of caddyfile.matchAll(/\{\$(\w+)/g)) {
    assert.ok(name! in caddy.environment, `${name} is read by the Caddyfile but not given`);
  }
  assert.match(caddyfile, /ask http:\/\/\{\$APP_INTERNAL[^}]*\}\/internal\/tls\/allowed\n/);
  // The service's links are on https://DOMAIN, the host Caddy serves first.
  assert.equal(
    app.environment.LINK_BASE_URL,
    "https://${DOMAIN:?set DOMAIN to the service's host name}",
  );
  assert.match(caddyfile, /^\{\$DOMAIN(:[^}]*)?\} \{$/m);
  assert.equal(app.environment.TRUST_PROXY, "true");
});
