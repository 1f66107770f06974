// GraphQL's side of link rules (CONTRACT.md, "Link rules, splits and passwords"): createLink and
// updateLink take rules, split, forwarding and a password as REST does; Link shows them; and
// Link.splitResults goes through a DataLoader: a page of links with their results costs the
// same statements whatever its size (counted on the wire with postgres.js's debug hook).
import assert from "node:assert/strict";
import postgres from "postgres";
import { createTestDatabase } from "./helpers/database.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import { adminHeaders, call, createProject, serveApp } from "./helpers/server.ts";

const db = await createTestDatabase();
const statements: string[] = [];
const sql = postgres(db.url, {
  max: db.embedded ? 1 : 4,
  onnotice: () => {},
  debug: (_connection, query) => statements.push(query),
});
const srv = serveApp(db, { sql });
Deno.test.afterAll(async () => {
  await srv.close();
  await sql.end({ timeout: 5 });
  await db.close();
});
const p = await createProject(srv.url);

const CREATE = `mutation($id: ID!, $input: CreateLinkInput!) {
  createLink(projectId: $id, input: $input) {
    path rules { name when url split { url weight } } split { url weight }
    forwardQuery appendUtm passwordProtected
  } }`;

Deno.test("createLink and updateLink take rules, a split, forwarding and a password", async () => {
  const res = await gql(srv.url, CREATE, {
    headers: adminHeaders,
    variables: {
      id: String(p.productionId),
      input: {
        rules: [{
          name: "de",
          when: { country: ["de"], referrer_host: ["News.example"] },
          url: "https://de.example/",
        }],
        split: [{ url: "https://a.example/", weight: 3 }, { url: "https://b.example/", weight: 1 }],
        forwardQuery: true,
        password: "open sesame",
      },
    },
  });
  assert.equal(res.errors, undefined, JSON.stringify(res.errors));
  const link = res.data.createLink;
  assert.deepEqual(link.rules, [{
    name: "de",
    when: { country: ["DE"], referrer_host: ["news.example"] },
    url: "https://de.example/",
    split: null,
  }]);
  assert.deepEqual(link.split, [{ url: "https://a.example/", weight: 3 }, {
    url: "https://b.example/",
    weight: 1,
  }]);
  assert.equal(link.forwardQuery, true);
  assert.equal(link.appendUtm, false);
  assert.equal(link.passwordProtected, true);
  const updated = await gql(
    srv.url,
    `mutation($id: ID!, $path: String!) { updateLink(projectId: $id, path: $path,
      input: { password: null, rules: null, appendUtm: true }) { rules { url } passwordProtected appendUtm } }`,
    { headers: adminHeaders, variables: { id: String(p.productionId), path: link.path } },
  );
  assert.deepEqual(updated.data.updateLink, {
    rules: [],
    passwordProtected: false,
    appendUtm: true,
  });
  // Bad rules name the argument as sent.
  const bad = await gql(srv.url, CREATE, {
    headers: adminHeaders,
    variables: {
      id: String(p.productionId),
      input: { rules: [{ when: { ip: ["nope"] }, url: "https://x.example/" }] },
    },
  });
  assert.equal(bad.errors?.[0]?.extensions?.reason, "invalid_field", JSON.stringify(bad.errors));
  assert.match(bad.errors[0].message, /input\.rules\[0\]\.when\.ip\[0\]/);
});

Deno.test("Link.splitResults for a page of links: the same statements for 2 links as for 6", async () => {
  const paths: string[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
      headers: adminHeaders,
      body: {
        title: `split ${i}`,
        tags: ["batch"],
        split: [{ url: "https://a.example/", weight: 1 }, { url: "https://b.example/", weight: 1 }],
      },
    });
    paths.push(res.body.link.path);
    // A view for a variant: the figures come from the rollups.
    await call(srv.url, "GET", `/${res.body.link.path}`, {
      headers: { "User-Agent": "Mozilla/5.0" },
    });
  }
  await srv.views.flush();
  const page = (first: number) =>
    gql(
      srv.url,
      `query($id: ID!, $first: Int!) { environment(projectId: $id) {
        links(first: $first, filter: { tag: "batch" }) { edges { node { path
          splitResults { rule enoughData variants { variant url views probabilityBest } } } } } } }`,
      { headers: adminHeaders, variables: { id: String(p.productionId), first } },
    );
  statements.length = 0;
  const two = await page(2);
  const small = statements.length;
  statements.length = 0;
  const six = await page(6);
  assert.equal(six.errors, undefined, JSON.stringify(six.errors));
  assert.equal(statements.length, small, statements.join("\n---\n"));
  assert.equal(two.data.environment.links.edges.length, 2);
  for (const { node } of six.data.environment.links.edges as Json[]) {
    const results = node.splitResults;
    assert.equal(results.rule, null);
    assert.equal(results.enoughData, false);
    assert.equal(results.variants.reduce((n: number, v: Json) => n + v.views, 0), 1);
    assert.ok(
      Math.abs(results.variants[0].probabilityBest + results.variants[1].probabilityBest - 1) <
        1e-9,
    );
  }
  // Link.analytics breaks each link's views down by variant (no link= needed: it is the link's).
  const byVariant = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) { link(path: "${paths[0]}") {
      analytics(metrics: [VIEWS], groupBy: VARIANT) { totals { views } groups { key totals { views } } } } } }`,
    { headers: adminHeaders, variables: { id: String(p.productionId) } },
  );
  assert.equal(byVariant.errors, undefined, JSON.stringify(byVariant.errors));
  const analytics = byVariant.data.environment.link.analytics;
  assert.equal(analytics.totals.views, 1);
  assert.equal(analytics.groups.length, 1);
  assert.match(analytics.groups[0].key, /^[12]$/);
  // A link without a split has no results.
  const plain = await gql(
    srv.url,
    `query($id: ID!) { environment(projectId: $id) { link(path: "${paths[0]}") { path } } }`,
    { headers: adminHeaders, variables: { id: String(p.productionId) } },
  );
  assert.equal(plain.data.environment.link.path, paths[0]);
});
