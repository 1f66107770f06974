// Requests without credentials cannot pin memory: oversized GraphQL documents and credentials
// are refused before any parsing, hashing or caching, and every cache is bounded in bytes. The
// server runs in this process, so its heap is this isolate's: measured after a full collection.
import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import { assertError, call, createProject, startTestServer } from "./helpers/server.ts";
import { generateLink, sdkHeaders } from "./helpers/sdk.ts";
import { cacheReports } from "../infra/byte_cache.ts";
import { MAX_DOCUMENT_BYTES } from "../graphql/document_limit.ts";
import { resolveConfig } from "../config.ts";
import { MAX_SECRET_LENGTH } from "../infra/secrets.ts";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** The isolate's live heap after full collections (strings and buffers both count). */
function liveBytes(): number {
  gc();
  gc();
  const { heapUsed, external } = Deno.memoryUsage();
  return heapUsed + external;
}

/** Runs `count` calls of `send`, `width` at a time. */
async function flood(count: number, width: number, send: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await send(next++);
    }),
  );
}

const MiB = 1024 * 1024;
// The bound this test states: everything the floods below leave behind, caches included, after
// a collection. The caches' own ceilings add up to 13 MiB; the floods send over 600 MiB.
const BOUND = 40 * MiB;

/** A string of `n` characters that differs for each `seed` (so no two requests share a key). */
function filler(seed: number, n: number): string {
  const head = `${seed}-${crypto.randomUUID()}-`;
  return head + "a".repeat(n - head.length);
}

Deno.test("floods of large documents and credentials leave the heap within a stated bound, and caches still serve real clients", async () => {
  const server = await startTestServer();
  try {
    const { key, productionId } = await createProject(server.url);
    const path = await generateLink(server.url, key, "production");
    // Warm every path once, so the baseline includes the code and connections they use.
    await call(server.url, "GET", `/api/v1/sdk/link/${path}`, {
      headers: sdkHeaders(key, "production"),
    });
    await call(server.url, "POST", "/graphql", { body: { query: "{ __typename }" } });
    const before = liveBytes();

    // 1. 300 documents of 900 KiB: `{ __typename }` and a comment, no credentials. Refused
    //    with 413 before parsing: armor's token limit alone never sees the comment.
    await flood(300, 8, async (i) => {
      const query = `{ __typename }\n#${filler(i, 900 * 1024)}`;
      const res = await call(server.url, "POST", "/graphql", { body: { query } });
      assert.equal(res.status, 413, res.text.slice(0, 200));
      assert.match(res.body.errors[0].message, /larger than 32768 bytes/);
    });
    // 2. 1,500 distinct documents just under the limit that parse and validate, and 500 that
    //    do not parse: both kinds are cached by their text, within the caches' byte bounds.
    await flood(2000, 8, async (i) => {
      const comment = filler(i, MAX_DOCUMENT_BYTES - 64);
      const query = i % 4 === 3 ? `{ __typename\n#${comment}` : `{ __typename }\n#${comment}`;
      const res = await call(server.url, "POST", "/graphql", { body: { query } });
      if (i % 4 === 3) assert.equal(res.body.errors[0].extensions.code, "GRAPHQL_PARSE_FAILED");
      else assert.deepEqual(res.body, { data: { __typename: "Query" } });
    });
    // 3. 3,000 distinct 64,000-character project keys, feed tokens and admin tokens: 401
    //    without a digest being computed or kept.
    await flood(3000, 8, async (i) => {
      const secret = filler(i, 64_000);
      const lookup = await call(server.url, "GET", `/api/v1/sdk/link/${path}`, {
        headers: sdkHeaders(`pk_${secret}`, "production"),
      });
      assertError(lookup, 401, "unauthorized");
      const feed = await call(server.url, "GET", `/api/v1/projects/${productionId}/event_stream`, {
        headers: { Authorization: `Bearer est_${secret}` },
      });
      assertError(feed, 401, "unauthorized");
      const admin = await call(server.url, "GET", `/api/v1/projects/${productionId}/destinations`, {
        headers: { Authorization: `Bearer ${secret}` },
      });
      // Refused before the limiter of wrong admin tokens counts it: always 401.
      assertError(admin, 401, "unauthorized");
    });

    const grown = liveBytes() - before;
    assert.ok(
      grown < BOUND,
      `the heap grew by ${(grown / MiB).toFixed(1)} MiB, over the bound of ${BOUND / MiB} MiB`,
    );
    for (const cache of cacheReports()) {
      assert.ok(cache.bytes <= cache.maxBytes, `${cache.name}: ${cache.bytes} > ${cache.maxBytes}`);
    }

    // Real clients still hit: a project key's digest and a small document are served from cache.
    const hits = () => new Map(cacheReports().map((c) => [c.name, c.hits]));
    const start = hits();
    for (let i = 0; i < 3; i++) {
      const lookup = await call(server.url, "GET", `/api/v1/sdk/link/${path}`, {
        headers: sdkHeaders(key, "production"),
      });
      assert.equal(lookup.status, 200);
      const res = await call(server.url, "POST", "/graphql", {
        body: { query: "{ __typename }" },
      });
      assert.deepEqual(res.body, { data: { __typename: "Query" } });
    }
    const end = hits();
    for (const name of ["secret digests", "graphql plans"]) {
      assert.ok((end.get(name) ?? 0) - (start.get(name) ?? 0) >= 2, `${name} did not hit`);
    }
  } finally {
    await server.close();
  }
});

Deno.test("an oversized document is refused on every way into GraphQL, and a configured admin token has a ceiling", async () => {
  const server = await startTestServer();
  try {
    const big = `{ __typename } #${"x".repeat(MAX_DOCUMENT_BYTES)}`;
    // As a GET (Yoga's own path) and as a POST of another content type.
    const get = await fetch(`${server.url}/graphql?query=${encodeURIComponent(big)}`, {
      headers: { Accept: "application/graphql-response+json" },
    });
    assert.equal(get.status, 413);
    assert.match((await get.json()).errors[0].message, /larger than/);
    const post = await fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { "Content-Type": "application/graphql-response+json", Accept: "application/json" },
      body: JSON.stringify({ query: big }),
    });
    await post.body?.cancel();
    assert.ok(post.status === 413 || post.status === 415, `status ${post.status}`);
    // Multi-byte characters count as the bytes they take.
    const wide = `{ __typename } #${"é".repeat(MAX_DOCUMENT_BYTES / 2)}`;
    const res = await call(server.url, "POST", "/graphql", { body: { query: wide } });
    assert.equal(res.status, 413);
    // Every secret a door accepts is at most MAX_SECRET_LENGTH long, the admin token included.
    assert.throws(
      () => resolveConfig({ ADMIN_TOKEN: "t".repeat(MAX_SECRET_LENGTH + 1) }),
      /ADMIN_TOKEN: must be at most 256 characters/,
    );
    assert.equal(
      resolveConfig({ ADMIN_TOKEN: "t".repeat(MAX_SECRET_LENGTH) }).adminToken?.length,
      MAX_SECRET_LENGTH,
    );
  } finally {
    await server.close();
  }
});
