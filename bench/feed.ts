// The feed's figures: a 1000-event feed page against a bare handler serving the same rows with
// one SQL query; page latency with 100,000 vs --feed-rows captured events (spread over the
// feed's daily partitions); ingestion with capture on vs off.
import { CLI_AUDIT } from "../services/access/audit.ts";
import { createProject, updateProject } from "../services/projects/projects.ts";
import { MAX_SDK_WRITES } from "../services/projects/sdk_limits.ts";
import { createFeedToken } from "../services/feed/tokens.ts";
import { encodeCursor } from "../services/feed/cursor.ts";
import { ensurePartitions } from "../services/maintenance/partitions.ts";
import { systemClock } from "../infra/clock.ts";
import { judge, notFinite, type Row } from "./rows.ts";
import {
  type BenchDatabase,
  compare,
  CURSOR_SECRET,
  fmt,
  postJson,
  serveBareFeedPage,
  serveService,
  wrk,
} from "./lib.ts";

/**
 * Appends `n` captured events of about 400 bytes to the environment's feed, in SQL: the events
 * `from` to `from + n` of `total` spread evenly over the feed's last six days, as a feed of
 * `total` events would hold them in its daily partitions.
 */
export async function fillFeed(
  db: BenchDatabase,
  environmentId: number,
  hashid: string,
  range: { from: number; n: number; total: number },
) {
  const n = range.n;
  const { sql } = db;
  for (let done = 0; done < n; done += 200_000) {
    const batch = Math.min(200_000, n - done);
    // As ingestion captures them: one transaction id per 1000 events, in order (ids far below
    // the server's own, so already behind the feed's horizon); seq takes its default. The
    // planner's estimates, and so the plans measured, depend on there being many.
    await sql`
      with s as (select ${range.from + done}::bigint as first)
      insert into feed_events (environment_id, xid, type, received_at, body)
      select ${environmentId}, (s.first + g) / 1000 + 1,
        case when g % 5 = 0 then 'install' else 'open' end,
        now() - interval '6 days' * (1 - (s.first + g)::float8 / ${range.total}),
        json_build_object(
          'schema_version', 1, 'id', 'evt_' || lpad(to_hex(s.first + g), 26, '0'),
          'type', case when g % 5 = 0 then 'install' else 'open' end,
          'occurred_at', now(), 'project', json_build_object('id', ${hashid}::text, 'test', false),
          'device', json_build_object('os', 'iOS', 'model', 'iPhone15,2', 'locale', 'de_DE',
            'app_version', '4.12.0', 'idfv', md5(g::text)),
          'user', json_build_object('id', 'user-' || g, 'plan', 'pro'),
          'link', json_build_object('id', 1, 'path', 'abcdefghij',
            'access_path', 'https://lnk.example.test/abcdefghij'),
          'geo', json_build_object('country', 'DE')
        )::text
      from s, generate_series(1, ${batch}) g
    `;
  }
  await sql`vacuum analyze feed_events`;
  // What the fill and the vacuum dirtied is written out now, not during the measurement after
  // it (a checkpoint of gigabytes took the large feed's figures down with it).
  await sql`checkpoint`;
}

export async function feedBenchmarks(
  db: BenchDatabase,
  seconds: number,
  largeRows: number,
): Promise<Row[]> {
  const { sql } = db;
  const rows: Row[] = [];
  const { project, projectKey } = await createProject(
    sql,
    { name: "feed", enterprise: true },
    CLI_AUDIT,
  );
  // Its ingestion row sends 1,000-event batches as fast as it can: the SDK write limits stay on,
  // as high as a project may set them (by default they refuse the run after ten batches).
  await updateProject(sql, project.id, {
    sdk_limits: { per_key: MAX_SDK_WRITES, per_address: MAX_SDK_WRITES },
  }, CLI_AUDIT);
  const envId = project.environments.production.project_id;
  // Readers of 64 integrations, each with its own token: the rate-limit window of a token then
  // holds what a real reader's would, not every request of the run.
  const tokens: string[] = [];
  for (let i = 0; i < 64; i++) {
    tokens.push(
      (await createFeedToken(sql, systemClock, String(envId), `bench-${i}`, CLI_AUDIT)).value,
    );
  }
  const rotate = `local tokens = {${tokens.map((t) => JSON.stringify(t)).join(",")}}\n` +
    `local i = 0\nrequest = function()\n  i = i + 1\n` +
    `  wrk.headers["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1]\n` +
    `  return wrk.format(nil)\nend\n`;
  // The feed's days exist, as the maintenance job keeps them.
  await ensurePartitions(sql, "feed_events", new Date(), { behindDays: 7 });
  await fillFeed(db, envId, project.id, { from: 0, n: 100_000, total: largeRows });
  const [env] = await sql<{ epoch: string }[]>`
    select (extract(epoch from capture_started_at) * 1000000)::bigint as epoch
    from environments where id = ${envId}`;
  // The place of the n-th event (0-based) in feed order.
  const pointAt = async (n: number) => {
    const [point] = await sql<{ xid: string; seq: string }[]>`
      select xid::text, seq::text from feed_events where environment_id = ${envId}
      order by xid, seq offset ${n} limit 1`;
    return point!;
  };
  const cursorAt = (point: { xid: string; seq: string }) =>
    encodeCursor(CURSOR_SECRET, {
      environmentId: envId,
      epoch: env!.epoch,
      eventTypes: [],
      ...point,
    });

  const service = serveService(sql);
  const baseline = serveBareFeedPage(sql, envId);
  const servicePage = (point: { xid: string; seq: string }) =>
    `${service.url}/api/v1/projects/${envId}/event_stream?limit=1000&after=${
      encodeURIComponent(cursorAt(point))
    }`;
  const baselinePage = (point: { xid: string; seq: string }) =>
    `${baseline.url}/?xid=${point.xid}&seq=${point.seq}`;
  // The pages timed must be full ones: one of each before its run (wrk checks each status).
  const fullPages = async (point: { xid: string; seq: string }) => {
    const problems: string[] = [];
    for (
      const [who, url, init] of [
        ["service", servicePage(point), { headers: { Authorization: `Bearer ${tokens[0]}` } }],
        ["baseline", baselinePage(point), {}],
      ] as const
    ) {
      const res = await fetch(url, init);
      const text = await res.text();
      let events = 0;
      try {
        events = res.status === 200 ? (JSON.parse(text).events?.length ?? 0) : 0;
      } catch { /* counted as none */ }
      if (res.status !== 200 || events !== 1000) {
        problems.push(`the ${who}'s page answered ${res.status} with ${events} events, not 1000`);
      }
    }
    return problems;
  };

  try {
    const [sample] = await sql<{ n: number }[]>`
      select avg(length(body))::int as n from feed_events where environment_id = ${envId}`;
    const middle = await pointAt(50_000);
    const middleFull = await fullPages(middle);
    const page = await compare(
      () => wrk(servicePage(middle), { connections: 8, seconds, lua: rotate }),
      () => wrk(baselinePage(middle), { connections: 8, seconds }),
    );
    rows.push({
      name: `feed page, 1000 events of ~${sample!.n} B (-c8)`,
      figure: `${fmt(page.service.rps)} pages/s vs baseline ${fmt(page.baseline.rps)} = ${
        fmt(page.ratio, 2)
      }×; p50 ${fmt(page.service.p50ms)} ms (errors ${page.service.errors})`,
      target: "≥ 0.6× baseline",
      outcome: judge(page.ratio >= 0.6, [...middleFull, ...page.problems]),
    });

    // Latency of a page near the newest events, with little and with much history behind it.
    const latency = async (point: { xid: string; seq: string }) => {
      const full = await fullPages(point);
      const c = await compare(
        () => wrk(servicePage(point), { connections: 1, threads: 1, seconds, lua: rotate }),
        () => wrk(baselinePage(point), { connections: 1, threads: 1, seconds }),
        2,
      );
      return { p50ms: c.service.p50ms, problems: [...full, ...c.problems] };
    };
    const small = await latency(await pointAt(100_000 - 1500));
    await fillFeed(db, envId, project.id, {
      from: 100_000,
      n: largeRows - 100_000,
      total: largeRows,
    });
    // The newest pages, found from the end (an offset of millions would take seconds).
    const [near] = await sql<{ xid: string; seq: string }[]>`
      select xid::text, seq::text from feed_events where environment_id = ${envId}
      order by xid desc, seq desc offset 1500 limit 1`;
    const large = await latency(near!);
    rows.push({
      name: `page latency, 100,000 vs ${largeRows.toLocaleString("en")} events (-c1)`,
      figure: `p50 ${fmt(small.p50ms, 2)} ms vs ${fmt(large.p50ms, 2)} ms = ${
        fmt(large.p50ms / small.p50ms, 2)
      }×`,
      target: "larger within 1.1× of smaller",
      outcome: judge(large.p50ms / small.p50ms <= 1.1, [
        ...small.problems.map((p) => `100,000: ${p}`),
        ...large.problems.map((p) => `${largeRows.toLocaleString("en")}: ${p}`),
        ...notFinite({ ratio: large.p50ms / small.p50ms }),
      ]),
    });

    // Ingestion into a capturing environment (production) and a non-capturing one (test).
    const events = Array.from({ length: 1000 }, (_, i) => ({
      type: i % 10 === 0 ? "install" : "open",
      occurred_at: new Date().toISOString(),
      device: { os: "iOS", model: "iPhone15,2" },
      geo: { country: "DE" },
    }));
    const lua = postJson(JSON.stringify({ events }));
    const ingest = (environment: string) =>
      wrk(`${service.url}/api/v1/sdk/events`, {
        connections: 4,
        seconds,
        headers: { "PROJECT-KEY": projectKey, "ENVIRONMENT": environment },
        lua,
        expect: { status: 202 },
      });
    const on = await compare(() => ingest("production"), () => ingest("development"), 2);
    rows.push({
      name: "ingestion with capture on vs off, 1,000-event batches (-c4)",
      figure: `${fmt(on.service.rps * 1000, 0)} events/s captured vs ${
        fmt(on.baseline.rps * 1000, 0)
      } not captured = ${fmt(on.ratio, 2)}× (errors ${on.service.errors + on.baseline.errors})`,
      target: "≥ 0.85×",
      outcome: judge(on.ratio >= 0.85, [...on.problems, ...notFinite({ ratio: on.ratio })]),
    });
  } finally {
    await service.close();
    await baseline.close();
  }
  return rows;
}
