// Subscriptions over WebSocket (the graphql-transport-ws protocol of `graphql-ws`, which most
// GraphQL clients ship), beside GraphQL over SSE. GET /graphql with `Upgrade: websocket`.
//
// A subscription here is the same operation as over SSE: the one executor (executor.ts) parses
// (the 32 KiB document bound), validates (armor's limits) and subscribes with the same context, so the feed token, the 2-stream limit per token (kept in PostgreSQL, shared with
// SSE), revocation within 5 s and resume by cursor (`after`) are the live tail's own. The
// token comes in the connection_init payload (`{"Authorization": "Bearer est_…"}`: a browser's
// WebSocket cannot send headers), or else from the upgrade request's header. Queries and
// mutations are POST /graphql's: a WebSocket carries subscriptions only.
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, makeServer } from "graphql-ws";
import type { ExecutionArgs } from "graphql";
import { GraphQLError } from "graphql";
import type { GraphQLExecutor } from "./executor.ts";
import type { AppDeps } from "../services/deps.ts";
import { describeError } from "../infra/log.ts";
import type { RequestFacts } from "../resolvers/context.ts";

/** A WebSocket message at most: the size of a request body (rest/frame.ts). */
const MAX_MESSAGE_BYTES = 1024 * 1024;

/** What each connection carries from its upgrade request. */
interface Extra {
  /** The upgrade request's URL and headers, copied: the request is gone once upgraded. */
  url: string;
  headers: Headers;
  facts: RequestFacts;
  /** The Authorization the connection_init payload gave, if any. */
  authorization: string | null;
}

/** The enveloped execute and subscribe, handed to graphql-ws through the root value. */
interface Enveloped {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

const badRequest = (message: string) =>
  new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT" } });

/** `Authorization` of a connection_init payload, in any case; undefined when malformed. */
function payloadAuthorization(payload: unknown): string | null | undefined {
  if (payload == null) return null;
  if (typeof payload !== "object" || Array.isArray(payload)) return undefined;
  const entries = Object.entries(payload).filter(([k]) => k.toLowerCase() === "authorization");
  if (entries.length === 0) return null;
  const value = entries[0]![1];
  return entries.length === 1 && typeof value === "string" ? value : undefined;
}

export type WebSocketHandler = (request: Request, facts: RequestFacts) => Response;

export function createWebSocketHandler(
  deps: AppDeps,
  /** The executor every GraphQL operation goes through (executor.ts). */
  executor: GraphQLExecutor,
  /** The document a subscribe message runs (persisted.ts: trusted documents). */
  documentOf: (payload: { query: string; extensions?: unknown }) => string | GraphQLError,
): WebSocketHandler {
  const server = makeServer<Record<string, unknown> | undefined, Extra>({
    onConnect(ctx) {
      const authorization = payloadAuthorization(ctx.connectionParams);
      // A payload that is not an object of strings is refused: 4403 closes the socket.
      if (authorization === undefined) return false;
      ctx.extra.authorization = authorization;
      return true;
    },
    onSubscribe(ctx, _id, payload) {
      const { url, facts, authorization } = ctx.extra;
      const headers = new Headers(ctx.extra.headers);
      if (authorization !== null) headers.set("Authorization", authorization);
      // A dashboard session authenticates HTTP requests only: a WebSocket, which browsers open
      // across sites with the cookies they hold, never runs as the session.
      headers.delete("Cookie");
      const query = documentOf(payload);
      if (query instanceof GraphQLError) return [query];
      let prepared;
      try {
        prepared = executor.prepare(new Request(url, { headers }), {
          query,
          operationName: payload.operationName ?? undefined,
          variables: payload.variables ?? undefined,
          extensions: payload.extensions ?? undefined,
        }, facts);
      } catch (err) {
        return [err instanceof GraphQLError ? err : badRequest("the document does not parse")];
      }
      if (!("args" in prepared)) return prepared;
      if (prepared.operation?.operation !== "subscription") {
        return [
          badRequest(
            "a WebSocket carries subscriptions; send queries and mutations to POST /graphql",
          ),
        ];
      }
      const { execute, subscribe } = prepared.enveloped;
      return { ...prepared.args, rootValue: { execute, subscribe } satisfies Enveloped };
    },
    execute: (args) => (args.rootValue as Enveloped).execute(args) as never,
    subscribe: (args) => (args.rootValue as Enveloped).subscribe(args) as never,
  });

  return (request, facts) => {
    const offered = (request.headers.get("Sec-WebSocket-Protocol") ?? "").split(",")
      .map((p) => p.trim());
    if (!offered.includes(GRAPHQL_TRANSPORT_WS_PROTOCOL)) {
      return Response.json({
        errors: [{
          message: `WebSocket subprotocol ${GRAPHQL_TRANSPORT_WS_PROTOCOL} required`,
          extensions: { code: "BAD_USER_INPUT" },
        }],
      }, { status: 400 });
    }
    const extra: Extra = {
      url: request.url,
      headers: new Headers(request.headers),
      facts,
      authorization: null,
    };
    const { socket, response } = Deno.upgradeWebSocket(request, {
      protocol: GRAPHQL_TRANSPORT_WS_PROTOCOL,
    });
    let closed: (code?: number, reason?: string) => Promise<void> = () => Promise.resolve();
    const fail = (err: unknown) => {
      deps.logger.error("graphql websocket failed", {
        request_id: facts.requestId,
        ...describeError(err),
      });
      if (socket.readyState === WebSocket.OPEN) {
        socket.close(CloseCode.InternalServerError, "internal error");
      }
    };
    socket.onopen = () => {
      closed = server.opened({
        // The one offered and answered (Deno's server-side socket leaves `protocol` empty).
        protocol: GRAPHQL_TRANSPORT_WS_PROTOCOL,
        send: (message) => {
          if (socket.readyState === WebSocket.OPEN) socket.send(message);
        },
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) => {
          socket.onmessage = (event) => {
            const data = String(event.data);
            if (data.length > MAX_MESSAGE_BYTES) {
              socket.close(1009, "message too large");
              return;
            }
            // Resolves when the operation the message started has ended: not awaited here.
            handle(data).catch(fail);
          };
        },
      }, extra);
    };
    // Ends the connection's subscriptions: their streams close and free their slots.
    socket.onclose = (event) => void closed(event.code, event.reason).catch(fail);
    socket.onerror = () => {};
    return response;
  };
}
