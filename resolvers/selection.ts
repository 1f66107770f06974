import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from "graphql";

/**
 * Whether the operation selects the field at `path` below the current one (for example
 * `["edges", "node", "link"]`), through fragments and aliases. Directives are not evaluated:
 * a field under `@skip` counts as selected, which costs at most work that is not needed.
 */
export function selectsPath(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  let sets = info.fieldNodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
  for (const name of path) {
    const next: SelectionSetNode[] = [];
    let found = false;
    for (const set of sets) found = collect(info, set, name, next) || found;
    if (!found) return false;
    sets = next;
  }
  return true;
}

function collect(
  info: GraphQLResolveInfo,
  set: SelectionSetNode,
  name: string,
  into: SelectionSetNode[],
): boolean {
  let found = false;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value !== name) continue;
      found = true;
      if (selection.selectionSet) into.push(selection.selectionSet);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      found = collect(info, selection.selectionSet, name, into) || found;
    } else {
      const fragment = info.fragments[selection.name.value];
      if (fragment) found = collect(info, fragment.selectionSet, name, into) || found;
    }
  }
  return found;
}
