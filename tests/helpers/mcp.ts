// The MCP server (POST /mcp) as agents reach it: the official SDK's client over HTTP, and raw
// JSON-RPC posts for what a well-behaved client never sends.
import { Client } from "@modelcontextprotocol/sdk/client";
// The SDK's `./*` export gives a `.js` subpath no types under Deno: @ts-types names them.
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { adminHeaders, call } from "./server.ts";
import type { Json } from "./sdk.ts";

/**
 * A connected SDK client presenting `key` (none: no Authorization header). `urls`: the instances
 * it sends its requests to, in turn (one request to each before the first again).
 */
export async function mcpClient(urls: string | string[], key: string | null): Promise<Client> {
  const bases = typeof urls === "string" ? [urls] : urls;
  let next = 0;
  const transport = new StreamableHTTPClientTransport(new URL(`${bases[0]}/mcp`), {
    requestInit: key === null ? {} : { headers: { Authorization: `Bearer ${key}` } },
    fetch: (url, init) => {
      const base = bases[next++ % bases.length]!;
      return fetch(new URL(new URL(url).pathname, base), init);
    },
  });
  const client = new Client({ name: "link-feed-tests", version: "1" });
  await client.connect(transport);
  return client;
}

/** Calls a tool; the result as the SDK checked it (its structured content against the schema). */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return await client.callTool({ name, arguments: args }) as CallToolResult;
}

/** The structured content of a successful call (fails the test on a tool error). */
export async function callOk(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Json> {
  const result = await callTool(client, name, args);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

/** The text of a tool error (fails the test when the call succeeded). */
export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const result = await callTool(client, name, args);
  if (!result.isError) throw new Error(`${name} succeeded: ${JSON.stringify(result.content)}`);
  const [first] = result.content;
  return first?.type === "text" ? first.text : "";
}

/** The headers a Streamable HTTP client sends with a POST. */
export const MCP_POST_HEADERS = {
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
};

/** Posts a raw body to /mcp; the status, headers and body (JSON when it is JSON). */
export async function postMcp(
  base: string,
  body: BodyInit | null,
  headers: Record<string, string>,
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(`${base}/mcp`, { method: "POST", headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if (res.headers.get("content-type")?.includes("application/json")) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** An initialize request, as a client's first message. */
export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
};

/** Creates an API key of `environment` with `scopes` through the admin API; its id and value. */
export async function createKey(
  base: string,
  environment: number,
  scopes: string[],
  options: { name?: string; expires_at?: string } = {},
): Promise<{ id: number; value: string; name: string }> {
  const name = options.name ?? `agent ${scopes.join(" ") || "without scopes"}`;
  const res = await call(base, "POST", `/api/v1/projects/${environment}/api_keys`, {
    headers: adminHeaders,
    body: { name, scopes, expires_at: options.expires_at ?? null },
  });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.text}`);
  return { id: res.body.api_key.id, value: res.body.api_key.value, name };
}
