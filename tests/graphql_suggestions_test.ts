// With introspection off, no error message hands out a name of the schema: graphql-js's "Did
// you mean …?" is removed for fields, arguments, types, input fields and enum values, whether
// the misspelling is in the document (validation) or in a variable (execution), and whichever
// way the request is served (the fast path, Yoga's own path, a subscription).
import assert from "node:assert/strict";
import { gql } from "./helpers/graphql.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";
import { sdkHeaders } from "./helpers/sdk.ts";

const srv = await startTestServer({ config: { GRAPHQL_INTROSPECTION: "false" } });
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url);
const sdk = sdkHeaders(project.key, "production");
const env = String(project.productionId);

/** Each misspelling and the schema name graphql-js would have suggested for it. */
const CASES: {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  headers: Record<string, string>;
  suggested: string;
}[] = [
  { name: "a field", query: '{ lnk(path: "x") { id } }', headers: sdk, suggested: "link" },
  {
    name: "an argument",
    query: '{ link(path: "x", pth: "x") { id } }',
    headers: sdk,
    suggested: "path",
  },
  {
    name: "a type",
    query: "query($p: Strin!) { link(path: $p) { id } }",
    headers: sdk,
    suggested: "String",
  },
  {
    name: "an input field",
    query: 'mutation { generateLink(input: { titel: "x" }) { url } }',
    headers: sdk,
    suggested: "title",
  },
  {
    name: "an enum value in the document",
    query:
      `{ environment(projectId: "${env}") { links(filter: { state: ACTIV }) { edges { cursor } } } }`,
    headers: adminHeaders,
    suggested: "ACTIVE",
  },
  {
    name: "an enum value in a list argument",
    query: `mutation { createApiKey(projectId: "${env}", input: { name: "k", scopes: [ADMN] }) {
      value } }`,
    headers: adminHeaders,
    suggested: "ADMIN",
  },
  {
    name: "an enum value in a variable",
    query: `mutation($s: [ApiKeyScope!]!) {
      createApiKey(projectId: "${env}", input: { name: "k", scopes: $s }) { value } }`,
    variables: { s: ["ADMN"] },
    headers: adminHeaders,
    suggested: "ADMIN",
  },
  {
    name: "a feed event type in a variable",
    query: `query($t: [FeedEventType!]) {
      eventFeed(projectId: "${env}", eventTypes: $t) { schemaVersion } }`,
    variables: { t: ["instal"] },
    headers: { Authorization: "Bearer est_nothing" },
    suggested: "install",
  },
];

for (const c of CASES) {
  Deno.test(`introspection off: a misspelt ${c.name} is refused without naming ${c.suggested}`, async () => {
    const res = await gql(srv.url, c.query, { variables: c.variables, headers: c.headers });
    assert.ok(res.errors?.length, JSON.stringify(res));
    for (const error of res.errors!) {
      assert.doesNotMatch(error.message, /Did you mean/, error.message);
      assert.ok(!error.message.includes(`"${c.suggested}"`), error.message);
      assert.ok(error.message.length > 0);
    }
    // Yoga's own path (a GET) answers the same.
    if (!c.query.startsWith("mutation")) {
      const params = new URLSearchParams({ query: c.query });
      if (c.variables) params.set("variables", JSON.stringify(c.variables));
      const get = await call(srv.url, "GET", `/graphql?${params}`, {
        headers: { ...c.headers, Accept: "application/json" },
      });
      for (const error of get.body.errors) {
        assert.doesNotMatch(error.message, /Did you mean/, error.message);
      }
    }
  });
}
