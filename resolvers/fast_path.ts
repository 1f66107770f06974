// The common GraphQL request, a POST of one JSON document for a query or mutation, served
// without Yoga's generic Fetch pipeline (request parsing, params hooks, result-processor
// negotiation), which cost more per request than executing a small query. Every envelop plugin
// stays on the path: a new document is parsed and validated through `yoga.getEnveloped` (the
// parser and validation caches, armor's limits), and every request runs the plugins' execute
// hooks (graphql-jit, the list cost, masked errors and the error logger: direct_execute.ts) with
// the same context factory, and answers in the media type Yoga would (application/json or
// application/graphql-response+json, as Accept asks). Anything else — another content type or
// an Accept naming a streaming type, a batch, a document
// that does not parse or validate, a subscription — returns null and takes Yoga's full path, so
// its answers are exactly Yoga's.
import {
  type DocumentNode,
  getOperationAST,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { type FetchAPI, processRegularResult, type YogaServerInstance } from "graphql-yoga";
import { ByteCache } from "../infra/byte_cache.ts";
import { type DirectExecute, directExecute, type ExecutePlugin } from "./direct_execute.ts";
import { documentBytes, documentFits } from "./document_limit.ts";

/** The request parameters Yoga accepts; any other key is Yoga's to refuse. */
const PARAM_KEYS: ReadonlySet<string> = new Set([
  "query",
  "variables",
  "operationName",
  "extensions",
]);

interface Params {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  extensions?: Record<string, unknown> | null;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const JSON_TYPE = "application/json";
const GRAPHQL_RESPONSE_TYPE = "application/graphql-response+json";
type ResponseType = typeof JSON_TYPE | typeof GRAPHQL_RESPONSE_TYPE;

/**
 * The media type Yoga would answer in (its result processor, graphql-yoga 5.24): the first entry
 * of Accept that is application/graphql-response+json, or application/json, application/* or
 * any type (these three: application/json); entries with a charset other than utf-8 do not
 * count; no Accept is any type. Null when the client also names a streaming type Yoga may
 * prefer, or none it takes: Yoga answers those.
 */
export function responseType(accept: string | null): ResponseType | null {
  if (accept === null || accept === "" || accept === JSON_TYPE) return JSON_TYPE;
  if (/text\/event-stream|multipart\/mixed/i.test(accept)) return null;
  for (const entry of accept.replace(/\s/g, "").toLowerCase().split(",")) {
    const [type, ...params] = entry.split(";");
    const charset = params.find((p) => p.includes("charset="));
    if (charset !== undefined && charset !== "charset=utf-8") continue;
    if (type === GRAPHQL_RESPONSE_TYPE) return GRAPHQL_RESPONSE_TYPE;
    if (type === JSON_TYPE || type === "application/*" || type === "*/*") return JSON_TYPE;
  }
  return null;
}

function eligibleParams(request: Request, body: string): Params | null {
  if (!/^application\/json\s*(;|$)/i.test(request.headers.get("content-type") ?? "")) return null;
  let params: unknown;
  try {
    params = JSON.parse(body);
  } catch {
    return null;
  }
  if (!isObject(params) || typeof params.query !== "string") return null;
  for (const key of Object.keys(params)) if (!PARAM_KEYS.has(key)) return null;
  if (params.variables != null && !isObject(params.variables)) return null;
  if (params.operationName != null && typeof params.operationName !== "string") return null;
  if (params.extensions != null && !isObject(params.extensions)) return null;
  return params as unknown as Params;
}

export type FastPath<TServerContext> = (
  request: Request,
  body: string,
  serverContext: TServerContext,
) => Promise<Response | null>;

/**
 * The fast path of one Yoga instance: it serves a POSTed JSON query or mutation through the
 * enveloped plugins, or answers null when the request is not one it takes (the caller then
 * hands it to `yoga.fetch`).
 */
export function createFastPath<TServerContext extends object>(
  // deno-lint-ignore no-explicit-any
  yoga: YogaServerInstance<TServerContext, any>,
  /** Whether the fast path may run these parameters (persisted.ts: else Yoga's plugins decide). */
  admits: (params: Params) => boolean,
  /** Yoga's `context` option, the same function: see ContextOf. */
  context?: ContextOf<TServerContext>,
): FastPath<TServerContext> {
  /**
   * Each document that parsed and validated, by its text, as the plan of its requests: the
   * document, the schema it was validated against and its operation. Validation depends only on
   * the document and this instance's rules, which are fixed for its life (armor's limits, the
   * introspection switch), so a document valid once stays valid. Yoga's own caches still pay
   * for a key of every rule's name on each request; this skips the hooks altogether. Bounded
   * in bytes: the least recently used entries go when it is full.
   */
  const plans = planCache("graphql valid documents", 4 * 1024 * 1024);
  const direct = context && contextBuilders(yoga) === 1 ? context : null;
  const plugins = (yoga as unknown as { plugins?: ExecutePlugin[] }).plugins;
  const execute = plugins ? directExecute(plugins) : null;
  return (request, body, serverContext) =>
    serve(yoga, plans, admits, direct, execute, request, body, serverContext);
}

/** What a request of a known document runs: see createFastPath's `plans`. */
interface Plan {
  document: DocumentNode;
  schema: GraphQLSchema;
  /** The operation run when the request names none (null: the document needs a name). */
  operation: OperationDefinitionNode | null;
}

function planCache(name: string, maxBytes: number): ByteCache<string, Plan> {
  return new ByteCache<string, Plan>({
    name,
    maxBytes,
    sizeOf: (plan, source) => documentBytes(plan.document, source),
  });
}

/**
 * Yoga's `context` option. When it is the only plugin hook that builds the context (Yoga makes
 * it one, envelop's useExtendContext), the fast path calls it itself and assigns its fields to
 * the initial context as that hook does: the same context, without envelop's promise chain over
 * its hooks (0.93 and 0.98 of a `link(path)` query's CPU per request, two runs). A plugin that adds a hook of its own
 * turns this off.
 */
export type ContextOf<TServerContext> = (
  initial: TServerContext & { request: Request; params: Params },
) => object;

/** How many of the instance's plugins build the context (its `plugins`, protected in its types). */
// deno-lint-ignore no-explicit-any
function contextBuilders(yoga: YogaServerInstance<any, any>): number {
  const plugins = (yoga as unknown as { plugins?: { onContextBuilding?: unknown }[] }).plugins;
  return plugins ? plugins.filter((p) => p.onContextBuilding).length : -1;
}

async function serve<TServerContext extends object>(
  // deno-lint-ignore no-explicit-any
  yoga: YogaServerInstance<TServerContext, any>,
  plans: ByteCache<string, Plan>,
  admits: (params: Params) => boolean,
  direct: ContextOf<TServerContext> | null,
  execute: DirectExecute | null,
  request: Request,
  body: string,
  serverContext: TServerContext,
): Promise<Response | null> {
  const type = responseType(request.headers.get("accept"));
  if (type === null) return null;
  const params = eligibleParams(request, body);
  // An oversized document is Yoga's to refuse (useDocumentLimit), before any cache sees it.
  if (!params || !documentFits(params.query) || !admits(params)) return null;
  const initial = { ...serverContext, request, params };
  // Envelop's per-request set-up (its closures over this context) only when something here needs
  // it: a document not planned yet, a context built by plugins, or plugins that hook the set-up
  // itself (directExecute is null then).
  let enveloped = null;
  let plan = plans.get(params.query);
  if (!plan) {
    enveloped = yoga.getEnveloped(initial);
    const made = planOf(enveloped, params.query);
    if (!made) return null;
    plans.set(params.query, plan = made);
  }
  const { document, schema } = plan;
  const operation = params.operationName == null
    ? plan.operation
    : getOperationAST(document, params.operationName);
  if (!operation || operation.operation === "subscription") return null;
  if (!direct || !execute) enveloped ??= yoga.getEnveloped(initial);
  const contextValue = direct
    ? Object.assign(initial, direct(initial))
    : await enveloped!.contextFactory();
  const args = {
    schema,
    document,
    contextValue,
    variableValues: params.variables ?? undefined,
    operationName: params.operationName ?? undefined,
  };
  const result = execute ? await execute(args) : await enveloped!.execute(args);
  // Without errors or extensions, Yoga's result processor would scan for both, then answer 200
  // with this one header: the same answer, without the scans.
  if (!(Symbol.asyncIterator in result) && !result.errors && !result.extensions) {
    return new Response(JSON.stringify(result), {
      headers: type === JSON_TYPE ? JSON_HEADERS : GRAPHQL_RESPONSE_HEADERS,
    });
  }
  // With errors, Yoga's own processor: its status rules (a request error, such as variables of
  // the wrong type, is 400 in application/graphql-response+json and 200 in application/json).
  return processRegularResult(result, globalThis as unknown as FetchAPI, type);
}

/** The plan of a document that parses and validates; null for Yoga to answer its errors. */
function planOf(
  enveloped: {
    parse: (source: string) => DocumentNode;
    validate: (schema: GraphQLSchema, document: DocumentNode) => readonly unknown[];
    schema: GraphQLSchema;
  },
  query: string,
): Plan | null {
  // Armor's limits throw from both parse and validate.
  try {
    const document = enveloped.parse(query);
    if (enveloped.validate(enveloped.schema, document).length > 0) return null;
    return { document, schema: enveloped.schema, operation: getOperationAST(document) ?? null };
  } catch {
    return null;
  }
}

const JSON_HEADERS = { "Content-Type": "application/json; charset=utf-8" };
const GRAPHQL_RESPONSE_HEADERS = {
  "Content-Type": "application/graphql-response+json; charset=utf-8",
};
