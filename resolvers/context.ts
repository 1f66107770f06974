// The one place a GraphQL request's context is made: who is asking.
import type { AppDeps } from "../services/deps.ts";
import { Loaders } from "./loaders.ts";

export interface GraphQLContext {
  deps: AppDeps;
  requestId: string;
  /** The SDK headers, for links and metrics. */
  sdk: { projectKey: string | null; environment: string | null };
  /** The `Authorization` header, for the feed. */
  authorization: string | null;
  /** The request's DataLoaders (resolvers/loaders.ts). */
  loaders: Loaders;
}

export function createContext(
  request: Request,
  deps: AppDeps,
  requestId: string,
): GraphQLContext {
  return {
    deps,
    requestId,
    sdk: {
      projectKey: request.headers.get("PROJECT-KEY"),
      environment: request.headers.get("ENVIRONMENT"),
    },
    authorization: request.headers.get("Authorization"),
    loaders: new Loaders(deps),
  };
}
