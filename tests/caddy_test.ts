// The repository's Caddyfile in front of the real service (main.ts under the start task's
// permissions), with the real Caddy: HTTPS on demand for link domains, asked of the service's
// internal listener first. The test adds only what a machine without a public name needs to
// Caddy's global options: its internal CA instead of Let's Encrypt (`local_certs`), ports of its
// own, no admin endpoint, and storage in a temporary directory. Clients trust that CA's root.
//
// Without Caddy (Debian's `caddy` package) the test is skipped, saying how to install it, unless
// REQUIRE_CADDY is set (CI sets it): then it fails.
import assert from "node:assert/strict";
import { createDatabase, dropDatabase } from "../db/databases.ts";
import { listening, startService } from "./helpers/process.ts";
import { generateLink } from "./helpers/sdk.ts";
import { ADMIN_TOKEN, adminHeaders, call, createProject, freePort } from "./helpers/server.ts";

const INSTALL_CADDY = "apt-get install -y caddy";
const SERVICE_HOST = "links.caddy.test";
const LINK_DOMAIN = "go.caddy.test";
const STRANGER = "unregistered.caddy.test";

function hasCaddy(): boolean {
  try {
    new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
}
const caddy = hasCaddy();
const caddyRequired = Boolean(Deno.env.get("REQUIRE_CADDY"));

Deno.test({
  name: `caddy is installed (${INSTALL_CADDY}), or the Caddy test is skipped`,
  ignore: caddy || !caddyRequired,
  fn() {
    assert.fail(`REQUIRE_CADDY is set and caddy is missing: ${INSTALL_CADDY}`);
  },
});

/** The repository's Caddyfile with the test's global options put first in its global block. */
async function testCaddyfile(options: string[]): Promise<string> {
  const text = await Deno.readTextFile(new URL("../Caddyfile", import.meta.url));
  const global = /^\{\n/m.exec(text);
  assert.ok(global, "the Caddyfile opens with a global options block");
  const at = global.index + 2;
  return text.slice(0, at) + options.map((o) => `\t${o}\n`).join("") + text.slice(at);
}

/**
 * curl to `host` on 127.0.0.1:`port` (HTTPS trusting `ca`, or plain HTTP when `ca` is null): the
 * status and where it redirects.
 */
async function curl(
  host: string,
  port: number,
  path: string,
  ca: string | null,
): Promise<{ code: number; status: number; location: string; stderr: string }> {
  const out = await new Deno.Command("curl", {
    args: [
      "-sS",
      "-o",
      "/dev/null",
      "--max-time",
      "30",
      "--resolve",
      `${host}:${port}:127.0.0.1`,
      ...(ca ? ["--cacert", ca] : []),
      "-w",
      "%{http_code} %{redirect_url}",
      `${ca ? "https" : "http"}://${host}:${port}${path}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const [status, location] = new TextDecoder().decode(out.stdout).split(" ");
  return {
    code: out.code,
    status: Number(status),
    location: location ?? "",
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 30_000) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name: "Caddy: a link domain registered through the API gets HTTPS on its first request, " +
    "an unregistered host no certificate, and the ask endpoint is internal only",
  ignore: !caddy,
  async fn() {
    const base = Deno.env.get("DATABASE_URL");
    const dir = await Deno.makeTempDir({ prefix: "caddy_test_" });
    const name = `t_caddy_${Date.now().toString(36)}`;
    const port = freePort();
    const internalPort = freePort();
    const httpPort = freePort();
    const httpsPort = freePort();
    const env: Record<string, string> = base
      ? { DATABASE_URL: await createDatabase(base, name) }
      : { DATA_DIR: `${dir}/data` };
    const service = startService({
      ...env,
      ADMIN_TOKEN,
      PORT: String(port),
      METRICS_PORT: String(internalPort),
      LINK_BASE_URL: `https://${SERVICE_HOST}:${httpsPort}`,
      TRUST_PROXY: "true",
    });
    let proxy: Deno.ChildProcess | null = null;
    let proxyLog = "";
    try {
      const url = await listening(service, 120_000);
      const internal = `http://127.0.0.1:${internalPort}`;

      const config = `${dir}/Caddyfile`;
      await Deno.writeTextFile(
        config,
        await testCaddyfile([
          "local_certs",
          "skip_install_trust",
          "admin off",
          `http_port ${httpPort}`,
          `https_port ${httpsPort}`,
          `storage file_system ${dir}/caddy`,
        ]),
      );
      proxy = new Deno.Command("caddy", {
        args: ["run", "--config", config, "--adapter", "caddyfile"],
        env: {
          HOME: dir,
          XDG_DATA_HOME: `${dir}/xdg-data`,
          XDG_CONFIG_HOME: `${dir}/xdg-config`,
          DOMAIN: SERVICE_HOST,
          ACME_EMAIL: "ops@caddy.test",
          APP: `127.0.0.1:${port}`,
          APP_INTERNAL: `127.0.0.1:${internalPort}`,
        },
        clearEnv: true,
        stdout: "null",
        stderr: "piped",
      }).spawn();
      (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of proxy!.stderr) {
          proxyLog += decoder.decode(chunk, { stream: true });
        }
      })();
      const ca = `${dir}/caddy/pki/authorities/local/root.crt`;
      await waitFor(
        "Caddy's internal CA and the service host's certificate",
        async () =>
          await exists(ca) &&
          (await curl(SERVICE_HOST, httpsPort, "/healthz", ca)).status === 200,
      );

      // The ask endpoint, on the internal listener: nothing is registered yet.
      const before = await call(internal, "GET", `/internal/tls/allowed?domain=${LINK_DOMAIN}`);
      assert.equal(before.status, 404);
      assert.equal(before.body.error.code, "not_found");
      const noDomain = await call(internal, "GET", "/internal/tls/allowed");
      assert.equal(noDomain.status, 400);
      assert.equal(noDomain.body.error.code, "invalid_field");

      // A project's link domain, set through the admin API as the dashboard's card does, and a link.
      const project = await createProject(url, { name: "caddy" });
      const patched = await call(url, "PATCH", `/api/v1/admin/projects/${project.hashid}`, {
        headers: adminHeaders,
        body: { link_domain: LINK_DOMAIN },
      });
      assert.equal(patched.status, 200, patched.text);
      const path = await generateLink(url, project.key, "production", {
        desktop_custom_redirect: { url: "https://example.com/landing" },
      });
      for (const domain of [LINK_DOMAIN, LINK_DOMAIN.toUpperCase(), `${LINK_DOMAIN}.`]) {
        const allowed = await call(internal, "GET", `/internal/tls/allowed?domain=${domain}`);
        assert.equal(allowed.status, 200, domain);
      }
      for (const domain of [STRANGER, SERVICE_HOST, "caddy.test"]) {
        const refused = await call(internal, "GET", `/internal/tls/allowed?domain=${domain}`);
        assert.equal(refused.status, 404, domain);
      }

      // Its first HTTPS request: Caddy asks, obtains a certificate from its CA, and the link
      // host redirects.
      const certs = `${dir}/caddy/certificates/local`;
      assert.equal(await exists(`${certs}/${LINK_DOMAIN}`), false);
      const first = await curl(LINK_DOMAIN, httpsPort, `/${path}`, ca);
      assert.equal(first.code, 0, first.stderr + proxyLog);
      assert.equal(first.status, 302, proxyLog);
      assert.equal(first.location, "https://example.com/landing");
      assert.equal(await exists(`${certs}/${LINK_DOMAIN}/${LINK_DOMAIN}.crt`), true);
      // A link printed with http:// (an old QR code) goes to HTTPS first.
      const plain = await curl(LINK_DOMAIN, httpPort, `/${path}`, null);
      assert.equal(plain.status, 308, plain.stderr);
      // (Caddy 2.6 leaves out a port other than 443; in production it is 443.)
      assert.match(plain.location, new RegExp(`^https://${LINK_DOMAIN}(:${httpsPort})?/${path}$`));

      // A host nobody registered: the handshake fails and no certificate is made for it.
      const stranger = await curl(STRANGER, httpsPort, `/${path}`, ca);
      assert.notEqual(stranger.code, 0, "the handshake of an unregistered host fails");
      assert.equal(stranger.status, 0);
      assert.equal(await exists(`${certs}/${STRANGER}`), false);

      // The ask endpoint is not served on the public port, directly or through Caddy.
      const direct = await call(url, "GET", `/internal/tls/allowed?domain=${LINK_DOMAIN}`);
      assert.equal(direct.status, 404);
      const proxied = await curl(
        SERVICE_HOST,
        httpsPort,
        `/internal/tls/allowed?domain=${LINK_DOMAIN}`,
        ca,
      );
      assert.equal(proxied.code, 0, proxied.stderr);
      assert.equal(proxied.status, 404);
    } finally {
      if (proxy) {
        proxy.kill("SIGTERM");
        await proxy.status;
      }
      await service.stop();
      await Deno.remove(dir, { recursive: true });
      if (base) await dropDatabase(base, name);
    }
  },
});
