// The GraphQL access table (services/access/graphql_fields.ts) drives this test, as the REST
// route table drives tests/access_matrix_test.ts, and who may use each operation is
// docs/access.md's (helpers/access_table.ts, written by hand, not permissions.ts): every root field, every Environment field and
// every field with a resolver of its own has an entry; every field the table gives an operation
// is driven with an API key of each scope, another environment's key, and a dashboard session of
// each role (and an outsider's, and the instance admin's): allowed or refused exactly as the
// table says, a refused mutation changing nothing (row counts, states and the audit log), an
// allowed one writing one audit entry with the caller as its actor.
import assert from "node:assert/strict";
import { isObjectType } from "graphql";
import { schema } from "../schema/mod.ts";
import {
  type AdminField,
  fieldAccess,
  fieldOperations,
  GRAPHQL_ACCESS,
} from "../services/access/graphql_fields.ts";
import { type Operation, type Role, type Scope, SCOPES } from "../services/access/permissions.ts";
import { EXPECTED_ACCESS, roleMay } from "./helpers/access_table.ts";
import { routeAccess } from "../services/access/routes.ts";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import { gql, type Json } from "./helpers/graphql.ts";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const srv = await startTestServer({ config: { DESTINATIONS_ALLOW_PRIVATE: "true" } });
Deno.test.afterAll(() => srv.close());

/** Types all of whose fields need an entry, whatever their resolvers. */
const COVERED_TYPES = ["Query", "Mutation", "Subscription", "Environment"];

Deno.test("the GraphQL access table has an entry for every field that needs one, and no stale one", () => {
  const fields = new Set<string>();
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      const coordinate = `${type.name}.${field.name}`;
      fields.add(coordinate);
      // Pothos marks fields that only expose a property of their parent: those read nothing
      // beyond what the parent's check covered. Every other field resolves on its own.
      const ownResolver = !field.extensions?.pothosExposedField;
      if ((COVERED_TYPES.includes(type.name) || ownResolver) && !fieldAccess(coordinate)) {
        missing.push(coordinate);
      }
    }
  }
  assert.deepEqual(missing, [], "fields without an entry in GRAPHQL_ACCESS");
  const stale = Object.keys(GRAPHQL_ACCESS).filter((c) => !fields.has(c));
  assert.deepEqual(stale, [], "entries naming no field of the schema");
  // Whoever may use a field of an environment sees the environment.
  const visible = new Set(fieldOperations("Query.environment"));
  for (const [coordinate, access] of Object.entries(GRAPHQL_ACCESS)) {
    if (!coordinate.startsWith("Environment.") || access === "parent") continue;
    for (const op of typeof access === "string" ? [access] : access) {
      assert.ok(visible.has(op as Operation), `${coordinate}: ${op} does not show the environment`);
    }
  }
});

/** Fields that do what an admin REST route does: they must need what that route needs. */
const REST_EQUIVALENTS: Record<string, string> = {
  "Environment.links": "GET /api/v1/projects/:project_id/links",
  "Environment.analytics": "GET /api/v1/projects/:project_id/analytics",
  "Environment.funnel": "GET /api/v1/projects/:project_id/analytics/funnel",
  "Environment.feedTokens": "GET /api/v1/projects/:project_id/event_stream_tokens",
  "Environment.destinations": "GET /api/v1/projects/:project_id/destinations",
  "Environment.apiKeys": "GET /api/v1/projects/:project_id/api_keys",
  "Mutation.createLink": "POST /api/v1/projects/:project_id/links",
  "Mutation.updateLink": "PATCH /api/v1/projects/:project_id/links/:link_path",
  "Mutation.deleteLink": "DELETE /api/v1/projects/:project_id/links/:link_path",
  "Mutation.createFeedToken": "POST /api/v1/projects/:project_id/event_stream_tokens",
  "Mutation.revokeFeedToken": "DELETE /api/v1/projects/:project_id/event_stream_tokens/:token_id",
  "Mutation.createDestination": "POST /api/v1/projects/:project_id/destinations",
  "Mutation.pauseDestination": "PATCH /api/v1/projects/:project_id/destinations/:destination_id",
  "Mutation.resumeDestination": "PATCH /api/v1/projects/:project_id/destinations/:destination_id",
  "Mutation.rotateDestinationSecret":
    "POST /api/v1/projects/:project_id/destinations/:destination_id/rotate_secret",
  "Mutation.testDestination": "POST /api/v1/projects/:project_id/destinations/:destination_id/test",
  "Mutation.deleteDestination": "DELETE /api/v1/projects/:project_id/destinations/:destination_id",
  "Mutation.createApiKey": "POST /api/v1/projects/:project_id/api_keys",
  "Mutation.revokeApiKey": "DELETE /api/v1/projects/:project_id/api_keys/:key_id",
  "Mutation.setSdkLimits": "PATCH /api/v1/admin/projects/:hashid",
  "Mutation.setReportingCurrency": "PATCH /api/v1/admin/projects/:hashid",
  "Mutation.setAttributionSettings": "PATCH /api/v1/admin/projects/:hashid",
};

Deno.test("every admin mutation and list needs exactly what its REST route needs", () => {
  const mutations = Object.keys(GRAPHQL_ACCESS).filter((c) =>
    c.startsWith("Mutation.") && fieldAccess(c) !== "sdk"
  );
  assert.deepEqual(mutations.filter((m) => !REST_EQUIVALENTS[m]), [], "mutations without a route");
  for (const [field, route] of Object.entries(REST_EQUIVALENTS)) {
    const [method, path] = route.split(" ") as [string, string];
    assert.deepEqual(fieldAccess(field), routeAccess(method, path), `${field} and ${route}`);
  }
});

// --- The world: one project, its links, tokens, destinations and keys ------------------------

const project = await createProject(srv.url, { name: "Graph matrix" });
const elsewhere = await createProject(srv.url, { name: "Elsewhere" });
const env = project.productionId;
const rest = (method: string, path: string, body?: unknown) =>
  call(srv.url, method, path, { headers: adminHeaders, body });

async function made(method: string, path: string, body: unknown, pick: (b: Json) => string) {
  const res = await rest(method, path, body);
  assert.ok(res.status < 300, `${method} ${path}: ${res.text}`);
  return pick(res.body);
}

let serial = 0;
const freshLink = () =>
  made("POST", `/api/v1/projects/${env}/links`, { title: `L${++serial}` }, (b) => b.link.path);
const freshSplitLink = () =>
  made("POST", `/api/v1/projects/${env}/links`, {
    title: `S${++serial}`,
    split: [{ url: "https://a.example/", weight: 1 }, { url: "https://b.example/", weight: 1 }],
  }, (b) => b.link.path);
const freshToken = () =>
  made(
    "POST",
    `/api/v1/projects/${env}/event_stream_tokens`,
    { name: `t${++serial}` },
    (b) => String(b.token.id),
  );
const freshDestination = () =>
  made(
    "POST",
    `/api/v1/projects/${env}/destinations`,
    { url: "http://127.0.0.1:9/hook" },
    (b) => String(b.destination.id),
  );
const freshKey = () =>
  made(
    "POST",
    `/api/v1/projects/${env}/api_keys`,
    { name: `k${++serial}`, scopes: ["links:read"] },
    (b) => String(b.api_key.id),
  );

const sharedLink = await freshLink();
const shared = {
  path: sharedLink,
  token: await freshToken(),
  destination: await freshDestination(),
  key: await freshKey(),
};

interface Driver {
  /** The document; `$id` is the environment, `$path` a link, `$target` a token, destination or key. */
  doc: string;
  /** Variables for an attempt that may be allowed (a fresh target for what it consumes). */
  fresh?: () => Promise<Record<string, unknown>>;
  /** Reached through the SDK's link(path) (PROJECT-KEY headers) instead of environment(…). */
  sdk?: boolean;
  /** A change: one audit entry when allowed (testDestination sends, changes nothing). */
  change?: boolean;
}

const onEnv = (selection: string) =>
  `query($id: ID!${selection.includes("$path") ? ", $path: String!" : ""}) {
    environment(projectId: $id) { projectId ${selection} } }`;

/** One document per field the table gives an operation: the test fails when one is missing. */
const DRIVERS: Record<AdminField, Driver> = {
  "Query.environment": { doc: onEnv("") },
  "Environment.project": { doc: onEnv("project { id }") },
  "Environment.links": { doc: onEnv("links(first: 1) { edges { cursor } }") },
  "Environment.link": { doc: onEnv("link(path: $path) { path }") },
  "Environment.analytics": { doc: onEnv("analytics { totals { views } }") },
  "Environment.funnel": { doc: onEnv("funnel { totals { views } }") },
  "Environment.feedTokens": { doc: onEnv("feedTokens { id hint }") },
  "Environment.destinations": { doc: onEnv("destinations { id state pending dropped }") },
  "Environment.apiKeys": { doc: onEnv("apiKeys { id hint scopes }") },
  "Link.metrics": {
    doc: `query($path: String!) { link(path: $path) { metrics { totalViews } } }`,
    sdk: true,
  },
  "Link.analytics": {
    doc: `query($path: String!) { link(path: $path) { analytics { totals { views } } } }`,
    sdk: true,
  },
  "Link.funnel": {
    doc: `query($path: String!) { link(path: $path) { funnel { totals { views } } } }`,
    sdk: true,
  },
  "Link.splitResults": {
    doc: `query($path: String!) { link(path: $path) { splitResults { enoughData } } }`,
    fresh: async () => ({ path: await freshSplitLink() }),
    sdk: true,
  },
  "Mutation.createLink": {
    doc: `mutation($id: ID!) { createLink(projectId: $id, input: { title: "by the graph" }) {
      path } }`,
    change: true,
  },
  "Mutation.updateLink": {
    doc: `mutation($id: ID!, $path: String!) {
      updateLink(projectId: $id, path: $path, input: { title: "changed by the graph" }) { path } }`,
    change: true,
  },
  "Mutation.deleteLink": {
    doc: `mutation($id: ID!, $path: String!) { deleteLink(projectId: $id, path: $path) }`,
    fresh: async () => ({ path: await freshLink() }),
    change: true,
  },
  "Mutation.createFeedToken": {
    doc: `mutation($id: ID!) { createFeedToken(projectId: $id, input: { name: "g" }) { value } }`,
    change: true,
  },
  "Mutation.revokeFeedToken": {
    doc: `mutation($id: ID!, $target: ID!) { revokeFeedToken(projectId: $id, id: $target) }`,
    fresh: async () => ({ target: await freshToken() }),
    change: true,
  },
  "Mutation.createDestination": {
    doc: `mutation($id: ID!) { createDestination(projectId: $id,
      input: { url: "http://127.0.0.1:9/graph" }) { secret } }`,
    change: true,
  },
  "Mutation.pauseDestination": {
    doc: `mutation($id: ID!, $target: ID!) { pauseDestination(projectId: $id, id: $target) {
      state } }`,
    fresh: async () => ({ target: await freshDestination() }),
    change: true,
  },
  "Mutation.resumeDestination": {
    doc: `mutation($id: ID!, $target: ID!) { resumeDestination(projectId: $id, id: $target) {
      state } }`,
    fresh: async () => {
      const target = await freshDestination();
      await rest("PATCH", `/api/v1/projects/${env}/destinations/${target}`, { paused: true });
      return { target };
    },
    change: true,
  },
  "Mutation.rotateDestinationSecret": {
    doc: `mutation($id: ID!, $target: ID!) { rotateDestinationSecret(projectId: $id,
      id: $target) { secret } }`,
    change: true,
  },
  "Mutation.testDestination": {
    doc: `mutation($id: ID!, $target: ID!) { testDestination(projectId: $id, id: $target) {
      durationMs } }`,
  },
  "Mutation.deleteDestination": {
    doc: `mutation($id: ID!, $target: ID!) { deleteDestination(projectId: $id, id: $target) }`,
    fresh: async () => ({ target: await freshDestination() }),
    change: true,
  },
  // Scope admin: within what every principal allowed by the table may give (an admin key
  // gives at most its own scopes).
  "Mutation.createApiKey": {
    doc: `mutation($id: ID!) { createApiKey(projectId: $id,
      input: { name: "g", scopes: [ADMIN] }) { value } }`,
    change: true,
  },
  "Mutation.revokeApiKey": {
    doc: `mutation($id: ID!, $target: ID!) { revokeApiKey(projectId: $id, id: $target) }`,
    fresh: async () => ({ target: await freshKey() }),
    change: true,
  },
  "Mutation.setSdkLimits": {
    doc: `mutation($id: ID!) { setSdkLimits(projectId: $id, input: { perAddress: 20000 }) {
      sdkLimits { perAddress } } }`,
    change: true,
  },
  "Mutation.setReportingCurrency": {
    doc: `mutation($id: ID!) { setReportingCurrency(projectId: $id, currency: "USD") {
      reportingCurrency } }`,
    change: true,
  },
  "Mutation.setAttributionSettings": {
    doc: `mutation($id: ID!) { setAttributionSettings(projectId: $id, input: { windowDays: 30 }) {
      attributionWindowDays } }`,
    change: true,
  },
};

/** The target a driver's `$target` names: the shared one of its kind. */
function sharedTarget(field: AdminField): string | undefined {
  if (/FeedToken/.test(field)) return shared.token;
  if (/Destination/.test(field)) return shared.destination;
  if (/ApiKey/.test(field)) return shared.key;
  return undefined;
}

async function snapshot(): Promise<string> {
  const [row] = await srv.sql`
    select (select count(*) from audit_log) as audit,
      (select string_agg(path || active || title, ',' order by id) from links) as links,
      (select string_agg(id || coalesce(revoked_at::text, '-'), ',' order by id)
        from feed_tokens) as tokens,
      (select string_agg(id || coalesce(revoked_at::text, '-'), ',' order by id)
        from api_keys) as keys,
      (select string_agg(id || paused::text || secret_sealed, ',' order by id)
        from destinations) as destinations
  `;
  return JSON.stringify(row);
}

// --- Who asks ----------------------------------------------------------------------------------

interface Caller {
  name: string;
  headers: Record<string, string>;
  /** An API key's scope, or a person's role (null: a member of another project only). */
  scope?: Scope | "other environment";
  role?: Role | null | "instance";
  /** The audit actor an allowed change records. */
  actor: string;
}

const PASSWORD = "graph matrix password 0123";

async function personWithRole(name: string, role: Role | null): Promise<Caller> {
  const email = `${name}@example.test`;
  const res = await rest("POST", "/api/v1/admin/accounts", { email, name });
  const id = res.body.account.id as number;
  const hashid = role ? project.hashid : elsewhere.hashid;
  await rest("PUT", `/api/v1/admin/projects/${hashid}/members/${id}`, { role: role ?? "owner" });
  const token = new URL(res.body.setup_url).searchParams.get("token")!;
  const setup = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token,
    password: PASSWORD,
    confirm: PASSWORD,
  });
  const cookie = setup.headers.get("set-cookie")!.split(";")[0]!;
  const home = await getPage(srv.url, "/dashboard", { cookie });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
  return {
    name: `${name}'s session`,
    headers: { cookie, "X-CSRF-Token": csrf, Origin: srv.url },
    role,
    actor: `account:${id}`,
  };
}

async function callers(): Promise<Caller[]> {
  const list: Caller[] = [];
  for (const scope of SCOPES) {
    const res = await rest("POST", `/api/v1/projects/${env}/api_keys`, {
      name: `scope ${scope}`,
      scopes: [scope],
    });
    list.push({
      name: `key with ${scope}`,
      headers: { Authorization: `Bearer ${res.body.api_key.value}` },
      scope,
      actor: `api_key:${res.body.api_key.id}`,
    });
  }
  const other = await rest("POST", `/api/v1/projects/${project.testId}/api_keys`, {
    name: "test environment",
    scopes: [...SCOPES],
  });
  list.push({
    name: "another environment's key",
    headers: { Authorization: `Bearer ${other.body.api_key.value}` },
    scope: "other environment",
    actor: "-",
  });
  // The owner first: a project with members keeps an owner.
  for (const role of ["owner", "admin", "editor", "viewer", null] as const) {
    list.push(await personWithRole(role ?? "outsider", role));
  }
  const instance = await signInOverHttp(srv.url);
  list.push({
    name: "the instance admin's session",
    headers: { cookie: instance.cookie, "X-CSRF-Token": instance.csrf, Origin: srv.url },
    role: "instance",
    actor: "admin_token:-",
  });
  return list;
}

/** The refusal the table gives `caller` for `ops`, or null when one of them is allowed. */
function refusalOf(caller: Caller, ops: readonly Operation[]): string | null {
  let first: string | null = null;
  for (const op of ops) {
    // docs/access.md's table, written by hand (helpers/access_table.ts): not permissions.ts.
    const p = EXPECTED_ACCESS[op];
    let refusal: string | null;
    if (caller.role !== undefined) {
      refusal = roleMay(caller.role, op) ? null : "forbidden";
    } else if (caller.scope === "other environment" || p.scope === null) {
      refusal = "forbidden";
    } else {
      refusal = p.scope === caller.scope ? null : "insufficient_scope";
    }
    if (refusal === null) return null;
    first ??= refusal;
  }
  return first;
}

const lastAudit = async () =>
  (await srv.sql`select coalesce(max(id), 0)::int as id from audit_log`)[0]!.id as number;

Deno.test("every admin field and mutation: each key and each session is allowed or refused as the table says", async () => {
  const everyone = await callers();
  const fields = Object.keys(GRAPHQL_ACCESS).filter((c) => {
    const access = fieldAccess(c);
    return access !== "sdk" && access !== "feed" && access !== "parent";
  }) as AdminField[];
  assert.deepEqual(fields.filter((f) => !DRIVERS[f]), [], "admin fields without a driver");
  let allowed = 0;
  let refused = 0;
  for (const field of fields) {
    const driver = DRIVERS[field];
    const ops = fieldOperations(field);
    const name = field.split(".")[1]!;
    for (const caller of everyone) {
      const refusal = refusalOf(caller, ops);
      const seesEnvironment = refusalOf(caller, fieldOperations("Query.environment")) === null;
      const label = `${field} by ${caller.name}`;
      const variables: Record<string, unknown> = {
        id: String(env),
        path: shared.path,
        ...(sharedTarget(field) ? { target: sharedTarget(field) } : {}),
        ...(refusal === null && driver.fresh ? await driver.fresh() : {}),
      };
      const headers = driver.sdk
        ? { ...caller.headers, "PROJECT-KEY": project.key, ENVIRONMENT: "production" }
        : caller.headers;
      const before = await snapshot();
      const auditBefore = await lastAudit();
      const r = await gql(srv.url, driver.doc, { headers, variables });
      assert.equal(r.status, 200, label);
      if (refusal === null) {
        allowed++;
        assert.equal(r.errors, undefined, `${label}: ${JSON.stringify(r.errors)}`);
        const value = field.startsWith("Mutation.")
          ? r.data[name]
          : field.startsWith("Link.")
          ? r.data.link[name]
          : field === "Query.environment"
          ? r.data.environment
          : r.data.environment[name];
        assert.ok(value !== null && value !== undefined, `${label}: ${JSON.stringify(r.data)}`);
        const entries = await srv.sql`
          select actor_type || ':' || coalesce(actor_id::text, '-') as actor from audit_log
          where id > ${auditBefore} order by id`;
        assert.deepEqual(
          entries.map((e) => e.actor),
          driver.change ? [caller.actor] : [],
          `${label}: its audit entries`,
        );
      } else {
        refused++;
        if (!field.startsWith("Mutation.") && !driver.sdk && !seesEnvironment) {
          // Not theirs to see: the environment is null, as an unknown one.
          assert.equal(r.data.environment, null, label);
          assert.equal(r.errors, undefined, `${label}: ${JSON.stringify(r.errors)}`);
        } else if (field === "Query.environment") {
          assert.equal(r.data.environment, null, label);
        } else {
          const error = r.errors?.[0];
          assert.equal(r.errors?.length, 1, `${label}: ${JSON.stringify(r.errors)}`);
          assert.equal(error.extensions.code, "FORBIDDEN", `${label}: ${error.message}`);
          assert.equal(error.extensions.reason, refusal, `${label}: ${error.message}`);
          assert.deepEqual(error.path.at(-1), name, label);
          if (refusal === "insufficient_scope") {
            assert.match(error.message, new RegExp(`"${EXPECTED_ACCESS[ops[0]!].scope}"`), label);
          }
        }
        assert.equal(await snapshot(), before, `${label}: a refused request changed data`);
      }
    }
  }
  assert.ok(allowed >= 60, `only ${allowed} allowed cases`);
  assert.ok(refused >= 150, `only ${refused} refused cases`);
});
