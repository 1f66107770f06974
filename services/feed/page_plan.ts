// How the unfiltered feed page is planned: once per connection, always as the index walk.
import { onCitus } from "../../db/cluster.ts";
import type { Db } from "../../db/connect.ts";

/**
 * The settings, for a transaction that reads an unfiltered page after them, that make the page
 * planned once per connection, not at every call. PostgreSQL otherwise replans it every time
 * (custom plans over every daily partition, twice), which costs it more CPU than the page's
 * execution (docs/SCALING.md, "Feed page"), or settles on a generic plan of its own after five
 * calls. The unfiltered page has one right plan, whatever the statistics say: walk the position
 * index of each partition from the cursor and merge. The other settings keep the cached plan on
 * it: a plan made while a day's partition is still empty and unanalysed would otherwise scan and
 * sort that partition for as long as the plan lives, several times slower than the walk. A
 * filtered page merges per-type walks under a final sort, and is left to the planner at every
 * call.
 *
 * The settings must reach the server BEFORE the page's statement: postgres.js sends a
 * transaction's queries in the order their promises are first awaited, not in the order they
 * were made (tests/feed_plan_test.ts checks the page is never planned otherwise).
 *
 * Not on Citus: these settings are the coordinator's (Citus does not pass them on), where the
 * shard's query is planned by the worker anyway, and a forced generic plan is what Citus cannot
 * make of the page (its router planner needs the parameters' values: "could not create
 * distributed plan", every time a transaction read a second page) nor of `select
 * feed_horizon($1)` (run on the coordinator, not delegated to the feed's worker: the wrong
 * horizon). Under the default mode Citus makes its generic plans too costly to be chosen.
 */
export function pinsPagePlan(eventTypes: readonly string[]): boolean {
  return eventTypes.length === 0 && !onCitus();
}

/** The settings as columns of another statement's select list (each after a comma). */
export function pagePlanColumns(db: Db) {
  return db`, set_config('plan_cache_mode', 'force_generic_plan', true),
    set_config('enable_seqscan', 'off', true),
    set_config('enable_bitmapscan', 'off', true),
    set_config('enable_sort', 'off', true)`;
}

/**
 * The settings as a statement of their own when `eventTypes` is the unfiltered page's, else
 * nothing. Not sent until awaited (or `.execute()`d): see above.
 */
export function planUnfilteredPageOnce(db: Db, eventTypes: readonly string[]) {
  return !pinsPagePlan(eventTypes) ? null : db`
    select set_config('plan_cache_mode', 'force_generic_plan', true),
      set_config('enable_seqscan', 'off', true),
      set_config('enable_bitmapscan', 'off', true),
      set_config('enable_sort', 'off', true)
  `;
}
