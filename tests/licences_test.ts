// The project is Apache-2.0 (LICENSE), and says so in the README and the OpenAPI document.
// Every npm package the service or its tests run (both lock files), and the Redoc bundle served
// at /docs, is under a licence compatible with the project's Apache-2.0: MIT, ISC, Apache-2.0 or
// BSD, or one of the few public-domain-like licences reviewed below, package by package.
import assert from "node:assert/strict";
import { OPENAPI_DOCUMENT } from "../rest/openapi.ts";

const ROOT = new URL("../", import.meta.url);

const ALLOWED = new Set(["MIT", "ISC", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "0BSD"]);

/** Reviewed one by one: a new package under one of these licences fails until it is added. */
const REVIEWED: Record<string, { licence: string | null; why: string }> = {
  "postgres": { licence: "Unlicense", why: "public domain dedication (the PostgreSQL driver)" },
  "postgres-shift": { licence: "WTFPL", why: "no conditions at all (the migrations)" },
  "fast-sha256": { licence: "Unlicense", why: "public domain dedication (standardwebhooks')" },
  "lru-cache": { licence: "BlueOak-1.0.0", why: "permissive, notice only, like MIT" },
  // Test-only (tests/deno.lock), or inside the vendored Redoc bundle:
  "argparse": { licence: "Python-2.0", why: "the PSF licence: permissive, notice only" },
  "url-template": { licence: "BSD", why: "its LICENSE file is the 3-clause BSD licence" },
  "decko": { licence: null, why: "no field; its LICENSE file is MIT" },
  "stickyfill": { licence: null, why: "no field; its LICENSE file is MIT" },
};

/** True when an SPDX expression can be taken under allowed licences only. */
function allowed(expression: string): boolean {
  const text = expression.trim().replace(/^\((.*)\)$/, "$1");
  if (/ OR /.test(text)) return text.split(/ OR /).some(allowed);
  if (/ AND /.test(text)) return text.split(/ AND /).every(allowed);
  return ALLOWED.has(text);
}

function licenceOf(manifest: Record<string, unknown>): string | null {
  const field = manifest.license ?? manifest.licenses;
  if (typeof field === "string") return field;
  const types = [field].flat().map((l) => (l as { type?: string } | undefined)?.type);
  return types.every((t) => typeof t === "string") && types.length ? types.join(" OR ") : null;
}

async function npmCache(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  assert.ok(out.success);
  return JSON.parse(new TextDecoder().decode(out.stdout)).npmCache;
}

Deno.test("every npm package of deno.lock and tests/deno.lock has a licence compatible with Apache-2.0", async () => {
  const cache = await npmCache();
  const packages = new Set<string>();
  for (const lock of ["deno.lock", "tests/deno.lock"]) {
    const { npm } = JSON.parse(await Deno.readTextFile(new URL(lock, ROOT)));
    // "name@version", then "_" and the peer dependencies it was resolved with, if any.
    for (const key of Object.keys(npm)) packages.add(key.replace(/^(.[^@]*@[^_]+)_.*$/, "$1"));
  }
  const problems: string[] = [];
  for (const pkg of packages) {
    const at = pkg.lastIndexOf("@");
    const [name, version] = [pkg.slice(0, at), pkg.slice(at + 1)];
    const manifest = JSON.parse(
      await Deno.readTextFile(`${cache}/registry.npmjs.org/${name}/${version}/package.json`),
    );
    const licence = licenceOf(manifest);
    if (licence !== null && allowed(licence)) continue;
    if (REVIEWED[name] && REVIEWED[name].licence === licence) continue;
    problems.push(`${pkg}: ${licence ?? "no licence field"}`);
  }
  assert.deepEqual(problems, []);
  assert.ok(packages.size > 100, `${packages.size} packages`);
});

Deno.test("the Redoc bundle served at /docs names only allowed licences for what it contains", async () => {
  const text = await Deno.readTextFile(
    new URL("pages/vendor/redoc/redoc.standalone.js.LICENSE.txt", ROOT),
  );
  // Each bundled library's notice names its licence; DOMPurify's is Apache-2.0 or MPL-2.0.
  const named = [...text.matchAll(/\b(MIT|Apache|ISC|BSD|GPL|LGPL|AGPL|MPL)\b/g)].map((m) => m[1]);
  assert.ok(named.includes("MIT"));
  assert.deepEqual(named.filter((l) => /GPL/.test(l!)), []);
  const redoc = await Deno.readTextFile(new URL("pages/vendor/redoc/LICENSE", ROOT));
  assert.ok(redoc.startsWith("The MIT License"));
});

Deno.test("the project's licence: LICENSE is the Apache License 2.0, and the README and /openapi.json say so", async () => {
  const licence = await Deno.readTextFile(new URL("LICENSE", ROOT));
  const [copyright, ...text] = licence.split("\n");
  assert.equal(copyright, "Copyright 2026 The link and event feed service authors");
  // The licence's own text, unchanged: its SHA-256 as the Apache Software Foundation publishes it.
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text.join("\n")));
  assert.equal(
    [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join(""),
    "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30",
  );
  assert.deepEqual(OPENAPI_DOCUMENT.info.license, { name: "Apache-2.0", identifier: "Apache-2.0" });
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  assert.match(readme, /\[Apache License 2\.0\]\(LICENSE\)/);
});
