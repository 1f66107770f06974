// SDK API helpers: headers, link generation, event batches and metrics over HTTP.
import assert from "node:assert/strict";
import { adminHeaders, call, type TestResponse } from "./server.ts";

/** A parsed JSON body, read field by field in assertions. */
// deno-lint-ignore no-explicit-any
export type Json = any;

export type SdkEnvironment = "production" | "development" | "test";

export function sdkHeaders(key: string, environment: SdkEnvironment | string) {
  return { "PROJECT-KEY": key, ENVIRONMENT: environment };
}

export function generateLinkCall(
  base: string,
  key: string,
  environment: string,
  body: unknown = {},
): Promise<TestResponse<Json>> {
  return call(base, "POST", "/api/v1/sdk/generate_link", {
    headers: sdkHeaders(key, environment),
    body,
  });
}

/** Generates a link and returns its path. */
export async function generateLink(
  base: string,
  key: string,
  environment: "production" | "development",
  body: Record<string, unknown> = {},
): Promise<string> {
  const res = await generateLinkCall(base, key, environment, body);
  if (res.status !== 200) throw new Error(`generate_link failed: ${res.text}`);
  return new URL(res.body.link).pathname.slice(1);
}

export function sendEvents(
  base: string,
  key: string,
  environment: string,
  events: unknown,
): Promise<TestResponse<Json>> {
  return call(base, "POST", "/api/v1/sdk/events", {
    headers: sdkHeaders(key, environment),
    body: { events },
  });
}

/** Sends a batch that must be accepted; returns the 202 body. */
export async function ingest(
  base: string,
  key: string,
  environment: "production" | "development",
  events: unknown[],
): Promise<{ accepted: number; duplicates: number }> {
  const res = await sendEvents(base, key, environment, events);
  assert.equal(res.status, 202, res.text);
  return res.body;
}

export type MetricsItem = Record<string, Json>;

export async function metrics(
  base: string,
  key: string,
  environment: "production" | "test" = "production",
): Promise<MetricsItem[]> {
  const res = await call(base, "GET", "/api/v1/sdk/metrics_for_project", {
    headers: sdkHeaders(key, environment),
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** The metrics item of one link (it must be listed). */
export async function linkMetrics(
  base: string,
  key: string,
  path: string,
  environment: "production" | "test" = "production",
): Promise<MetricsItem> {
  const item = (await metrics(base, key, environment)).find((m) => m.path === path);
  assert.ok(item, `link ${path} is not in the metrics`);
  return item;
}

/** Deactivates a link through the admin API (PATCH …/links/:path) and checks it took. */
export async function deactivateLink(base: string, projectId: number, path: string) {
  const res = await call(base, "PATCH", `/api/v1/projects/${projectId}/links/${path}`, {
    headers: adminHeaders,
    body: { active: false },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.link.active, false);
}
