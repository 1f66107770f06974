// GraphQL over HTTP's status codes: a request that fails before execution (a document that does
// not parse or validate, variables of the wrong type) is HTTP 400 when the client accepts
// application/graphql-response+json first, and 200 with `errors` in application/json (the legacy
// type, and what a client without Accept gets). The fast path (resolvers/fast_path.ts) and Yoga
// answer alike: same status, media type and body, for every Accept.
import assert from "node:assert/strict";
import { useErrorHandler } from "@envelop/core";
import { createFastPath, responseType } from "../resolvers/fast_path.ts";
import {
  createSchema,
  createYoga,
  type FetchAPI,
  type Plugin,
  type YogaServerInstance,
} from "graphql-yoga";
import { createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const p = await createProject(srv.url);
const sdk = { "PROJECT-KEY": p.key, ENVIRONMENT: "production" };

const GRAPHQL_RESPONSE = "application/graphql-response+json";

/** The same query POSTed as JSON (the fast path's) and sent by GET (always Yoga's). */
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

Deno.test("request errors are 400 in application/graphql-response+json and 200 in application/json, on both paths", async () => {
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
      assert.deepEqual(post, get, `${label}: the fast path and Yoga differ`);
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

Deno.test("a successful query answers in the media type asked for, on both paths", async () => {
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

Deno.test("the fast path picks the media type Yoga picks, for any Accept", async () => {
  const accepts = [
    GRAPHQL_RESPONSE,
    "application/json",
    `${GRAPHQL_RESPONSE}, application/json`,
    `application/json, ${GRAPHQL_RESPONSE}`,
    "application/*",
    "*/*",
    "text/plain, */*;q=0.8",
    `${GRAPHQL_RESPONSE};charset=latin1, application/json`,
    "APPLICATION/JSON",
    "",
  ];
  for (const accept of accepts) {
    const res = await fetch(`${srv.url}/graphql?query=${encodeURIComponent("{ __typename }")}`, {
      headers: accept ? { Accept: accept } : {},
    });
    await res.body?.cancel();
    const yoga = res.headers.get("content-type")?.split(";")[0];
    assert.equal(responseType(accept), yoga, `Accept: ${accept}`);
  }
  // A streaming type the client names is Yoga's to choose.
  assert.equal(responseType("text/event-stream"), null);
  assert.equal(responseType("multipart/mixed, application/json"), null);
  assert.equal(responseType("text/plain"), null);
});

Deno.test("the fast path builds Yoga's context itself only while no plugin builds one too", async () => {
  const schema = createSchema({
    typeDefs: "type Query { context: String }",
    resolvers: {
      Query: {
        context: (_: unknown, __: unknown, ctx: Record<string, unknown>) =>
          Object.keys(ctx).filter((k) => !k.startsWith("_")).sort().join(","),
      },
    },
  });
  const context = ({ requestId }: { requestId: string }) => ({ mine: requestId });
  const run = async (plugins: Plugin[]) => {
    const options = { schema, context, plugins, fetchAPI: globalThis as unknown as FetchAPI };
    type Yoga = YogaServerInstance<{ requestId: string }, Record<string, unknown>>;
    // deno-lint-ignore no-explicit-any
    const yoga = createYoga(options as any) as unknown as Yoga;
    const fast = createFastPath<{ requestId: string }>(yoga, () => true, context);
    const body = JSON.stringify({ query: "{ context }" });
    const request = new Request("http://x/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
    });
    const res = await fast(request, body, { requestId: "r1" });
    return (await res!.json()).data.context as string;
  };
  // Yoga's context option alone: called directly, the same fields envelop would assign.
  const alone = await run([]);
  assert.deepEqual(alone.split(","), ["mine", "params", "request", "requestId"]);
  // A plugin of its own that builds the context: envelop's chain runs, both extensions arrive.
  const extended = await run([{
    onContextBuilding: ({ extendContext }: { extendContext: (e: object) => void }) =>
      extendContext({ extra: 1 }),
  } as Plugin]);
  assert.deepEqual(extended.split(","), ["extra", "mine", "params", "request", "requestId"]);
});

Deno.test("the fast path runs the plugins' execute hooks as envelop does, in order, with their effects", async () => {
  const schema = createSchema({
    typeDefs: "type Query { a: String, boom: String, extended: String }",
    resolvers: {
      Query: {
        a: () => "a",
        boom: () => {
          throw new Error("a secret");
        },
        extended: (_: unknown, __: unknown, ctx: Record<string, unknown>) => String(ctx.extended),
      },
    },
  });
  const calls: string[] = [];
  type Done = { result: { data?: unknown }; setResult: (r: unknown) => void };
  const plugins = [
    {
      // A hook that returns a promise: awaited before the next.
      onExecute: async ({ extendContext }: { extendContext: (e: object) => void }) => {
        await Promise.resolve();
        calls.push("first");
        extendContext({ extended: "yes" });
        return { onExecuteDone: () => void calls.push("first done") };
      },
    },
    {
      onExecute: (
        { args, setResultAndStopExecution }: {
          args: { operationName?: string };
          setResultAndStopExecution: (r: unknown) => void;
        },
      ) => {
        calls.push(`second ${args.operationName ?? "-"}`);
        if (args.operationName === "Stop") setResultAndStopExecution({ data: { a: "stopped" } });
        return {
          onExecuteDone: ({ result, setResult }: Done) => {
            calls.push("second done");
            setResult({ ...result, data: { ...result.data as object, seen: true } });
          },
        };
      },
    },
    { onExecute: () => void calls.push("third") },
    useErrorHandler(({ errors }) => void calls.push(`logged ${errors.length}`)),
  ] as Plugin[];
  const options = { schema, plugins, logging: false, fetchAPI: globalThis as unknown as FetchAPI };
  type Yoga = YogaServerInstance<Record<string, never>, Record<string, unknown>>;
  // deno-lint-ignore no-explicit-any
  const yoga = createYoga(options as any) as unknown as Yoga;
  const fast = createFastPath<Record<string, never>>(yoga, () => true);
  const documents = [
    "{ a extended }",
    "{ a boom }",
    "query Stop { a }\nquery Go { a }",
  ];
  for (const query of documents) {
    for (const operationName of query.includes("Stop") ? ["Stop", "Go"] : [undefined]) {
      // Twice each: the first request plans the document, the second runs the plan.
      for (const round of [1, 2]) {
        const body = JSON.stringify({ query, operationName });
        const post = () =>
          new Request("http://x/graphql", {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body,
          });
        calls.length = 0;
        const viaFast = await fast(post(), body, {});
        const fastCalls = [...calls];
        calls.length = 0;
        const viaYoga = await yoga.fetch(post(), {});
        const label = `${query} ${operationName} (${round})`;
        assert.deepEqual(fastCalls, calls, label);
        assert.equal(viaFast!.status, viaYoga.status, label);
        assert.deepEqual(await viaFast!.json(), await viaYoga.json(), label);
      }
    }
  }
  // The resolver's error went through the error handler and was masked on both paths.
  const body = JSON.stringify({ query: "{ boom }" });
  const res = await fast(
    new Request("http://x/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
    }),
    body,
    {},
  );
  const answer = await res!.json();
  assert.equal(answer.errors[0].message, "Unexpected error.");
  assert.equal(answer.data.seen, true);
});
