// Issue 36's ingestion rows: ingestion with click and user attribution on against off (the same
// events carrying the links attribution would find, see batch()), in adjacent pairs (which goes
// first alternates) so that the shared machine's drift between pairs does not count; judged on
// the median ratio. Beside it, on against the events left unattributed (see Mode), and the
// events per second with attribution on, against the ingestion floor of 20,000.
//
// A batch is an app's mix: installs carrying a click id and a new user, opens of returning users
// (half through a link), purchases and other events that only name their user, so that most
// events probe the user's touches. Users recur across batches as they would: later batches
// attribute earlier batches' users.
import { CLI_AUDIT } from "../services/access/audit.ts";
import type { Sql } from "../db/connect.ts";
import { systemClock } from "../infra/clock.ts";
import type { NewEvent } from "../services/events/event.ts";
import { recordEvents } from "../services/events/record.ts";
import { ClickIds } from "../services/attribution/click_ids.ts";
import { createProject } from "../services/projects/projects.ts";
import { type BenchDatabase, CURSOR_SECRET, fmt, median } from "./lib.ts";
import { judge, notFinite, report, type Row } from "./rows.ts";

const LINKS = 1000;
const WRITERS = 4;
const BATCH = 1000;
const PAIRS = 5;
const RATIO_TARGET = 0.9;
const RATE_TARGET = 20_000;

// deno-lint-ignore no-console
const log = (s: string) => console.error(`bench attribution: ${s}`);

interface Seeded {
  envId: number;
  hashid: string;
  firstLink: number;
}

export async function seed(sql: Sql): Promise<Seeded> {
  const { project } = await createProject(
    sql,
    { name: "attribution bench", enterprise: true },
    CLI_AUDIT,
  );
  const envId = project.environments.production.project_id;
  const [first] = await sql<[{ id: number }]>`
    with l as (
      insert into links (environment_id, project_id, path, title)
      select ${envId}, (select project_id from environments where id = ${envId}),
        'a' || g, 'Link ' || g from generate_series(1, ${LINKS}) g
      returning id
    ), c as (
      insert into link_counters (link_id, environment_id) select id, ${envId} from l
    )
    select min(id)::int as id from l
  `;
  return { envId, hashid: project.id, firstLink: first.id };
}

const clickIds = new ClickIds(CURSOR_SECRET);

/**
 * A link for event `n`, skewed as links' traffic is (a few links bring most of it, as in the
 * analytics bench's seed): the cube of a uniform draw, so the top 10% of links take about half
 * of the events.
 */
function skewed(n: number): number {
  const u = ((Math.imul(n + 1, 2654435761) >>> 0) % 1_000_003) / 1_000_003;
  return Math.floor(LINKS * u ** 3);
}

/**
 * Batch `seq`: 10% installs with a click and a new user, the rest of users seen before in
 * `earlier`, the same writer's previous batches: concurrent batches rarely share users (an app's
 * batch is one device's), so writers do not queue on each other's users.
 *
 * `resolved`: the baseline's batch, the same events with the `link_path` that attribution would
 * find (the install's link for its user's later events), as an app that kept the link itself
 * would send them. Both then count the same events for the same links, and the ratio is the
 * price of finding the link (the click id's check, the users' locks and touches), not that of
 * counting more events per link.
 */
function batch(s: Seeded, seq: number, earlier: readonly number[], resolved: boolean): NewEvent[] {
  const now = Date.now();
  return Array.from({ length: BATCH }, (_, i): NewEvent => {
    const occurred_at = new Date(now);
    const link = skewed(seq * BATCH + i);
    if (i % 10 === 0) {
      return {
        type: "install",
        occurred_at,
        user: { id: `u${seq}-${i}` },
        ...(resolved ? { link_path: `a${1 + link}` } : {}),
        attribution: {
          click_id: clickIds.mint({
            environmentId: s.envId,
            linkId: s.firstLink + link,
            clickedAt: new Date(now - 60_000),
          }),
        },
        device: { os: "iOS" },
      };
    }
    // A user of one of the writer's 20 batches before (or this one's, for its first).
    const from = earlier.length === 0
      ? seq
      : earlier[earlier.length - 1 - (i % Math.min(earlier.length, 20))]!;
    const user = { id: `u${from}-${i - (i % 10)}` };
    // The link of the user's install (their first touch).
    const touched = resolved ? { link_path: `a${1 + skewed(from * BATCH + i - (i % 10))}` } : {};
    if (i % 10 < 4) {
      return {
        type: "open",
        occurred_at,
        user,
        ...(i % 2 === 0 ? { link_path: `a${1 + link}` } : touched),
        device: { os: "iOS" },
      };
    }
    if (i % 10 === 4) {
      return {
        type: "purchase",
        name: "purchase",
        occurred_at,
        user,
        ...touched,
        purchase: {
          transaction_id: `t${seq}-${i}`,
          version: 1,
          amount: 499,
          currency: "USD",
          product_id: "pro",
          store: "app_store",
        },
      };
    }
    return { type: "custom", name: "screen", occurred_at, user, ...touched };
  });
}

/**
 * - `on`: attribution finds each event's link (click ids, users' touches);
 * - `resolved`: the baseline, the same events carrying the link attribution would find;
 * - `bare`: the same events, attributed to nothing but the links they name (the price of
 *   counting the attributed events per link and of their fuller envelopes, beside the lookup's).
 */
export type Mode = "on" | "resolved" | "bare";

export async function ingestRate(
  sql: Sql,
  s: Seeded,
  mode: Mode,
  seconds: number,
  next: { seq: number; earlier: number[][] },
): Promise<number> {
  const ctx = {
    environment: { id: s.envId, kind: "production" as const, hashid: s.hashid },
    clock: systemClock,
    linkBaseUrl: "https://lnk.example.test",
    clickIds,
    attribution: mode === "on",
  };
  let stored = 0;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      const earlier = next.earlier[w] ??= [];
      while (performance.now() < deadline) {
        const seq = next.seq++;
        const r = await recordEvents(sql, ctx, batch(s, seq, earlier, mode === "resolved"));
        earlier.push(seq);
        stored += r.accepted;
      }
    }),
  );
  return stored / ((performance.now() - start) / 1000);
}

/** PAIRS adjacent pairs of `on` against `baseline` (which goes first alternates). */
async function pairs(
  sql: Sql,
  s: Seeded,
  baseline: Mode,
  seconds: number,
  next: Parameters<typeof ingestRate>[4],
) {
  const off: number[] = [];
  const on: number[] = [];
  const ratios: number[] = [];
  for (let pair = 0; pair < PAIRS; pair++) {
    const first = pair % 2 === 0;
    const a = await ingestRate(sql, s, first ? baseline : "on", seconds, next);
    const b = await ingestRate(sql, s, first ? "on" : baseline, seconds, next);
    const [without, withIt] = first ? [a, b] : [b, a];
    off.push(without);
    on.push(withIt);
    ratios.push(withIt / without);
    log(
      `${baseline} pair ${pair + 1}: ${fmt(without, 0)} ${baseline}, ${fmt(withIt, 0)} on: ${
        fmt(withIt / without, 2)
      }×`,
    );
  }
  return { off, on, ratios, ratio: median(ratios) };
}

export async function attributionBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const { sql } = db;
  const s = await seed(sql);
  const next = { seq: 0, earlier: [] as number[][] };
  await ingestRate(sql, s, "on", 1, next); // warm up, and users to come back
  const resolved = await pairs(sql, s, "resolved", seconds, next);
  const bare = await pairs(sql, s, "bare", seconds, next);
  const [attributed] = await sql<[{ n: number }]>`
    select count(*)::int as n from analytics_events
    where environment_id = ${s.envId} and body::json -> 'attribution' ->> 'method' = 'user'
  `;
  const rate = median(resolved.on);
  const problems = [
    ...notFinite({ ratio: resolved.ratio, bare: bare.ratio, rate }),
    ...(attributed.n > 0 ? [] : ["no event was attributed to its user"]),
  ];
  const shape =
    `${BATCH}-event batches, ${WRITERS} writers, median ratio of ${PAIRS} adjacent pairs`;
  return [
    {
      name: `attribution: ingestion with click and user attribution on against off, the events ` +
        `carrying the links it finds (${shape})`,
      figure: `${fmt(resolved.ratio, 2)}× (pairs ${
        resolved.ratios.map((r) => fmt(r, 2)).join(", ")
      })`,
      target: `≥ ${RATIO_TARGET}×`,
      outcome: judge(resolved.ratio >= RATIO_TARGET, problems),
    },
    {
      name: `attribution: the same against the events left unattributed, counted for no link ` +
        `(${shape})`,
      figure: `${fmt(bare.ratio, 2)}× (pairs ${bare.ratios.map((r) => fmt(r, 2)).join(", ")})`,
      target: "none: the price of counting 4.5× the events per link, in fuller envelopes",
      outcome: report(problems),
    },
    {
      name: "attribution: ingestion with attribution on, events/s (median of the first pairs)",
      figure: `${fmt(rate, 0)} events/s (off: ${fmt(median(resolved.off), 0)}; unattributed ${
        fmt(median(bare.off), 0)
      }); ${attributed.n.toLocaleString("en")} events attributed to their user`,
      // This mix (a tenth purchases, every event with a user) is heavier than the SDK bench's
      // ingestion row, which holds the floor of RATE_TARGET and sends no users.
      target: `none (the sdk scenario's ingestion row holds ≥ ${
        RATE_TARGET.toLocaleString("en")
      } events/s)`,
      outcome: report(problems),
    },
  ];
}
