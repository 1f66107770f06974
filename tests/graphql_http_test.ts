// GraphQL over HTTP's status codes: a request that fails before execution (a document that does
// not parse or validate, variables of the wrong type) is HTTP 400 when the client accepts
// application/graphql-response+json first, and 200 with `errors` in application/json (the legacy
// type, and what a client without Accept gets). A POST and a GET of the same query answer alike:
// same status, media type and body, for every Accept.
import assert from "node:assert/strict";
import { createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const p = await createProject(srv.url);
const sdk = { "PROJECT-KEY": p.key, ENVIRONMENT: "production" };

const GRAPHQL_RESPONSE = "application/graphql-response+json";

/** The same query POSTed as JSON and sent by GET. */
async function both(
  query: string,
  variables: Record<string, unknown>,
  headers: Record<string, string>,
) {
  const post = await fetch(`${srv.url}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const get = await fetch(
    `${srv.url}/graphql?query=${encodeURIComponent(query)}&variables=${
      encodeURIComponent(JSON.stringify(variables))
    }`,
    { headers },
  );
  const answer = async (r: Response) => ({
    status: r.status,
    type: r.headers.get("content-type"),
    body: JSON.parse(await r.text()),
  });
  return { post: await answer(post), get: await answer(get) };
}

const CASES: { what: string; query: string; variables?: Record<string, unknown>; data: boolean }[] =
  [
    { what: "a document that does not parse", query: `{ link(path: "x") { path }`, data: false },
    { what: "a field that does not exist", query: `{ nope }`, data: false },
    {
      what: "a variable that is never used",
      query: `query($a: Int) { link(path: "x") { path } }`,
      data: false,
    },
    {
      what: "a variable of the wrong type",
      query: `query($p: String!) { link(path: $p) { path } }`,
      variables: { p: 12 },
      data: false,
    },
    {
      what: "a missing required variable",
      query: `query($p: String!) { link(path: $p) { path } }`,
      data: false,
    },
    {
      what: "a query over the token limit",
      query: `{ ${"a: __typename ".repeat(700)} }`,
      data: false,
    },
    {
      what: "a page size that prices the query past the cost limit",
      query: `query($id: ID!, $n: Int) { environment(projectId: $id) { links(first: $n) {
        edges { node { ${
        Array.from({ length: 14 }, (_, i) =>
          `m${i}: metrics { link { metrics { link { id title subtitle path accessPath updatedAt
            data tags active trackingCampaign trackingSource trackingMedium showPreview image
            createdAt state } } } }`).join(" ")
      } } } } } }`,
      variables: { id: String(p.productionId), n: 100 },
      data: false,
    },
    {
      what: "a valid query whose field fails (no feed token: data is null)",
      query: `query($p: ID!) { eventFeed(projectId: $p) { schemaVersion } }`,
      variables: { p: String(p.productionId) },
      data: true,
    },
  ];

Deno.test("request errors are 400 in application/graphql-response+json and 200 in application/json, by POST and by GET", async () => {
  const accepts: [string | null, number, string][] = [
    [GRAPHQL_RESPONSE, 400, GRAPHQL_RESPONSE],
    [`${GRAPHQL_RESPONSE}, application/json`, 400, GRAPHQL_RESPONSE],
    [`${GRAPHQL_RESPONSE};charset=utf-8, application/json;q=0.9`, 400, GRAPHQL_RESPONSE],
    ["application/json", 200, "application/json"],
    [`application/json, ${GRAPHQL_RESPONSE}`, 200, "application/json"],
    ["*/*", 200, "application/json"],
    [null, 200, "application/json"],
  ];
  for (const c of CASES) {
    for (const [accept, requestErrorStatus, type] of accepts) {
      const label = `${c.what}, Accept: ${accept}`;
      const { post, get } = await both(
        c.query,
        c.variables ?? {},
        accept === null ? sdk : { ...sdk, Accept: accept },
      );
      assert.deepEqual(post, get, `${label}: POST and GET differ`);
      assert.equal(post.type, `${type}; charset=utf-8`, label);
      assert.ok(post.body.errors?.length > 0, label);
      if (c.data) {
        // Execution ran: the answer holds data, and is a 200 in either type.
        assert.equal(post.status, 200, label);
        assert.ok("data" in post.body, label);
      } else {
        assert.equal(post.status, requestErrorStatus, `${label}: ${JSON.stringify(post.body)}`);
        assert.ok(!("data" in post.body), label);
        assert.match(post.body.errors[0].extensions.code, /^[A-Z_]+$/, label);
        // Yoga's internal marks stay inside.
        assert.equal(post.body.errors[0].extensions.http, undefined, label);
      }
    }
  }
});

Deno.test("a successful query answers in the media type asked for, by POST and by GET", async () => {
  await fetch(`${srv.url}/api/v1/sdk/generate_link`, {
    method: "POST",
    headers: { ...sdk, "Content-Type": "application/json" },
    body: "{}",
  }).then((r) => r.body?.cancel());
  for (const accept of [GRAPHQL_RESPONSE, "application/json", null]) {
    const { post, get } = await both(
      `{ projectMetrics { totalViews } }`,
      {},
      accept === null ? sdk : { ...sdk, Accept: accept },
    );
    assert.deepEqual(post, get);
    assert.equal(post.status, 200);
    assert.equal(post.type, `${accept ?? "application/json"}; charset=utf-8`);
    assert.equal(post.body.errors, undefined);
  }
});

Deno.test("one document, several operations: each request runs the operation it names", async () => {
  const document = `query A { a: __typename } query B { b: __typename }`;
  for (const [name, key] of [["A", "a"], ["B", "b"], ["A", "a"]] as const) {
    const res = await fetch(`${srv.url}/graphql`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...sdk },
      body: JSON.stringify({ query: document, operationName: name }),
    });
    assert.deepEqual(await res.json(), { data: { [key]: "Query" } });
  }
  // Without a name, a document of two operations is refused, planned or not.
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${srv.url}/graphql`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...sdk },
      body: JSON.stringify({ query: document }),
    });
    const body = await res.json();
    assert.ok(body.errors?.length > 0, JSON.stringify(body));
  }
});
