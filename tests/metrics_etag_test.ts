// Conditional metrics: an ETag on every answer, and 304 for a client that has the current one,
// decided without building the (possibly megabytes large) body.
import assert from "node:assert/strict";
import { ManualClock } from "./helpers/clock.ts";
import { countingSql, createTestDatabase } from "./helpers/database.ts";
import { deactivateLink, generateLink, ingest, sdkHeaders } from "./helpers/sdk.ts";
import { call, createProject, serveApp } from "./helpers/server.ts";

const NOW = "2026-03-01T12:00:00.000Z";

Deno.test("metrics_for_project: ETag, 304 without building the body, a new tag on every change", async () => {
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
    const a = await generateLink(srv.url, p.key, "production", { title: "A" });
    const b = await generateLink(srv.url, p.key, "production", { title: "B" });

    const first = await get();
    assert.equal(first.status, 200);
    const tag = first.headers.get("etag")!;
    assert.match(tag, /^"m-[0-9]+-2-[0-9-]+"$/);
    assert.equal(first.headers.get("cache-control"), "private, no-cache");

    counted.queries.length = 0;
    const same = await get(tag);
    assert.equal(same.status, 304);
    assert.equal(same.text, "");
    assert.equal(same.headers.get("etag"), tag);
    assert.ok(!counted.queries.some((q) => q.includes("string_agg")), "the body was not built");
    assert.equal((await get(`"other", W/${tag}`)).status, 304, "a list and a weak tag match too");
    assert.equal((await get('"stale"')).status, 200);

    // Each kind of change gives a new tag, and the old one no longer answers 304.
    const tags = new Set([tag]);
    const expectChange = async (what: string) => {
      const res = await get([...tags].at(-1));
      assert.equal(res.status, 200, `${what}: the old tag must not match`);
      const next = res.headers.get("etag")!;
      assert.ok(!tags.has(next), `${what}: a new tag`);
      tags.add(next);
    };
    await ingest(srv.url, p.key, "production", [
      { type: "open", occurred_at: NOW, link_path: a },
    ]);
    await expectChange("a counter moved");
    const purchase = (version: number, link: string) => ({
      type: "purchase",
      name: "purchase",
      occurred_at: NOW,
      link_path: link,
      purchase: {
        transaction_id: "t1",
        version,
        amount: 500,
        currency: "EUR",
        product_id: "pro",
        store: "app_store",
      },
    });
    await ingest(srv.url, p.key, "production", [purchase(1, a)]);
    await expectChange("revenue on a");
    // A correction moves the same amount from a to b: the totals' sum stays, the tag does not.
    await ingest(srv.url, p.key, "production", [purchase(2, b)]);
    await expectChange("revenue moved from a to b");
    await deactivateLink(srv.url, p.productionId, b);
    await expectChange("a link deactivated");
    // Another environment's change leaves this one's tag alone.
    const current = [...tags].at(-1)!;
    await ingest(srv.url, p.key, "development", [{ type: "open", occurred_at: NOW }]);
    assert.equal((await get(current)).status, 304);
  } finally {
    await srv.close();
    await db.close();
  }
});
