// The one place a GraphQL request's context is made: who is asking.
import type { Principal } from "../services/access/principal.ts";
import type { AppDeps } from "../services/deps.ts";
import type { Session } from "../services/access/sessions.ts";
import { Loaders } from "./loaders.ts";

export interface GraphQLContext {
  deps: AppDeps;
  requestId: string;
  /** The client's address (the limit on wrong admin tokens counts by it). */
  clientAddress: string;
  /** The SDK headers, for links and metrics. */
  sdk: { projectKey: string | null; environment: string | null };
  /** The `Authorization` header: a feed token for the feed, the admin token for the rest. */
  authorization: string | null;
  /** The request's DataLoaders (resolvers/loaders.ts). */
  loaders: Loaders;
  /**
   * The request, read only when a field needs more than the above: the session cookie (when
   * there is no Authorization header) and a session's mutation's same-origin proof.
   */
  request: Request;
  /** Who is asking, authenticated once a request (resolvers/authorize.ts). */
  principal?: Promise<Principal>;
  /** The dashboard session the caller came with, once authenticated by one. */
  session?: Session;
  /**
   * The permission checks of this request by `operation:environment`: a page of links asks
   * for each link's metrics, and a person's role is read once for all of them.
   */
  checks?: Map<string, Promise<void>>;
  /** Analytics series values answered so far in this request (resolvers/analytics.ts). */
  seriesValues: number;
}

/** What the transport knows of a request beside its headers. */
export interface RequestFacts {
  requestId: string;
  clientAddress: string;
}

export function createContext(
  request: Request,
  deps: AppDeps,
  facts: RequestFacts,
): GraphQLContext {
  const headers = request.headers;
  return {
    request,
    deps,
    requestId: facts.requestId,
    clientAddress: facts.clientAddress,
    sdk: {
      projectKey: headers.get("PROJECT-KEY"),
      environment: headers.get("ENVIRONMENT"),
    },
    authorization: headers.get("Authorization"),
    loaders: new Loaders(deps),
    seriesValues: 0,
  };
}
