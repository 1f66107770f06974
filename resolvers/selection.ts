import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from "graphql";

/**
 * The names of the fields the operation selects on the object at `path` below the current field
 * (for example `["edges", "node", "link"]`), through fragments and aliases; null when it does not
 * select `path` at all. Directives are not evaluated: a field under `@skip` counts as selected,
 * which costs at most work that is not needed.
 */
export function selectedFields(
  info: GraphQLResolveInfo,
  path: readonly string[],
): Set<string> | null {
  let sets = info.fieldNodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
  for (const name of path) {
    const next: SelectionSetNode[] = [];
    let found = false;
    for (const set of sets) {
      visitFields(info, set, (field) => {
        if (field.name.value !== name) return;
        found = true;
        if (field.selectionSet) next.push(field.selectionSet);
      });
    }
    if (!found) return null;
    sets = next;
  }
  const names = new Set<string>();
  for (const set of sets) visitFields(info, set, (field) => names.add(field.name.value));
  return names;
}

function visitFields(
  info: GraphQLResolveInfo,
  set: SelectionSetNode,
  visit: (field: { name: { value: string }; selectionSet?: SelectionSetNode }) => void,
): void {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) visit(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) {
      visitFields(info, selection.selectionSet, visit);
    } else {
      const fragment = info.fragments[selection.name.value];
      if (fragment) visitFields(info, fragment.selectionSet, visit);
    }
  }
}
