// envelop's execute orchestration (@envelop/core 5.6, orchestrator.js `customExecute`) for the
// fast path (fast_path.ts): every plugin's `onExecute` hook, in the plugins' order, with the same
// payload, then every `onExecuteDone` it returned, in the same order, on the result. Called
// directly rather than through promise-helpers' chain of closures and fake promises, which cost a
// small query more than the hooks themselves; a hook that returns a promise is awaited, as
// envelop awaits it. What the hooks do is untouched: graphql-jit's plugin still chooses its
// compiled query (its own cache, by document), the list cost check still prices `first`, the error
// logger and masked errors still see every result with errors.
import type { DocumentNode, ExecutionArgs, ExecutionResult, GraphQLSchema } from "graphql";

/** The arguments the fast path executes with (envelop's ExecutionArgs). */
export interface DirectArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  contextValue: object;
  variableValues?: Record<string, unknown>;
  operationName?: string;
}

type ExecuteFn = (args: ExecutionArgs) => unknown;

interface DonePayload {
  args: DirectArgs;
  result: ExecutionResult;
  setResult: (result: ExecutionResult) => void;
}

interface ExecuteHookResult {
  onExecuteDone?: (payload: DonePayload) => unknown;
}

/** What the fast path needs of a plugin: the hooks envelop's execute and its set-up call. */
export interface ExecutePlugin {
  // deno-lint-ignore no-explicit-any
  onExecute?: (payload: any) => unknown;
  onEnveloped?: unknown;
  instrumentation?: unknown;
}

export type DirectExecute = (args: DirectArgs) => Promise<ExecutionResult>;

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof (v as { then?: unknown } | null)?.then === "function";

const isAsyncIterable = (v: unknown): boolean =>
  typeof (v as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === "function";

const noEngine: ExecuteFn = () => {
  throw new Error('No `execute` function found! Register it using "useEngine" plugin.');
};

/**
 * The plugins' execute, called directly; null when a plugin also hooks what `getEnveloped` runs
 * for each request (`onEnveloped`) or instruments the phases (`instrumentation`): the fast path
 * then keeps envelop's own `getEnveloped(…).execute`, which runs them.
 */
export function directExecute(plugins: readonly ExecutePlugin[]): DirectExecute | null {
  if (plugins.some((p) => p.onEnveloped || p.instrumentation)) return null;
  const hooks = plugins.flatMap((p) => (p.onExecute ? [p.onExecute] : []));
  return (args) => execute(hooks, args);
}

async function execute(
  // deno-lint-ignore no-explicit-any
  hooks: readonly ((payload: any) => unknown)[],
  args: DirectArgs,
): Promise<ExecutionResult> {
  const context = args.contextValue;
  let executeFn = noEngine;
  let result: ExecutionResult | undefined;
  let stopped = false;
  const after: ExecuteHookResult[] = [];
  for (const hook of hooks) {
    let done = hook({
      executeFn,
      setExecuteFn: (fn: ExecuteFn) => {
        executeFn = fn;
      },
      setResultAndStopExecution: (stopResult: ExecutionResult) => {
        result = stopResult;
        stopped = true;
      },
      context,
      extendContext: (extension: unknown) => {
        if (typeof extension !== "object") {
          throw new Error(
            `Invalid context extension provided! Expected "object", got: "${
              JSON.stringify(extension)
            }" (${typeof extension})`,
          );
        }
        Object.assign(context, extension);
      },
      args,
    });
    if (isThenable(done)) done = await done;
    if (done) after.push(done as ExecuteHookResult);
    if (stopped) break;
  }
  if (!stopped) {
    let executed = executeFn({ ...args, contextValue: context } as ExecutionArgs);
    if (isThenable(executed)) executed = await executed;
    result = executed as ExecutionResult;
  }
  for (const { onExecuteDone } of after) {
    if (!onExecuteDone) continue;
    let done = onExecuteDone({
      args,
      result: result!,
      setResult: (next) => {
        result = next;
      },
    });
    if (isThenable(done)) done = await done;
    // A hook's onNext and onEnd apply to a streamed result, which graphql-jit's compiled query
    // (no @defer or @stream) never is: rather than drop them, refuse.
    if (done && isAsyncIterable(result)) {
      throw new Error("a streamed execution result on the GraphQL fast path");
    }
  }
  return result!;
}
