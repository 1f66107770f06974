// /graphql: Yoga over the Pothos schema, with armour against abusive documents.
import { useErrorHandler } from "@envelop/core";
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { useDisableIntrospection } from "@graphql-yoga/plugin-disable-introspection";
import { createYoga, type Plugin } from "graphql-yoga";
import { schema } from "../schema/mod.ts";
import type { AppDeps } from "../rest/deps.ts";
import { describeError } from "../services/log.ts";
import { createContext, type GraphQLContext } from "./context.ts";
import { isUnexpected, maskError } from "./errors.ts";

/** What the HTTP layer passes per request; Yoga merges it into the context. */
export interface ServerContext {
  requestId: string;
}

export function createGraphQLHandler(deps: AppDeps) {
  const plugins: Plugin[] = [
    // Limits sized for the schema: the deepest legitimate query (eventFeed → edges → node → link
    // → iosCustomRedirect → url) is 6 levels.
    EnvelopArmorPlugin({
      maxDepth: { n: 10 },
      maxAliases: { n: 15 },
      maxDirectives: { n: 10 },
      maxTokens: { n: 2000 },
      // The full feed query with every field and link costs about 30,000 by armor's default weights.
      costLimit: { maxCost: 60_000 },
      blockFieldSuggestion: { enabled: true },
    }),
    useErrorHandler(({ errors, context }) => {
      for (const error of errors) {
        if (!isUnexpected(error)) continue;
        const requestId = (context as Partial<GraphQLContext>).requestId;
        deps.logger.error("unhandled GraphQL error", {
          request_id: requestId,
          ...describeError((error as { originalError?: unknown }).originalError ?? error),
        });
      }
    }) as Plugin,
  ];
  if (!deps.config.graphqlIntrospection) plugins.push(useDisableIntrospection());

  return createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: "/graphql",
    landingPage: false,
    graphiql: { title: "Link and event feed" },
    maskedErrors: { maskError },
    logging: false,
    plugins,
    context: ({ request, requestId }) => createContext(request, deps, requestId),
  });
}
