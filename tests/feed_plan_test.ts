// The unfiltered feed page is planned once per connection, as the index walk
// (services/feed/page_plan.ts): its plan settings reach the server before the page's statement,
// whichever transport reads it (REST and GraphQL share readFeedPage; the live tail's opening
// read takes its stream slot between the admission and the page).
import assert from "node:assert/strict";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import { readFeedPage } from "../services/feed/feed.ts";
import { createProject } from "../services/projects/projects.ts";
import { ManualClock } from "./helpers/clock.ts";
import { createTestDatabase } from "./helpers/database.ts";

const clock = new ManualClock("2026-03-02T10:00:00Z");
const db = await createTestDatabase();
Deno.test.afterAll(() => db.close());

/** The page statements' plans on the pool's one connection. */
async function pagePlans(sql: ReturnType<typeof db.pool>) {
  const rows = await sql<{ generic: number; custom: number; filtered: boolean }[]>`
    select generic_plans::int as generic, custom_plans::int as custom,
      statement like '%unnest(%' as filtered
    from pg_prepared_statements
    where statement like '%cross join lateral%' and statement like '%from feed_events%'
      and statement not like '%pg_prepared_statements%'
  `;
  return {
    unfiltered: rows.filter((r) => !r.filtered),
    filtered: rows.filter((r) => r.filtered),
  };
}

Deno.test("the unfiltered page is never planned per call: its settings come before it", async () => {
  // One connection, so that pg_prepared_statements is the one that read the pages.
  const sql = db.pool(1);
  const { project } = await createProject(sql, { name: "plan", enterprise: true }, CLI_AUDIT);
  const env = String(project.environments.production.project_id);
  const token = await createFeedToken(sql, clock, env, "plan", CLI_AUDIT);
  const deps = { clock, cursorSecret: "s".repeat(32), config: { feedRateLimit: 1000 } };
  const read = (eventTypes?: string[], admit?: () => Promise<void>) =>
    readFeedPage(sql, deps, { token: token.value, projectId: env, limit: 10, eventTypes }, admit);
  // More than the five calls after which PostgreSQL may settle on a generic plan by itself.
  for (let i = 0; i < 8; i++) await read();
  let plans = await pagePlans(sql);
  assert.equal(plans.unfiltered.length, 1);
  assert.deepEqual(plans.unfiltered[0], { generic: 8, custom: 0, filtered: false });

  // The live tail's opening read: an extra admission between the admission and the page.
  for (let i = 0; i < 8; i++) await read(undefined, async () => {});
  plans = await pagePlans(sql);
  assert.deepEqual(plans.unfiltered[0], { generic: 16, custom: 0, filtered: false });

  // A filtered page is left to the planner: each call planned for its parameters.
  for (let i = 0; i < 3; i++) await read(["open"]);
  plans = await pagePlans(sql);
  assert.equal(plans.filtered.length, 1);
  assert.deepEqual(plans.filtered[0], { generic: 0, custom: 3, filtered: true });
});
