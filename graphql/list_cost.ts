// Armor's cost limit, applied again with the page sizes a request actually asks for.
//
// Armor prices a document when it is validated, before its variables are known: it multiplies a
// field's cost by a literal `first` only, so `links(first: $n)`, or `links` left at its default
// of 50, would be priced as one link, and everything nested below it (each link's metrics and
// analytics series) as if it were read once. Before execution, this plugin gives every field
// with a `first` argument the value it will run with (the variable's, or the argument's
// default) as a literal, and runs armor's own rule over that document, with the same limit.
// Documents that need it are known after the first look: the others cost nothing more.
import { costLimitRule } from "@escape.tech/graphql-armor-cost-limit";
import {
  type ArgumentNode,
  type DocumentNode,
  type FieldNode,
  type GraphQLArgument,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
} from "graphql";
import type { Plugin } from "graphql-yoga";

/** Armor's cost options (graphql/yoga.ts gives the same to armor's validation-time rule). */
export interface CostOptions {
  maxCost: number;
}

const firstArgument = (field: FieldNode) => field.arguments?.find((a) => a.name.value === "first");

/** Whether some `first` of the document is a variable or left to its default. */
function hasUnpricedFirst(schema: GraphQLSchema, document: DocumentNode): boolean {
  const typeInfo = new TypeInfo(schema);
  let found = false;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const definition = typeInfo.getFieldDef()?.args.find((a) => a.name === "first");
        if (!definition) return;
        const given = firstArgument(node);
        if (given ? given.value.kind === Kind.VARIABLE : definition.defaultValue !== undefined) {
          found = true;
        }
      },
    }),
  );
  return found;
}

/** The page size a `first` runs with: a whole number, else none (execution refuses it). */
function runValue(
  given: ArgumentNode | undefined,
  definition: GraphQLArgument,
  variables: Record<string, unknown>,
): number | null {
  const value = given?.value.kind === Kind.VARIABLE
    ? (Object.hasOwn(variables, given.value.name.value)
      ? variables[given.value.name.value]
      : undefined)
    : definition.defaultValue;
  return typeof value === "number" && Number.isSafeInteger(value) ? value : null;
}

/** The document with every `first` that is a variable or a default as the literal it runs with. */
function withPageSizes(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
): DocumentNode {
  const typeInfo = new TypeInfo(schema);
  return visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const definition = typeInfo.getFieldDef()?.args.find((a) => a.name === "first");
        if (!definition) return;
        const given = firstArgument(node);
        if (given && given.value.kind !== Kind.VARIABLE) return;
        const value = runValue(given, definition, variables);
        if (value === null) return;
        const literal: ArgumentNode = {
          kind: Kind.ARGUMENT,
          name: { kind: Kind.NAME, value: "first" },
          value: { kind: Kind.INT, value: String(value) },
        };
        return {
          ...node,
          arguments: [...(node.arguments ?? []).filter((a) => a !== given), literal],
        };
      },
    }),
  );
}

export function useListCost(options: CostOptions): Plugin {
  const unpriced = new WeakMap<DocumentNode, boolean>();
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const { schema, document } = args;
      let needed = unpriced.get(document);
      if (needed === undefined) {
        needed = hasUnpricedFirst(schema, document);
        unpriced.set(document, needed);
      }
      if (!needed) return;
      const variables = (args.variableValues ?? {}) as Record<string, unknown>;
      const rejected: GraphQLError[] = [];
      const rule = costLimitRule({
        maxCost: options.maxCost,
        propagateOnRejection: false,
        onReject: [(_context, error) => rejected.push(error)],
      });
      const priced = withPageSizes(schema, document, variables);
      // Only the operation that runs is priced.
      const operations = priced.definitions.filter((d) =>
        d.kind !== Kind.OPERATION_DEFINITION ||
        args.operationName == null || d.name?.value === args.operationName
      );
      validate(schema, { ...priced, definitions: operations }, [rule]);
      if (rejected.length === 0) return;
      // Answered as armor's own refusal of a document, a validation error, is answered: the same
      // message, and HTTP 400 in application/graphql-response+json (200 in application/json).
      setResultAndStopExecution({
        errors: rejected.map((e) =>
          new GraphQLError(e.message, {
            extensions: { code: "BAD_USER_INPUT", http: { spec: true, status: 400 } },
          })
        ),
      });
    },
  };
}
