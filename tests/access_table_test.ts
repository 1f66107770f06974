// The access tests' expectation (helpers/access_table.ts, written by hand) is docs/access.md's
// table: each operation's least role and key scope as the page states them.
import assert from "node:assert/strict";
import { EXPECTED_ACCESS } from "./helpers/access_table.ts";

/** docs/access.md's table of operations: its first column → [least role, API key scope]. */
function documentedTable(): Map<string, [string, string]> {
  const page = Deno.readTextFileSync("docs/access.md");
  const header = page.indexOf("| operation ");
  assert.ok(header >= 0, "docs/access.md has no operation table");
  const rows = new Map<string, [string, string]>();
  for (const line of page.slice(header).split("\n").slice(2)) {
    if (!line.startsWith("|")) break;
    const [what, role, scope] = line.split("|").slice(1, 4).map((c) => c.trim());
    rows.set(what!, [role!, scope!]);
  }
  return rows;
}

Deno.test("the access tests' hand-written table says what docs/access.md's table says", () => {
  const documented = documentedTable();
  assert.ok(documented.size >= 10, `only ${documented.size} rows read`);
  const problems: string[] = [];
  for (const [op, expected] of Object.entries(EXPECTED_ACCESS)) {
    const row = documented.get(expected.doc);
    if (!row) {
      problems.push(`${op}: no row "${expected.doc}"`);
      continue;
    }
    const role = expected.role === "instance" ? "instance admin" : expected.role;
    const scope = expected.scope === null ? /^none/ : new RegExp(`^\`${expected.scope}\`$`);
    if (row[0] !== role) problems.push(`${op}: role ${role}, the page says ${row[0]}`);
    if (!scope.test(row[1])) {
      problems.push(`${op}: scope ${expected.scope}, the page says ${row[1]}`);
    }
  }
  // Every row of the page is some operation's.
  const used = new Set(Object.values(EXPECTED_ACCESS).map((e) => e.doc));
  for (const what of documented.keys()) if (!used.has(what)) problems.push(`unused row "${what}"`);
  assert.deepEqual(problems, []);
});
