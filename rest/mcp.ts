// POST /mcp: the service as a Model Context Protocol server (docs/agents.md), on the official
// SDK's Streamable HTTP transport, for AI assistants holding an API key (`sk_…`).
//
// Stateless: every request authenticates its key, builds a server with the tools that key may
// call, answers in JSON and is forgotten. No session lives in an instance's memory, so any
// instance answers any request, a revoked key is refused on its next request everywhere (nothing
// caches keys), and there is nothing for a client to fill up. A request without a valid key is
// refused before any of this is built and before its body is parsed; a body over 1 MiB is refused
// before that (rest/frame.ts: by its Content-Length, or counted as it comes without one).
import { Hono } from "hono";
import { Server } from "@modelcontextprotocol/sdk/server";
// The SDK's `./*` export gives a `.js` subpath no types under Deno (it would look for
// `x.js.d.ts`): @ts-types names them.
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { authenticateApiKey } from "../services/access/api_keys.ts";
import { authorize } from "../services/access/authorize.ts";
import { auditContext } from "../services/access/audit.ts";
import type { AppDeps } from "../services/deps.ts";
import { ApiError } from "../services/errors.ts";
import { bearerToken } from "../inputs/headers.ts";
import type { AppEnv } from "./deps.ts";
import { toErrorResponse } from "./errors.ts";
import { MAX_BODY_BYTES } from "./frame.ts";
import { type ApiKey, MCP_TOOLS, type ToolContext, toolError, toolsFor } from "./mcp_tools.ts";

export const MCP_PATH = "/mcp";

const SERVER_INFO = { name: "link-feed", title: "Links and analytics", version: "1" };

/**
 * The SDK's JSON Schema validator, one per process: a server otherwise builds its own Ajv, half a
 * millisecond of every request. The server validates only what it asks of clients (elicitation),
 * which these tools never do, so its cache of compiled schemas stays empty.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

const INSTRUCTIONS = "Manage one environment's deep links and read its analytics. The API key " +
  "decides the environment and which tools are listed. Links are named by their path (what " +
  "follows the domain in the short URL). Errors carry the REST API's error code.";

/**
 * The key an `Authorization: Bearer sk_…` header presents: 401 when there is none, or it is not
 * a key of ours, or it is revoked or expired. The admin token is not taken here: an agent acts
 * within one environment and the scopes its key was given.
 */
async function agentKey(deps: AppDeps, header: string | undefined): Promise<ApiKey> {
  const presented = bearerToken(header);
  const key = presented === null ? null : await authenticateApiKey(deps.sql, deps.clock, presented);
  if (key === null) {
    throw new ApiError(
      "unauthorized",
      "an API key is required: Authorization: Bearer sk_… (the admin token is not taken here)",
    );
  }
  return key;
}

/**
 * The MCP server of one request: the tools `ctx.key` may call, each checked again when called.
 * The calls of one request (a batch) run one after another, as REST requests use one connection
 * of the pool each.
 */
function agentServer(ctx: ToolContext, requestId: string): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: VALIDATOR,
  });
  const listed = toolsFor(ctx.key).map((t) => t.listing);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  let previous: Promise<unknown> = Promise.resolve();
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = MCP_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) {
      throw new McpError(ErrorCode.InvalidParams, `no tool is named ${request.params.name}`);
    }
    const call = previous.then(async () => {
      try {
        // A tool the key's scopes do not list is refused as REST refuses its route.
        await authorize(ctx.deps.sql, ctx.key, tool.operation, {
          environmentId: ctx.key.environmentId,
        });
        return await tool.call(ctx, request.params.arguments);
      } catch (err) {
        return toolError(err, ctx.deps.logger, requestId);
      }
    });
    previous = call;
    return call;
  });
  return server;
}

/**
 * Requests one POST may carry (a JSON-RPC batch; the protocol's versions since 2025-06-18 send
 * none). The SDK takes 100, and in JSON mode holds every answer until the last: 100 pages of 100
 * links with large data would be hundreds of megabytes for one request. Those beyond get an error.
 */
export const MAX_BATCH_REQUESTS = 10;

function capRequests(transport: WebStandardStreamableHTTPServerTransport): void {
  const deliver = transport.onmessage!;
  let requests = 0;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message) && ++requests > MAX_BATCH_REQUESTS) {
      transport.send({
        jsonrpc: "2.0",
        id: message.id,
        error: {
          code: ErrorCode.InvalidRequest,
          message: `at most ${MAX_BATCH_REQUESTS} requests in one POST`,
        },
      }).catch(() => {});
      return;
    }
    deliver(message, extra);
  };
}

/** The JSON-RPC error body the transport answers HTTP-level refusals with. */
function rpcError(status: number, message: string, headers: Record<string, string> = {}) {
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, {
    status,
    headers,
  });
}

export function mcpRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // POST /mcp – JSON-RPC messages of the Model Context Protocol (an API key's tools);
  // GET and DELETE /mcp – 405: no server-sent stream and no session to end (stateless)
  app.on(["POST", "GET", "DELETE"], MCP_PATH, async (c) => {
    const requestId = c.env.requestId;
    let key: ApiKey;
    try {
      key = await agentKey(deps, c.req.header("Authorization"));
    } catch (err) {
      const res = toErrorResponse(err, deps.logger, requestId);
      if (res.status === 401) res.headers.set("WWW-Authenticate", 'Bearer realm="mcp"');
      return res;
    }
    if (c.req.method !== "POST") {
      return rpcError(
        405,
        "this server keeps no sessions and opens no event stream: send messages with POST",
        { Allow: "POST" },
      );
    }
    const server = agentServer({
      deps,
      key,
      audit: auditContext(key, requestId, deps.clock.now()),
    }, requestId);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_BODY_BYTES,
    });
    await server.connect(transport);
    capRequests(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });

  return app;
}
