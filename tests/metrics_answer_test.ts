// How the metrics answer is put together: one row per item read raw, the ETag's hash sum added
// up in JavaScript (it must equal PostgreSQL's, which the 304 check computes), and the buffers
// reused from one answer to the next.
import assert from "node:assert/strict";
import { DecimalSum, projectMetricsEtag } from "../services/links/metrics.ts";
import { ManualClock } from "./helpers/clock.ts";
import { countingSql, createTestDatabase } from "./helpers/database.ts";
import { generateLink, sdkHeaders } from "./helpers/sdk.ts";
import { call, createProject, serveApp } from "./helpers/server.ts";

const NOW = "2026-03-01T12:00:00.000Z";

Deno.test("DecimalSum adds 64-bit integers printed in decimal exactly, as sum(bigint) prints it", () => {
  const cases: bigint[][] = [
    [],
    [0n],
    [5n, -5n],
    [-9223372036854775808n, 9223372036854775807n, -1n],
    [9223372036854775807n, 9223372036854775807n, 9223372036854775807n],
    [-9223372036854775808n, -9223372036854775808n],
    [999999999n, 1n, -1000000000n, 1000000000n, -999999999n],
  ];
  // Past 100,000 values (a fold into the BigInt) with random ones of every length and sign.
  let seed = 42n;
  const random = () => {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    const value = BigInt.asIntN(64, seed);
    return value >> BigInt(Number(seed & 63n));
  };
  cases.push(Array.from({ length: 250_001 }, random));
  for (const values of cases) {
    const sum = new DecimalSum();
    for (const v of values) sum.add(new TextEncoder().encode(String(v)));
    assert.equal(sum.toString(), String(values.reduce((a, b) => a + b, 0n)));
  }
});

Deno.test("metrics_for_project: the ETag of a 200 is the one a 304 is checked against", async () => {
  const db = await createTestDatabase();
  const counted = countingSql(db.pool());
  const srv = serveApp(db, { clock: new ManualClock(NOW), sql: counted.sql });
  try {
    const p = await createProject(srv.url);
    const headers = sdkHeaders(p.key, "production");
    const get = (etag?: string) =>
      call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
        headers: etag ? { ...headers, "If-None-Match": etag } : headers,
      });

    // No links: the tag of no rows.
    const empty = await get();
    assert.equal(empty.text, "[]");
    assert.equal(empty.headers.get("etag"), `"m-${p.productionId}-0-0"`);
    assert.equal((await get(empty.headers.get("etag")!)).status, 304);

    // Enough links for hashes of both signs and a sum of any size.
    for (let i = 0; i < 40; i++) await generateLink(srv.url, p.key, "production");
    const full = await get();
    assert.equal(full.status, 200);
    assert.equal(full.body.length, 40);
    const tag = full.headers.get("etag")!;
    assert.equal(tag, await projectMetricsEtag(db.pool(), p.productionId));
    assert.match(tag, new RegExp(`^"m-${p.productionId}-40--?[0-9]+"$`));

    counted.queries.length = 0;
    assert.equal((await get(tag)).status, 304);
    assert.ok(
      !counted.queries.some((q) => q.includes("s.total_views")),
      "a 304 does not read the items",
    );
  } finally {
    await srv.close();
    await db.close();
  }
});

Deno.test("metrics_for_project: answers built at the same time keep their own bytes", async () => {
  const db = await createTestDatabase();
  const srv = serveApp(db, { clock: new ManualClock(NOW) });
  try {
    const small = await createProject(srv.url, { name: "Small" });
    const large = await createProject(srv.url, { name: "Large" });
    await generateLink(srv.url, small.key, "production", { title: "only" });
    // Large enough to outgrow a first buffer (256 KiB) several times.
    await srv.sql`
      insert into links (environment_id, project_id, path, title, tags)
      select ${large.productionId},
        (select project_id from environments where id = ${large.productionId}),
        'big' || g, repeat('t', 300) || g, '["a","b"]'
      from generate_series(1, 3000) g
    `;
    await srv.sql`
      insert into link_counters (link_id, environment_id, total_views)
      select id, environment_id, id from links where environment_id = ${large.productionId}
    `;
    const get = (key: string) =>
      call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
        headers: sdkHeaders(key, "production"),
      });
    const expected = new Map([[small.key, (await get(small.key)).text], [
      large.key,
      (await get(large.key)).text,
    ]]);
    assert.equal(JSON.parse(expected.get(large.key)!).length, 3000);
    const keys = Array.from({ length: 24 }, (_, i) => i % 3 === 0 ? large.key : small.key);
    const answers = await Promise.all(keys.map(get));
    answers.forEach((res, i) => assert.equal(res.text, expected.get(keys[i]!)));
  } finally {
    await srv.close();
    await db.close();
  }
});
