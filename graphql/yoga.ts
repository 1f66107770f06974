// /graphql: Yoga over the Pothos schema, with armour against abusive documents.
import { useErrorHandler } from "@envelop/core";
import { useGraphQlJit } from "@envelop/graphql-jit";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { type DocumentNode, Kind, NoSchemaIntrospectionCustomRule } from "graphql";
import { createYoga, type FetchAPI, type GraphiQLOptions, type Plugin } from "graphql-yoga";
import { schema } from "../schema/mod.ts";
import {
  GRAPHIQL_CSP,
  GRAPHIQL_DEFAULT_HEADERS,
  GRAPHIQL_DEFAULT_QUERY,
  type GraphiQLPageOptions,
  graphiqlVariables,
  renderGraphiQL,
} from "../pages/graphiql.ts";
import type { AppDeps } from "../services/deps.ts";
import { describeError } from "../infra/log.ts";
import { resumeSession, SESSION_COOKIE } from "../services/access/sessions.ts";
import { cookieValue } from "../inputs/headers.ts";
import { CSRF_HEADER } from "../resolvers/authorize.ts";
import { createContext, type GraphQLContext, type RequestFacts } from "../resolvers/context.ts";
import { classifyResolverError, maskError } from "./errors.ts";
import { documentCache, parseErrorCache, useDocumentLimit } from "./document_limit.ts";
import { useListCost } from "./list_cost.ts";
import { createExecutor } from "./executor.ts";
import { useHiddenSuggestions } from "./suggestions.ts";
import { createWebSocketHandler } from "./websocket.ts";
import { persistedDocuments } from "./persisted.ts";

/** Serves /graphql: the HTTP layer hands over the request and its request id. */
export type GraphQLHandler = (
  request: Request,
  facts: RequestFacts,
) => Response | Promise<Response>;

/** Armor's cost limit, at validation and again with the page sizes a request runs with. */
const COST = { maxCost: 300_000 };

const operationCounts = new WeakMap<DocumentNode, boolean>();

/** Whether a document defines exactly one operation (remembered per parsed document). */
function singleOperation(document: DocumentNode): boolean {
  let single = operationCounts.get(document);
  if (single === undefined) {
    single = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length === 1;
    operationCounts.set(document, single);
  }
  return single;
}

function queriesOnly(plugin: Plugin): Plugin {
  const { onSubscribe: _subscribe, ...rest } = plugin;
  return rest;
}

/**
 * GraphiQL's options for one page load. Opened in a browser signed in to the dashboard, it runs
 * as that session: no Authorization placeholder (which would take precedence over the cookie),
 * and the session's synchronizer token sent with every request, so mutations work too. Else it
 * opens with a placeholder token, which is no token: nothing counts against the limit.
 */
async function graphiqlOptions(deps: AppDeps, request: Request): Promise<GraphiQLOptions> {
  const token = cookieValue(request.headers.get("Cookie"), SESSION_COOKIE);
  const session = token === undefined || request.headers.has("Authorization")
    ? null
    : await resumeSession(deps, token);
  const options: GraphiQLPageOptions = {
    title: "Link and event feed",
    defaultQuery: GRAPHIQL_DEFAULT_QUERY,
    headers: GRAPHIQL_DEFAULT_HEADERS,
    // What the default query needs to run as it opens (the session's environment).
    variables: await graphiqlVariables(deps.sql, session),
  };
  if (!session) return options;
  return { ...options, headers: "{}", additionalHeaders: { [CSRF_HEADER]: session.csrfToken } };
}

export function createGraphQLHandler(deps: AppDeps): GraphQLHandler {
  const persisted = persistedDocuments(deps.config.graphqlTrustedDocuments);
  // What the HTTP layer knows of each request (its id, the client's address), handed to the
  // executor by the request itself: Yoga is called without a server context, which it would copy
  // property by property for every request.
  const factsOf = new WeakMap<Request, RequestFacts>();
  const executor = createExecutor({
    maxPlanBytes: 4 * 1024 * 1024,
    context: (request, facts) => createContext(request, deps, facts),
  });
  const plugins: Plugin[] = [
    // Trusted documents, or automatic persisted queries: which document a request runs.
    ...persisted.plugins,
    // First: an oversized document is refused before it is parsed, counted or cached.
    useDocumentLimit(),
    // Every operation's parse, validation, context and execution (executor.ts).
    executor.plugin((request) => factsOf.get(request)!),
    // The GraphiQL page gets the CSP of its self-served files and is kept by no cache (with a
    // session it carries the session's synchronizer token).
    {
      onResponse({ response }) {
        if (response.headers.get("Content-Type")?.startsWith("text/html")) {
          response.headers.set("Content-Security-Policy", GRAPHIQL_CSP);
          response.headers.set("Cache-Control", "no-store");
        }
      },
    },
    // Compiled execution: a 1000-event page is ~6,000 field resolutions, where graphql-js's
    // interpreter spends most of the request's time.
    // Queries and mutations only: graphql-jit's compiled subscribe hands a subscription
    // field's resolver the operation's variables instead of its arguments (checked with
    // @envelop/graphql-jit 11.2), so subscriptions run on graphql-js.
    // Documents of one operation only: the plugin keeps one compiled query per document and
    // compiles it for the operation its first request named, so the other operations of a
    // document of several would run that one (@envelop/graphql-jit 11.2.1); those run on
    // graphql-js.
    queriesOnly(
      useGraphQlJit({}, { enableIf: (args) => singleOperation(args.document) }) as Plugin,
    ),
    // Limits sized for the schema: the deepest legitimate queries (eventFeed → edges → node →
    // link → iosCustomRedirect → url; environment → links → edges → node → analytics → groups →
    // series → views) are 6 to 8 levels.
    EnvelopArmorPlugin({
      maxDepth: { n: 10 },
      maxAliases: { n: 15 },
      maxDirectives: { n: 10 },
      maxTokens: { n: 2000 },
      // Armor multiplies a field's cost by a literal `first`: the largest legitimate document,
      // a 1000-event page with every field and the full link, costs 277,250. A `first` given
      // by a variable or left to its default is priced again before execution (useListCost).
      costLimit: COST,
      // Replaced by useHiddenSuggestions, which also hides enum values' and types' names.
      blockFieldSuggestion: { enabled: false },
    }),
    useHiddenSuggestions(),
    useListCost(COST),
    useErrorHandler(({ errors, context }) => {
      for (const error of errors) {
        const classified = classifyResolverError(error);
        if (!classified || classified.log === "none") continue;
        const requestId = (context as Partial<GraphQLContext>).requestId;
        deps.logger[classified.log](classified.logMessage ?? classified.message, {
          request_id: requestId,
          ...describeError((error as { originalError?: unknown }).originalError ?? error),
        });
      }
    }) as Plugin,
  ];
  // An envelop validation rule rather than Yoga's plugin, which marks requests in a Yoga-only
  // hook that the WebSocket transport does not run.
  if (!deps.config.graphqlIntrospection) {
    plugins.push({
      onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
    });
  }

  const yoga = createYoga<Record<string, never>, GraphQLContext>({
    schema,
    // Deno's own Request and Response, not the whatwg-node ponyfills (Deno looks like Node).
    fetchAPI: globalThis as unknown as FetchAPI,
    graphqlEndpoint: "/graphql",
    landingPage: false,
    graphiql: (request) => graphiqlOptions(deps, request),
    // Served from this process (pages/graphiql.ts), not from a CDN: works on a closed network.
    renderGraphiQL,
    maskedErrors: { maskError },
    logging: false,
    // Server-to-server only: project keys and feed tokens are secrets that never belong in a
    // browser, so no cross-origin requests and no multipart uploads are served.
    cors: false,
    multipart: false,
    // The app's frame (rest/frame.ts) limits every body to 1 MiB already; Yoga's own limiter
    // would wrap the body in another stream.
    maxRequestBodySize: false,
    // Yoga's caches of parsed documents and parse errors, keyed by the document's text: bounded
    // in bytes, as every cache that requests without credentials can fill.
    parserAndValidationCache: {
      documentCache: documentCache("graphql documents", 4 * 1024 * 1024),
      errorCache: parseErrorCache(1024 * 1024),
    },
    plugins,
  });

  const webSocket = createWebSocketHandler(deps, executor, persisted.webSocketQuery);
  return (request, facts) => {
    // Subscriptions over WebSocket (graphql/websocket.ts).
    if (request.headers.get("Upgrade")?.toLowerCase() === "websocket") {
      return webSocket(request, facts);
    }
    factsOf.set(request, facts);
    return yoga.handleRequest(request, {});
  };
}
