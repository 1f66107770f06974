// The one executor of every GraphQL operation, whatever carries it: Yoga's HTTP requests (POST,
// GET, subscriptions over SSE), through Yoga's public `onParams` hook (`setParamsHandler`), and
// the WebSocket transport (websocket.ts), which calls `prepare` itself. It does what Yoga's own
// params handler does (parse and validate through the envelop plugins, build the context, execute
// or subscribe through them) with two differences:
// - a plan per document: a document that parsed and validated keeps its parsed form and its
//   operation, by its text. Validation depends only on the document and this instance's rules
//   (armor's limits, the introspection switch), fixed for its life, so the parse and validate
//   hooks run once per document, not once per request. Bounded in bytes, least recently used
//   first out, as every cache that requests without credentials can fill;
// - the context is this service's own (context.ts), built directly rather than merged into
//   Yoga's through envelop's context hooks: no plugin here extends it.
// docs/SCALING.md ("GraphQL: one executor") says what this saves and what upstream change would
// let Yoga's own handler do the same.
import {
  type DocumentNode,
  type ExecutionArgs,
  getOperationAST,
  type GraphQLError,
  type OperationDefinitionNode,
} from "graphql";
import type { GraphQLParams, Plugin, YogaServer } from "graphql-yoga";
import { ByteCache } from "../infra/byte_cache.ts";
import type { RequestFacts } from "../resolvers/context.ts";
import { documentBytes } from "./document_limit.ts";

interface Plan {
  document: DocumentNode;
  /** The operation run when the request names none (null: the document needs a name). */
  operation: OperationDefinitionNode | null;
}

/** What envelop gives one request: its hooked parse, validate, execute and subscribe. */
// deno-lint-ignore no-explicit-any
type Enveloped = ReturnType<YogaServer<any, any>["getEnveloped"]>;

/** An operation ready to run, with the enveloped functions that run it. */
export interface Prepared {
  args: ExecutionArgs;
  operation: OperationDefinitionNode | null;
  enveloped: Enveloped;
}

export interface GraphQLExecutor {
  /** Installs the executor as Yoga's params handler; `factsOf` gives a request's facts. */
  plugin(factsOf: (request: Request) => RequestFacts): Plugin;
  /** The operation `params` asks for, ready to run, or the errors that refuse it. */
  prepare(
    request: Request,
    params: GraphQLParams,
    facts: RequestFacts,
  ): Prepared | readonly GraphQLError[];
}

export function createExecutor(options: {
  maxPlanBytes: number;
  context: (request: Request, facts: RequestFacts) => object;
}): GraphQLExecutor {
  const plans = new ByteCache<string, Plan>({
    name: "graphql plans",
    maxBytes: options.maxPlanBytes,
    sizeOf: (plan, source) => documentBytes(plan.document, source),
  });
  // deno-lint-ignore no-explicit-any
  let yoga: YogaServer<any, any> | undefined;

  function prepare(
    request: Request,
    params: GraphQLParams,
    facts: RequestFacts,
  ): Prepared | readonly GraphQLError[] {
    // The initial context the parse and validate hooks see, as Yoga's handler gives them.
    const enveloped = yoga!.getEnveloped({ request, params });
    const query = params.query ?? "";
    let plan = plans.get(query);
    if (!plan) {
      // Parse errors (and armor's limits) throw, as from Yoga's own handler.
      const document = enveloped.parse(query);
      const errors = enveloped.validate(enveloped.schema, document);
      if (errors.length > 0) return errors;
      plan = { document, operation: getOperationAST(document) ?? null };
      plans.set(query, plan);
    }
    const operation = params.operationName == null
      ? plan.operation
      : getOperationAST(plan.document, params.operationName) ?? null;
    return {
      operation,
      enveloped,
      args: {
        schema: enveloped.schema,
        document: plan.document,
        contextValue: options.context(request, facts),
        variableValues: params.variables,
        operationName: params.operationName,
      },
    };
  }

  return {
    prepare,
    plugin: (factsOf) => ({
      onYogaInit(payload) {
        yoga = payload.yoga;
      },
      onParams({ setParamsHandler }) {
        setParamsHandler(({ request, params }) => {
          const prepared = prepare(request, params, factsOf(request));
          if (!("args" in prepared)) return { errors: prepared };
          const { enveloped, operation, args } = prepared;
          return operation?.operation === "subscription"
            ? enveloped.subscribe(args)
            : enveloped.execute(args);
        });
      },
    }),
  };
}
