// Validation messages say what a field needs, in words, after the field's path: never the
// validation library's own wording ("Invalid input: expected number, received undefined").
// Each refused request changes nothing.
import assert from "node:assert/strict";
import { assertError, call, createProject, startTestServer } from "./helpers/server.ts";
import { generateLinkCall, sdkHeaders, sendEvents } from "./helpers/sdk.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);
const now = new Date().toISOString();
const purchase = {
  transaction_id: "t1",
  version: 1,
  amount: 499,
  currency: "EUR",
  product_id: "p",
  store: "app_store",
};

const cases: [string, unknown, RegExp][] = [
  [
    "a missing field",
    { occurred_at: now, name: "no type" },
    /^events\[0\]\.type: is required$/,
  ],
  [
    "a missing nested number",
    {
      type: "purchase",
      name: "pro",
      occurred_at: now,
      purchase: { ...purchase, version: undefined },
    },
    /^events\[0\]\.purchase\.version: is required$/,
  ],
  [
    "a string for a number",
    { type: "purchase", name: "pro", occurred_at: now, purchase: { ...purchase, amount: "4.99" } },
    /^events\[0\]\.purchase\.amount: must be a number, not a string$/,
  ],
  [
    "a fraction for a whole number",
    { type: "session", occurred_at: now, time_spent: 1.5 },
    /^events\[0\]\.time_spent: must be a whole number$/,
  ],
  [
    "a negative duration",
    { type: "session", occurred_at: now, time_spent: -1 },
    /^events\[0\]\.time_spent: must be at least 0$/,
  ],
  [
    "an empty name",
    { type: "custom", occurred_at: now, name: "" },
    /^events\[0\]\.name: must not be empty$/,
  ],
  [
    "an object for a string",
    { type: "custom", occurred_at: now, name: {} },
    /^events\[0\]\.name: must be a string, not a JSON object$/,
  ],
];

for (const [what, event, message] of cases) {
  Deno.test(`POST /sdk/events: ${what} is named in words`, async () => {
    const res = await sendEvents(srv.url, project.key, "production", [event]);
    assertError(res, 400, "invalid_field", message);
    assert.doesNotMatch(res.body.error.message, /Invalid input|expected|received/);
  });
}

Deno.test("POST /sdk/events: events that are not an array, or none", async () => {
  const res = await call(srv.url, "POST", "/api/v1/sdk/events", {
    headers: sdkHeaders(project.key, "production"),
    body: { events: "install" },
  });
  assertError(res, 400, "invalid_field", /^events: must be an array, not a string$/);
  const none = await call(srv.url, "POST", "/api/v1/sdk/events", {
    headers: sdkHeaders(project.key, "production"),
    body: {},
  });
  assertError(none, 400, "invalid_field", /^events: is required$/);
  const [row] = await srv.sql`select count(*)::int as count from analytics_events`;
  assert.equal(row?.count, 0);
});

Deno.test("POST /sdk/generate_link: a wrong type is named in words", async () => {
  const res = await generateLinkCall(srv.url, project.key, "production", {
    ios_custom_redirect: { url: "https://example.com", open_app_if_installed: "yes" },
  });
  assertError(
    res,
    400,
    "invalid_field",
    /^ios_custom_redirect\.open_app_if_installed: must be true or false, not a string$/,
  );
  const [row] = await srv.sql`select count(*)::int as count from links`;
  assert.equal(row?.count, 0);
});
