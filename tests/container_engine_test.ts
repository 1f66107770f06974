// The Dockerfile built and run with a real container engine (podman), as a self-hoster runs it:
// on the embedded default with its /data volume, and against PostgreSQL. For each: the image's
// health check passes (`podman healthcheck run`), the process is not root, a link created through
// the API redirects, and it still does after the container is replaced by a new one on the same
// data (the embedded volume) or restarted (PostgreSQL).
//
// The Dockerfile builds FROM the official denoland/deno image. Where that image cannot be pulled
// (CI reaches only the npm registry and Debian's mirror), tests/container/base.sh makes a local
// stand-in of it from those two, tagged with the official name, and keeps it for later runs.
// The real Dockerfile is then built on it, unchanged.
//
// Without podman the test is skipped, saying how to install it, unless REQUIRE_CONTAINER is set
// (CI sets it): then it fails. Its figures (build times, image size) go to the test's output.
import assert from "node:assert/strict";
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { generateLink } from "./helpers/sdk.ts";
import { ADMIN_TOKEN, call, createProject, freePort } from "./helpers/server.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const INSTALL = "apt-get install -y podman buildah runc mmdebstrap";
const IMAGE = "localhost/link-feed:engine-test";
/** Generous: a cold embedded start (initdb of the embedded database) on a loaded 2-core machine. */
const READY_MS = 240_000;

function has(command: string): boolean {
  try {
    new Deno.Command(command, { args: ["--version"], stdout: "null", stderr: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
}
const podman = has("podman");
const required = Boolean(Deno.env.get("REQUIRE_CONTAINER"));

Deno.test({
  name: `podman is installed (${INSTALL}), or the container engine test is skipped`,
  ignore: podman || !required,
  fn() {
    assert.fail(`REQUIRE_CONTAINER is set and podman is missing: ${INSTALL}`);
  },
});

/**
 * The engine's settings for this test, in a containers.conf of its own (CONTAINERS_CONF): limits
 * the container may always set (the engine's default of a million open files is refused where the
 * machine's own limit is lower, as on CI's), and runc where it is installed (crun refuses a
 * machine whose cgroups are in the hybrid layout, as CI's are).
 */
async function engineConfig(dir: string): Promise<Record<string, string>> {
  const file = `${dir}/containers.conf`;
  const runtime = has("runc") ? '[engine]\nruntime = "runc"\n' : "";
  await Deno.writeTextFile(
    file,
    `[containers]\ndefault_ulimits = ["nofile=16384:16384", "nproc=8192:8192"]\n${runtime}`,
  );
  return { CONTAINERS_CONF: file };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

function runner(env: Record<string, string>) {
  return async (command: string, args: string[], options: { check?: boolean } = {}) => {
    const started = performance.now();
    const out = await new Deno.Command(command, {
      args,
      cwd: ROOT,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    const run: Run = {
      code: out.code,
      stdout: text.decode(out.stdout).trim(),
      stderr: text.decode(out.stderr).trim(),
      ms: Math.round(performance.now() - started),
    };
    if (options.check !== false && run.code !== 0) {
      throw new Error(`${command} ${args.join(" ")} exited with ${run.code}:\n${run.stderr}`);
    }
    return run;
  };
}

function report(line: string) {
  // deno-lint-ignore no-console
  console.log(`container: ${line}`);
}

async function ready(url: string, describe: () => Promise<string>): Promise<void> {
  const until = Date.now() + READY_MS;
  while (Date.now() < until) {
    const ok = await fetch(`${url}/readyz`).then((r) => (r.body?.cancel(), r.ok), () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`no /readyz in ${READY_MS} ms:\n${await describe()}`);
}

Deno.test({
  name: "the image builds on the Deno base and runs on the embedded default and on PostgreSQL: " +
    "health check, non-root, a link that redirects, data kept across a restart",
  ignore: !podman,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "container_test_" });
    const env = await engineConfig(dir);
    const run = runner(env);
    const suffix = `${Date.now().toString(36)}_${crypto.randomUUID().slice(0, 6)}`;
    const containers: string[] = [];
    const volume = `link-feed-test-${suffix}`;
    const base = Deno.env.get("DATABASE_URL");
    const dbName = `t_container_${suffix}`;
    let dbCreated = false;
    const logsOf = (name: string) => async () => {
      const logs = await run("podman", ["logs", name], { check: false });
      return logs.stdout + logs.stderr;
    };
    /** Runs the image detached on the host's network; returns its URL once ready. */
    const start = async (name: string, vars: Record<string, string>, mounts: string[] = []) => {
      const port = freePort();
      const args = ["run", "-d", "--name", name, "--network", "host"];
      for (const [k, v] of Object.entries({ ...vars, PORT: String(port) })) {
        args.push("-e", `${k}=${v}`);
      }
      for (const m of mounts) args.push("-v", m);
      containers.push(name);
      await run("podman", [...args, IMAGE]);
      const url = `http://127.0.0.1:${port}`;
      const started = performance.now();
      await ready(url, logsOf(name));
      return { url, readyMs: Math.round(performance.now() - started) };
    };
    /** The health check, the user, and a link created and followed. */
    const checkRunning = async (name: string, url: string) => {
      assert.equal((await call(url, "GET", "/healthz")).status, 200);
      const health = await run("podman", ["healthcheck", "run", name], { check: false });
      assert.equal(health.code, 0, `health check: ${health.stdout} ${health.stderr}`);
      assert.equal((await run("podman", ["exec", name, "id", "-un"])).stdout, "deno");
      assert.notEqual((await run("podman", ["exec", name, "id", "-u"])).stdout, "0");
      // Every process of the container, PID 1 included, runs as the image's user.
      const top = await run("podman", ["top", name, "user"]);
      const users = top.stdout.split("\n").slice(1).map((l) => l.trim());
      assert.ok(users.length >= 2, top.stdout);
      assert.deepEqual([...new Set(users)], ["deno"]);
    };
    const createLink = async (url: string, target: string) => {
      const project = await createProject(url, { name: "container" });
      return await generateLink(url, project.key, "production", {
        desktop_custom_redirect: { url: target },
      });
    };
    const follows = async (url: string, path: string, target: string) => {
      const res = await call(url, "GET", `/${path}`);
      assert.equal(res.status, 302, res.text);
      assert.equal(res.headers.get("location"), target);
    };

    try {
      await t.step("the base image: the official one, or a stand-in made here", async () => {
        const made = await run("bash", ["tests/container/base.sh"]);
        report(`base: ${made.stdout.split("\n").at(-1)} (${(made.ms / 1000).toFixed(1)} s)`);
      });

      await t.step("the Dockerfile builds, as is; a second build reuses every layer", async () => {
        const previous = await run("podman", ["image", "inspect", "--format", "{{.Id}}", IMAGE], {
          check: false,
        });
        // Docker's image format: the OCI format has no HEALTHCHECK (podman drops it, warning).
        const args = ["build", "--format", "docker", "--network", "host", "-t", IMAGE, "."];
        const first = await run("podman", args);
        const again = await run("podman", args);
        assert.match(again.stdout, /Using cache/);
        assert.doesNotMatch(again.stdout + again.stderr, /Download https:/);
        const [size, user, health] = (await run("podman", [
          "image",
          "inspect",
          "--format",
          "{{.Size}}|{{.User}}|{{json .HealthCheck}}",
          IMAGE,
        ])).stdout.split("|");
        assert.equal(user, "deno");
        assert.match(health!, /\/readyz/);
        report(
          `build ${(first.ms / 1000).toFixed(1)} s (${
            /Download https:/.test(first.stdout + first.stderr)
              ? "dependencies fetched"
              : "dependency layer cached"
          }), rebuild with nothing changed ${(again.ms / 1000).toFixed(1)} s, image ${
            (Number(size) / 1e6).toFixed(0)
          } MB`,
        );
        if (
          previous.code === 0 && previous.stdout !== (await run("podman", [
              "image",
              "inspect",
              "--format",
              "{{.Id}}",
              IMAGE,
            ])).stdout
        ) {
          // The previous run's image, now untagged: its layers still in use stay.
          await run("podman", ["rmi", previous.stdout], { check: false });
        }
      });

      await t.step("the embedded default, its data on a volume", async () => {
        await run("podman", ["volume", "create", volume]);
        const vars = { ADMIN_TOKEN };
        const name = `link-feed-embedded-${suffix}`;
        const first = await start(name, vars, [`${volume}:/data`]);
        await checkRunning(name, first.url);
        const target = "https://example.com/embedded";
        const path = await createLink(first.url, target);
        await follows(first.url, path, target);
        // A new container on the same volume, as after `docker compose up` with a newer image.
        await run("podman", ["stop", "-t", "30", name]);
        await run("podman", ["rm", "-v", name]);
        const second = await start(`${name}-2`, vars, [`${volume}:/data`]);
        await checkRunning(`${name}-2`, second.url);
        await follows(second.url, path, target);
        report(
          `embedded: ready in ${(first.readyMs / 1000).toFixed(1)} s on a new volume, ` +
            `${(second.readyMs / 1000).toFixed(1)} s on the kept one`,
        );
      });

      await t.step({
        name: "PostgreSQL (DATABASE_URL's server)",
        ignore: !base,
        fn: async () => {
          const url = await createDatabase(base!, dbName);
          dbCreated = true;
          const vars = { DATABASE_URL: url, ADMIN_TOKEN };
          const name = `link-feed-postgres-${suffix}`;
          const first = await start(name, vars);
          await checkRunning(name, first.url);
          const target = "https://example.com/postgres";
          const path = await createLink(first.url, target);
          await follows(first.url, path, target);
          await run("podman", ["restart", "-t", "30", name]);
          const started = performance.now();
          await ready(first.url, logsOf(name));
          await checkRunning(name, first.url);
          await follows(first.url, path, target);
          report(
            `postgresql: ready in ${(first.readyMs / 1000).toFixed(1)} s, after a restart in ${
              ((performance.now() - started) / 1000).toFixed(1)
            } s`,
          );
        },
      });
    } finally {
      for (const name of containers) {
        await run("podman", ["rm", "-f", "-v", name], { check: false });
      }
      await run("podman", ["volume", "rm", "-f", volume], { check: false });
      if (dbCreated) await dropDatabase(base!, dbName);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
