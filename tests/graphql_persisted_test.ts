// Persisted documents over real HTTP: automatic persisted queries as Apollo Client speaks them
// (by default), and trusted documents (GRAPHQL_TRUSTED_DOCUMENTS): only listed documents run.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ConfigError, resolveConfig } from "../config.ts";
import { type Json } from "./helpers/graphql.ts";
import {
  ADMIN_TOKEN,
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  serveApp,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

async function post(base: string, body: Json, headers: Record<string, string> = {}) {
  const res = await call(base, "POST", "/graphql", { headers, body });
  return { status: res.status, body: res.body as Json };
}

const persisted = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

Deno.test("automatic persisted queries: not found, then registered with its hash, then by hash alone", async () => {
  const p = await createProject(srv.url);
  const query = `query Env($id: ID!) { environment(projectId: $id) { projectId name } }`;
  const hash = sha256(query);
  const variables = { id: String(p.productionId) };

  const miss = await post(srv.url, { variables, extensions: persisted(hash) }, adminHeaders);
  assert.equal(miss.status, 200);
  assert.equal(miss.body.errors[0].message, "PersistedQueryNotFound");
  assert.equal(miss.body.errors[0].extensions.code, "PERSISTED_QUERY_NOT_FOUND");

  const register = await post(
    srv.url,
    { query, variables, extensions: persisted(hash) },
    adminHeaders,
  );
  assert.equal(register.status, 200);
  assert.deepEqual(register.body.data.environment, { projectId: variables.id, name: "production" });

  const byHash = await post(srv.url, { variables, extensions: persisted(hash) }, adminHeaders);
  assert.deepEqual(byHash.body, register.body);
  // Apollo Client sends hashed queries as GET.
  const params = new URLSearchParams({
    variables: JSON.stringify(variables),
    extensions: JSON.stringify(persisted(hash)),
  });
  const get = await call(srv.url, "GET", `/graphql?${params}`, {
    headers: { ...adminHeaders, Accept: "application/json" },
  });
  assert.equal(get.status, 200, get.text);
  assert.deepEqual(get.body, register.body);

  // A hash that is not the document's is refused, and nothing is kept under it.
  const other = `{ __typename }`;
  const wrong = await post(srv.url, { query: other, extensions: persisted(sha256("x")) });
  assert.equal(wrong.body.errors[0].extensions.code, "PERSISTED_QUERY_MISMATCH");
  const stillMissing = await post(srv.url, { extensions: persisted(sha256("x")) });
  assert.equal(stillMissing.body.errors[0].extensions.code, "PERSISTED_QUERY_NOT_FOUND");
});

Deno.test("automatic persisted queries keep no document over 32 KiB", async () => {
  const big = `{ __typename } # ${"x".repeat(40 * 1024)}`;
  const hash = sha256(big);
  const register = await post(srv.url, { query: big, extensions: persisted(hash) });
  assert.equal(register.status, 413);
  const byHash = await post(srv.url, { extensions: persisted(hash) });
  assert.equal(byHash.body.errors[0].extensions.code, "PERSISTED_QUERY_NOT_FOUND");
});

Deno.test("trusted documents: only listed ones run, by text or by hash", async () => {
  const listed = `query Env($id: ID!) { environment(projectId: $id) { projectId } }`;
  const subscription = `subscription Feed($p: ID!) { eventFeed(projectId: $p) { cursor } }`;
  const dir = await Deno.makeTempDir();
  const file = `${dir}/persisted-documents.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({ [sha256(listed)]: listed, [sha256(subscription)]: subscription }),
  );
  const app = serveApp(srv.db, { config: { GRAPHQL_TRUSTED_DOCUMENTS: file } });
  try {
    const p = await createProject(app.url);
    const variables = { id: String(p.productionId) };
    const expected = { data: { environment: { projectId: variables.id } } };
    const byText = await post(app.url, { query: listed, variables }, adminHeaders);
    assert.deepEqual(byText.body, expected);
    const byHash = await post(
      app.url,
      { variables, extensions: persisted(sha256(listed)) },
      adminHeaders,
    );
    assert.deepEqual(byHash.body, expected);

    const before = await srv.sql`select count(*)::int as n from links`;
    const refusals = [
      // An unlisted document, as text, as text with its hash (an APQ registration), by hash.
      { query: `mutation { createLink(projectId: "${variables.id}", input: {}) { path } }` },
      {
        query: `{ __typename }`,
        extensions: persisted(sha256(`{ __typename }`)),
      },
      { extensions: persisted(sha256(`{ __typename }`)) },
      // The listed text with a little more white space is another document.
      { query: listed + " ", variables },
    ];
    for (const body of refusals) {
      const r = await post(app.url, body, adminHeaders);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.data, undefined);
      assert.equal(r.body.errors[0].extensions.code, "PERSISTED_QUERY_NOT_IN_LIST");
    }
    // The registration attempt did not list it.
    const after = await post(app.url, { extensions: persisted(sha256(`{ __typename }`)) });
    assert.equal(after.body.errors[0].extensions.code, "PERSISTED_QUERY_NOT_IN_LIST");
    assert.deepEqual(await srv.sql`select count(*)::int as n from links`, before);

    // Over WebSocket too.
    const token = await createFeedToken(app.url, p.productionId);
    const { createClient } = await import("graphql-ws");
    const client = createClient({
      url: app.url.replace(/^http/, "ws") + "/graphql",
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { Authorization: `Bearer ${token.value}` },
    });
    try {
      const outcome = (query: string) =>
        new Promise<Json>((resolve) => {
          const unsubscribe = client.subscribe({ query, variables: { p: variables.id } }, {
            next: (r) => {
              unsubscribe();
              resolve({ next: r });
            },
            error: (e) => resolve({ error: e }),
            complete: () => resolve({ complete: true }),
          });
        });
      const unlisted = await outcome(
        `subscription($p: ID!) { eventFeed(projectId: $p) { cursor } }`,
      );
      assert.match(JSON.stringify(unlisted.error), /PERSISTED_QUERY_NOT_IN_LIST/);
      // The listed one opens (it has nothing to send yet: it is still open after a while).
      const listedOutcome = await Promise.race([
        outcome(subscription),
        new Promise((resolve) => setTimeout(() => resolve("open"), 500)),
      ]);
      assert.equal(listedOutcome, "open");
    } finally {
      await client.dispose();
    }
  } finally {
    await app.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("GRAPHQL_TRUSTED_DOCUMENTS that cannot be read or checked stops start-up, naming it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const env = (file: string) => ({ GRAPHQL_TRUSTED_DOCUMENTS: file, ADMIN_TOKEN });
    const write = async (name: string, text: string) => {
      await Deno.writeTextFile(`${dir}/${name}`, text);
      return `${dir}/${name}`;
    };
    const cases: [string, RegExp][] = [
      [`${dir}/missing.json`, /not a readable JSON file/],
      [await write("list.json", `["{ __typename }"]`), /JSON object/],
      [await write("short.json", `{"abc": "{ __typename }"}`), /SHA-256 in hex/],
      [
        await write("wrong.json", JSON.stringify({ [sha256("x")]: "{ __typename }" })),
        /is not the SHA-256/,
      ],
      [await write("syntax.json", JSON.stringify({ [sha256("{ a")]: "{ a" })), /does not parse/],
    ];
    for (const [file, message] of cases) {
      assert.throws(() => resolveConfig(env(file)), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /^GRAPHQL_TRUSTED_DOCUMENTS: /);
        assert.match(err.message, message);
        return true;
      });
    }
    const good = await write("good.json", JSON.stringify({ [sha256("{ a }")]: "{ a }" }));
    assert.deepEqual([...resolveConfig(env(good)).graphqlTrustedDocuments!.keys()], [
      sha256("{ a }"),
    ]);
    assert.equal(resolveConfig({ ADMIN_TOKEN }).graphqlTrustedDocuments, null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
