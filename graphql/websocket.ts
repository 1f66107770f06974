// Subscriptions over WebSocket (the graphql-transport-ws protocol of `graphql-ws`, which most
// GraphQL clients ship), beside GraphQL over SSE. GET /graphql with `Upgrade: websocket`.
//
// A subscription here is the same operation as over SSE: the one executor (executor.ts) parses
// (the 32 KiB document bound), validates (armor's limits) and subscribes with the same context, so the feed token, the 2-stream limit per token (kept in PostgreSQL, shared with
// SSE), revocation within 5 s and resume by cursor (`after`) are the live tail's own. The
// token comes in the connection_init payload (`{"Authorization": "Bearer est_…"}`: a browser's
// WebSocket cannot send headers), or else from the upgrade request's header. Queries and
// mutations are POST /graphql's: a WebSocket carries subscriptions only.
//
// Anyone may open a socket (credentials come with connection_init, or never), so what one holds
// is bounded (config.ts, graphqlWebSockets): at most maxConnections open on an instance and
// maxPerAddress from one client address (an IPv6 one by its /64), refused with 503 RATE_LIMITED
// before the upgrade; connection_init within initTimeoutMs (else 4408, graphql-ws's own close);
// and a socket without a subscription for idleTimeoutMs is closed (1000, "idle"). A subscription
// holds its socket as long as it runs, under the live tail's own limits.
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, makeServer } from "graphql-ws";
import type { ExecutionArgs } from "graphql";
import { GraphQLError } from "graphql";
import type { GraphQLExecutor } from "./executor.ts";
import type { AppDeps } from "../services/deps.ts";
import { describeError } from "../infra/log.ts";
import { limitKey } from "../services/access/admin_token_limit.ts";
import type { RequestFacts } from "../resolvers/context.ts";

/** A WebSocket message at most: the size of a request body (rest/frame.ts). */
const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Retry-After of a socket refused by a cap: sockets close all the time, so soon. */
const RETRY_AFTER_S = 5;

/** What each connection carries from its upgrade request. */
interface Extra {
  /** The upgrade request's URL and headers, copied: the request is gone once upgraded. */
  url: string;
  headers: Headers;
  facts: RequestFacts;
  /** The Authorization the connection_init payload gave, if any. */
  authorization: string | null;
  /** The operations under way (graphql-ws's own record), once connection_init is accepted. */
  subscriptions: (() => number) | null;
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
  const limits = deps.config.graphqlWebSockets;
  const server = makeServer<Record<string, unknown> | undefined, Extra>({
    connectionInitWaitTimeout: limits.initTimeoutMs,
    onConnect(ctx) {
      const authorization = payloadAuthorization(ctx.connectionParams);
      // A payload that is not an object of strings is refused: 4403 closes the socket.
      if (authorization === undefined) return false;
      ctx.extra.authorization = authorization;
      ctx.extra.subscriptions = () => Object.keys(ctx.subscriptions).length;
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

  // Sockets open on this instance, in all and by client address (limitKey: IPv6 by /64).
  let open = 0;
  const openByAddress = new Map<string, number>();
  const refuse = (message: string) =>
    Response.json({
      errors: [{ message, extensions: { code: "RATE_LIMITED", retryAfter: RETRY_AFTER_S } }],
    }, { status: 503, headers: { "Retry-After": String(RETRY_AFTER_S) } });

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
    const address = limitKey(facts.clientAddress);
    const fromAddress = openByAddress.get(address) ?? 0;
    if (open >= limits.maxConnections) {
      deps.logger.warn("graphql websocket refused", {
        request_id: facts.requestId,
        limit: "instance",
      });
      return refuse("too many WebSockets are open on this server; try again later");
    }
    if (fromAddress >= limits.maxPerAddress) {
      deps.logger.warn("graphql websocket refused", {
        request_id: facts.requestId,
        limit: "address",
      });
      return refuse("too many WebSockets are open from this address; close one first");
    }
    const extra: Extra = {
      url: request.url,
      headers: new Headers(request.headers),
      facts,
      authorization: null,
      subscriptions: null,
    };
    const { socket, response } = Deno.upgradeWebSocket(request, {
      protocol: GRAPHQL_TRANSPORT_WS_PROTOCOL,
    });
    // Counted from the upgrade until the socket closes (once, whichever event says so).
    open++;
    openByAddress.set(address, fromAddress + 1);
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      open--;
      const left = (openByAddress.get(address) ?? 1) - 1;
      if (left > 0) openByAddress.set(address, left);
      else openByAddress.delete(address);
      clearTimeout(idleTimer);
    };
    // Closes the socket once it has had no subscription for idleTimeoutMs: started when
    // connection_init is accepted and whenever its last operation ends, stopped by a new one.
    // Other messages (pings) do not restart it.
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const watchIdle = () => {
      const running = extra.subscriptions?.();
      if (running === undefined) return; // not initialised: the init timeout applies
      if (running > 0) {
        clearTimeout(idleTimer);
        idleTimer = undefined;
      } else if (idleTimer === undefined && socket.readyState === WebSocket.OPEN) {
        idleTimer = setTimeout(() => {
          idleTimer = undefined;
          if (extra.subscriptions?.() === 0 && socket.readyState === WebSocket.OPEN) {
            socket.close(1000, "idle: no subscription");
          }
        }, limits.idleTimeoutMs);
      }
    };
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
            // The message's effect on the subscriptions is already made when handle returns.
            handle(data).catch(fail).finally(watchIdle);
            watchIdle();
          };
        },
      }, extra);
    };
    // Ends the connection's subscriptions: their streams close and free their slots.
    socket.onclose = (event) => {
      release();
      void closed(event.code, event.reason).catch(fail);
    };
    socket.onerror = () => {};
    return response;
  };
}
