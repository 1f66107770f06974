import { assertError } from "./helpers/server.ts";
import assert from "node:assert/strict";
import {
  adminHeaders,
  call,
  createProject,
  LINK_BASE_URL,
  startTestServer,
} from "./helpers/server.ts";
import { deactivateLink, generateLink, generateLinkCall, sdkHeaders } from "./helpers/sdk.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

const project = await createProject(srv.url);

function lookup(path: string, environment = "production", key = project.key) {
  return call(srv.url, "GET", `/api/v1/sdk/link/${path}`, {
    headers: sdkHeaders(key, environment),
  });
}

const FULL = {
  title: "Summer sale",
  subtitle: "Up to 50% off",
  image: "https://cdn.example.com/sale.png",
  data: JSON.stringify({ product_id: 42, nested: { a: [1, "two"] } }),
  tags: JSON.stringify(["sale", "summer"]),
  ios_custom_redirect: { url: "https://apps.apple.com/app/id1", open_app_if_installed: true },
  android_custom_redirect: {
    url: "https://play.google.com/store/apps?id=x",
    open_app_if_installed: false,
  },
  desktop_custom_redirect: { url: "https://example.com/sale" },
  show_preview_ios: true,
  show_preview_android: false,
  tracking_campaign: "summer",
  tracking_source: "newsletter",
  tracking_medium: "email",
};

Deno.test("POST /api/v1/sdk/generate_link answers 200 with the URL, and GET link/:path returns every field", async () => {
  const res = await generateLinkCall(srv.url, project.key, "production", FULL);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(Object.keys(res.body), ["link"]);
  const match = /^https:\/\/lnk\.example\.test\/([A-Za-z0-9]{10})$/.exec(res.body.link);
  assert.ok(match, res.body.link);
  const path = match[1]!;

  const got = await lookup(path);
  assert.equal(got.status, 200);
  assert.deepEqual(Object.keys(got.body), ["link"]);
  const link = got.body.link;
  assert.equal(typeof link.id, "number");
  assert.ok(!Number.isNaN(Date.parse(link.updated_at)));
  assert.deepEqual(link, {
    id: link.id,
    title: "Summer sale",
    subtitle: "Up to 50% off",
    path,
    access_path: `${LINK_BASE_URL}/${path}`,
    updated_at: link.updated_at,
    generated_from_platform: "API",
    data: { product_id: 42, nested: { a: [1, "two"] } },
    sdk_generated: true,
    tags: ["sale", "summer"],
    active: true,
    tracking_campaign: "summer",
    tracking_source: "newsletter",
    tracking_medium: "email",
    show_preview: true,
    image: "https://cdn.example.com/sale.png",
    ios_custom_redirect: { url: "https://apps.apple.com/app/id1", open_app_if_installed: true },
    android_custom_redirect: {
      url: "https://play.google.com/store/apps?id=x",
      open_app_if_installed: false,
    },
    desktop_custom_redirect: { url: "https://example.com/sale" },
  });
  const [row] = await srv.sql`
    select environment_id, show_preview_ios, show_preview_android from links where path = ${path}
  `;
  assert.deepEqual({ ...row }, {
    environment_id: project.productionId,
    show_preview_ios: true,
    show_preview_android: false,
  });
});

Deno.test("POST /api/v1/sdk/generate_link with an empty or absent body makes a link with defaults", async () => {
  for (const options of [{ body: {} }, {}, { raw: "" }]) {
    const res = await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
      headers: sdkHeaders(project.key, "production"),
      ...options,
    });
    assert.equal(res.status, 200, res.text);
    const path = new URL(res.body.link).pathname.slice(1);
    const { link } = (await lookup(path)).body;
    assert.deepEqual({ ...link, id: 0, updated_at: "" }, {
      id: 0,
      title: "",
      subtitle: "",
      path,
      access_path: `${LINK_BASE_URL}/${path}`,
      updated_at: "",
      generated_from_platform: "API",
      data: {},
      sdk_generated: true,
      tags: [],
      active: true,
      tracking_campaign: null,
      tracking_source: null,
      tracking_medium: null,
      show_preview: false,
      image: null,
      ios_custom_redirect: {},
      android_custom_redirect: {},
      desktop_custom_redirect: {},
    });
  }
});

Deno.test("POST /api/v1/sdk/generate_link: show_preview is show_preview_ios || show_preview_android", async () => {
  const cases: [boolean | undefined, boolean | undefined, boolean][] = [
    [true, false, true],
    [false, true, true],
    [true, true, true],
    [false, false, false],
    [undefined, undefined, false],
  ];
  for (const [ios, android, expected] of cases) {
    const path = await generateLink(srv.url, project.key, "production", {
      show_preview_ios: ios,
      show_preview_android: android,
    });
    assert.equal((await lookup(path)).body.link.show_preview, expected, `${ios} ${android}`);
  }
});

Deno.test("POST /api/v1/sdk/generate_link ignores unknown fields and reads null as omitted", async () => {
  const path = await generateLink(srv.url, project.key, "production", {
    title: "T",
    unknown_field: { deep: true },
    show_preview: true,
    tracking_campaign: null,
    data: null,
  });
  const { link } = (await lookup(path)).body;
  assert.equal(link.title, "T");
  assert.equal(link.show_preview, false);
  assert.equal(link.tracking_campaign, null);
  assert.deepEqual(link.data, {});
  assert.equal(link.unknown_field, undefined);
});

Deno.test("POST /api/v1/sdk/generate_link: data and tags must be strings holding JSON of the right shape", async () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ data: { a: 1 } }, /^data: /],
    [{ data: [1] }, /^data: /],
    [{ data: "{nope" }, /^data: must be a string holding a JSON object/],
    [{ data: "[1, 2]" }, /^data: must be a JSON object/],
    [{ data: "null" }, /^data: /],
    [{ data: '"text"' }, /^data: /],
    [{ data: "42" }, /^data: /],
    [{ tags: ["a", "b"] }, /^tags: /],
    [{ tags: { a: 1 } }, /^tags: /],
    [{ tags: "not json" }, /^tags: must be a string holding a JSON array/],
    [{ tags: '{"a": 1}' }, /^tags: /],
    [{ tags: '["a", 1]' }, /^tags\[1\]: /],
    [{ tags: 7 }, /^tags: /],
  ];
  const before = await srv.sql`select count(*)::int as n from links`;
  for (const [body, message] of bad) {
    const res = await generateLinkCall(srv.url, project.key, "production", body);
    assertError(res, 400, "invalid_field", message);
  }
  const after = await srv.sql`select count(*)::int as n from links`;
  assert.equal(after[0]!.n, before[0]!.n);
});

Deno.test("POST /api/v1/sdk/generate_link refuses non-http(s) URLs and wrong redirect shapes", async () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ ios_custom_redirect: { url: "javascript:alert(1)" } }, /^ios_custom_redirect\.url: /],
    [
      { android_custom_redirect: { url: "data:text/html,<script>x</script>" } },
      /^android_custom_redirect\.url: /,
    ],
    [
      { desktop_custom_redirect: { url: "ftp://example.com/x" } },
      /^desktop_custom_redirect\.url: /,
    ],
    [
      { desktop_custom_redirect: { url: "JavaScript://example.com/%0aalert(1)" } },
      /desktop_custom_redirect\.url/,
    ],
    [{ ios_custom_redirect: { url: "/relative" } }, /ios_custom_redirect\.url/],
    [{ ios_custom_redirect: { url: 5 } }, /ios_custom_redirect\.url/],
    [{ ios_custom_redirect: "https://example.com" }, /^ios_custom_redirect: /],
    [
      { ios_custom_redirect: { open_app_if_installed: "yes" } },
      /ios_custom_redirect\.open_app_if_installed/,
    ],
    [{ image: "javascript:alert(1)" }, /^image: /],
    [{ image: "https://" + "a".repeat(2048) + ".com" }, /^image: /],
    [{ show_preview_ios: "true" }, /^show_preview_ios: /],
    [{ show_preview_android: 1 }, /^show_preview_android: /],
  ];
  for (const [body, message] of bad) {
    assertError(
      await generateLinkCall(srv.url, project.key, "production", body),
      400,
      "invalid_field",
      message,
    );
  }
});

Deno.test("POST /api/v1/sdk/generate_link: lengths, control characters and hostile bodies are 400, never 500", async () => {
  const deep = "[".repeat(5000) + "]".repeat(5000);
  const bad: [unknown, RegExp][] = [
    [{ title: "x".repeat(1001) }, /^title: /],
    [{ subtitle: "x".repeat(1001) }, /^subtitle: /],
    [{ tracking_campaign: "x".repeat(256) }, /^tracking_campaign: /],
    [{ title: "a\u0000b" }, /^title: /],
    [{ title: "\ud800" }, /^title: /],
    [{ data: JSON.stringify({ s: "x".repeat(70_000) }) }, /^data: /],
    [{ data: JSON.stringify({ a: deep }).replace(`"${deep}"`, deep) }, /^data: /],
    [{ data: JSON.stringify({ a: "\u0000" }) }, /^data: /],
    [{ tags: JSON.stringify(Array.from({ length: 101 }, (_, i) => `t${i}`)) }, /^tags: /],
    [{ title: 1e308 }, /^title: /],
    [{ show_preview_ios: 1e300 }, /^show_preview_ios: /],
    [null, /^body: /],
    [[], /^body: /],
    ["string", /^body: /],
    [123, /^body: /],
  ];
  for (const [body, message] of bad) {
    const res = await generateLinkCall(srv.url, project.key, "production", body);
    assertError(res, 400, "invalid_field", message);
  }
  for (const raw of ['{"show_preview_ios": 1e400}', '{"title": -1e400}', '{"data": 1e400}']) {
    const res = await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
      headers: sdkHeaders(project.key, "production"),
      raw,
    });
    assertError(res, 400, "invalid_field");
  }
  const edge = await generateLinkCall(srv.url, project.key, "production", {
    title: "x".repeat(1000),
    data: JSON.stringify({ s: "x".repeat(60_000) }),
  });
  assert.equal(edge.status, 200);
  for (const raw of ["{nope", '{"title": "x"', "\u0000", "[".repeat(100_000)]) {
    const res = await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
      headers: { ...sdkHeaders(project.key, "production"), "Content-Type": "application/json" },
      raw,
    });
    assertError(res, 400, "malformed_json");
  }
});

Deno.test("SDK endpoints answer 401 for a missing or unknown PROJECT-KEY, before looking at ENVIRONMENT", async () => {
  const endpoints: [string, string][] = [
    ["POST", "/api/v1/sdk/generate_link"],
    ["GET", "/api/v1/sdk/link/abcdefghij"],
    ["GET", "/api/v1/sdk/metrics_for_project"],
    ["POST", "/api/v1/sdk/events"],
  ];
  for (const [method, path] of endpoints) {
    const body = method === "POST" ? {} : undefined;
    for (const environment of ["production", "bogus", undefined]) {
      const env: Record<string, string> = environment ? { ENVIRONMENT: environment } : {};
      assertError(await call(srv.url, method, path, { body, headers: env }), 401, "unauthorized");
      assertError(
        await call(srv.url, method, path, {
          body,
          headers: { ...env, "PROJECT-KEY": "pk_unknown_key" },
        }),
        401,
        "unauthorized",
      );
      assertError(
        await call(srv.url, method, path, { body, headers: { ...env, "PROJECT-KEY": "" } }),
        401,
        "unauthorized",
      );
    }
  }
});

Deno.test("SDK endpoints map ENVIRONMENT per endpoint; any other value is 400 invalid_environment", async () => {
  const linkEndpoints: [string, string][] = [
    ["POST", "/api/v1/sdk/generate_link"],
    ["GET", "/api/v1/sdk/link/abcdefghij"],
    ["POST", "/api/v1/sdk/events"],
  ];
  for (const [method, path] of linkEndpoints) {
    const body = method === "POST" ? { title: "x" } : undefined;
    for (
      const environment of [
        "test",
        "Production",
        "prod",
        "",
        "constructor",
        "__proto__",
      ]
    ) {
      assertError(
        await call(srv.url, method, path, {
          body,
          headers: sdkHeaders(project.key, environment),
        }),
        400,
        "invalid_environment",
        /"production" or "development"/,
      );
    }
    assertError(
      await call(srv.url, method, path, { body, headers: { "PROJECT-KEY": project.key } }),
      400,
      "invalid_environment",
    );
  }
  for (const environment of ["development", "Test", "staging", "", "toString"]) {
    assertError(
      await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
        headers: sdkHeaders(project.key, environment),
      }),
      400,
      "invalid_environment",
      /"production" or "test"/,
    );
  }
  assertError(
    await call(srv.url, "GET", "/api/v1/sdk/metrics_for_project", {
      headers: { "PROJECT-KEY": project.key },
    }),
    400,
    "invalid_environment",
  );
  // A bad environment is checked before the body.
  assertError(
    await call(srv.url, "POST", "/api/v1/sdk/generate_link", {
      headers: sdkHeaders(project.key, "test"),
      raw: "{nope",
    }),
    400,
    "invalid_environment",
  );
});

Deno.test("GET /api/v1/sdk/link/:link_path sees only links of the ENVIRONMENT's environment and project", async () => {
  const prod = await generateLink(srv.url, project.key, "production", { title: "prod" });
  const dev = await generateLink(srv.url, project.key, "development", { title: "dev" });
  const [row] = await srv.sql`select environment_id from links where path = ${dev}`;
  assert.equal(row!.environment_id, project.testId);

  assert.equal((await lookup(prod, "production")).body.link.title, "prod");
  assert.equal((await lookup(dev, "development")).body.link.title, "dev");
  assertError(await lookup(prod, "development"), 404, "not_found");
  assertError(await lookup(dev, "production"), 404, "not_found");

  const other = await createProject(srv.url, { name: "Other" });
  assertError(await lookup(prod, "production", other.key), 404, "not_found");
  for (const path of ["doesnotexist", "%00", "a%2Fb", "x".repeat(300), "%E0%A4%A", "..", "%20"]) {
    assertError(await lookup(path), 404, "not_found");
  }
});

Deno.test("GET /api/v1/sdk/link/:link_path returns a deactivated link with active false", async () => {
  const path = await generateLink(srv.url, project.key, "production", { title: "off" });
  await deactivateLink(srv.url, project.productionId, path);
  const got = await lookup(path);
  assert.equal(got.status, 200);
  assert.equal(got.body.link.active, false);
  assert.equal(got.body.link.title, "off");
});

Deno.test("PATCH /api/v1/projects/:project_id/links/:link_path with an impossible path is 404, not 500", async () => {
  const res = await call(srv.url, "PATCH", `/api/v1/projects/${project.productionId}/links/%00`, {
    headers: adminHeaders,
    body: { active: false },
  });
  assertError(res, 404, "not_found");
});
