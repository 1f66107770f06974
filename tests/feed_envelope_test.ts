// The feed envelope is defined once (services/feed/envelope.ts); every surface that shows it is
// checked against that definition here, so the next field cannot drift.
import assert from "node:assert/strict";
import { getNamedType, GraphQLObjectType } from "graphql";
import type { FeedEvent as ClientFeedEvent } from "../client/types.ts";
import { schema } from "../schema/mod.ts";
import { ENVELOPE_FIELDS, type FeedEnvelope, PURCHASE_FIELDS } from "../services/feed/envelope.ts";
import { gql } from "./helpers/graphql.ts";
import { ingest } from "./helpers/sdk.ts";
import { call, createFeedToken, createProject, startTestServer } from "./helpers/server.ts";

// Compile time (deno check): the client's named fields are exactly the envelope's.
type Named<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] };
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _clientFields: Same<Named<ClientFeedEvent>, keyof FeedEnvelope> = true;

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

Deno.test("GraphQL's FeedEvent and Purchase have one field per envelope field", () => {
  const feedEvent = schema.getType("FeedEvent") as GraphQLObjectType;
  assert.deepEqual(
    Object.keys(feedEvent.getFields()).sort(),
    ENVELOPE_FIELDS.map(camel).sort(),
  );
  const purchase = getNamedType(feedEvent.getFields().purchase!.type) as GraphQLObjectType;
  assert.deepEqual(Object.keys(purchase.getFields()).sort(), PURCHASE_FIELDS.map(camel).sort());
});

Deno.test("time_spent reaches the REST feed, GraphQL and OpenAPI alike", async () => {
  const server = await startTestServer();
  try {
    const spec = await call(server.url, "GET", "/openapi.json");
    const feedEvent = spec.body.components.schemas.FeedEvent;
    assert.deepEqual(Object.keys(feedEvent.properties), [...ENVELOPE_FIELDS]);
    assert.deepEqual(Object.keys(feedEvent.properties.purchase.properties), [...PURCHASE_FIELDS]);
    assert.equal(feedEvent.properties.time_spent.type, "integer");

    const project = await createProject(server.url);
    const token = await createFeedToken(server.url, project.productionId);
    const occurredAt = server.clock.now().toISOString();
    await ingest(server.url, project.key, "production", [
      { type: "session", occurred_at: occurredAt, time_spent: 42 },
      { type: "open", occurred_at: occurredAt },
    ]);
    const auth = { Authorization: `Bearer ${token.value}` };
    const rest = await call(
      server.url,
      "GET",
      `/api/v1/projects/${project.productionId}/event_stream`,
      { headers: auth },
    );
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(rest.body.events.map((e: FeedEnvelope) => e.time_spent), [42, undefined]);

    const graphql = await gql(
      server.url,
      `query($p: ID!) { eventFeed(projectId: $p) { edges { node { type timeSpent } } } }`,
      { variables: { p: String(project.productionId) }, headers: auth },
    );
    assert.equal(graphql.errors, undefined, JSON.stringify(graphql.errors));
    assert.deepEqual(graphql.data.eventFeed.edges.map((e: { node: unknown }) => e.node), [
      { type: "session", timeSpent: 42 },
      { type: "open", timeSpent: null },
    ]);
  } finally {
    await server.close();
  }
});
