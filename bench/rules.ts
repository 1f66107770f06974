// Issue 35's figures: a link-host redirect of a link with 10 rules and a 3-way split, against
// the same redirect of a plain link, in the same run. CPU per redirect measured in process as
// bench/hot_cpu.ts does (app.fetch with 32 in flight, process.cpuUsage() around thousands of
// requests, the views written behind them included), in alternating rounds; and wrk throughput
// over HTTP, alternating. The hit is an iPhone that no rule takes (every rule is tried, then the
// split decides), a returning visitor with its cookie.
import process from "node:process";
import type { Sql } from "../db/connect.ts";
import { resolveConfig } from "../config.ts";
import { createApp } from "../app.ts";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { systemClock } from "../infra/clock.ts";
import { createLogger } from "../infra/log.ts";
import { createLink } from "../services/links/links.ts";
import type { LinkRule } from "../services/links/rules.ts";
import { createProject } from "../services/projects/projects.ts";
import { hashSecret } from "../infra/secrets.ts";
import { ViewRecorder } from "../services/link_host/view_recorder.ts";
import {
  ADMIN_TOKEN,
  type BenchDatabase,
  compare,
  CURSOR_SECRET,
  fmt,
  median,
  serveService,
  wrk,
} from "./lib.ts";
import { benchLogWriter } from "./logging.ts";
import { judge, notFinite, type Row } from "./rows.ts";

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";
const HEADERS = {
  "User-Agent": IPHONE,
  "Accept-Language": "en-US,en;q=0.9",
  Cookie: "lv_id=benchVisitor0123456789",
};

/** Ten rules, none of which an iPhone in English without a referrer matches. */
export const BENCH_RULES: LinkRule[] = [
  { name: "dach", when: { country: ["DE", "AT", "CH"] }, url: "https://example.com/dach" },
  { name: "de-fr", when: { language: ["de", "fr"] }, url: "https://example.com/lang" },
  { name: "android", when: { platform: ["android"] }, url: "https://example.com/android" },
  { name: "desktop-os", when: { os: ["Windows", "Mac OS"] }, url: "https://example.com/desk" },
  { name: "newsletter", when: { query: { utm_source: "newsletter" } }, url: "https://e.com/n" },
  { name: "news", when: { referrer_host: ["news.example.org"] }, url: "https://e.com/news" },
  { name: "office", when: { ip: ["10.0.0.0/8", "2001:db8::/32"] }, url: "https://e.com/office" },
  {
    name: "launch",
    when: { from: "2020-01-01T00:00:00.000Z", until: "2020-02-01T00:00:00.000Z" },
    url: "https://e.com/launch",
  },
  {
    name: "fr-android",
    when: { country: ["FR"], platform: ["android"] },
    split: [{ url: "https://e.com/a", weight: 1 }, { url: "https://e.com/b", weight: 1 }],
  },
  { name: "promo-es", when: { query: { promo: "*" }, language: ["es"] }, url: "https://e.com/es" },
];

async function seed(sql: Sql) {
  const { project } = await createProject(
    sql,
    { name: "rules bench", enterprise: true },
    CLI_AUDIT,
  );
  const envId = project.environments.production.project_id;
  const common = {
    title: "Bench link",
    subtitle: "A link of about a kilobyte once serialised",
    tags: ["bench"],
    ios_custom_redirect: { url: "https://apps.apple.com/app/id1" },
    android_custom_redirect: { url: "https://play.google.com/store/apps/details?id=x" },
    desktop_custom_redirect: { url: "https://example.com/desktop" },
    tracking_campaign: "spring",
    tracking_source: "newsletter",
    tracking_medium: "email",
  };
  const plain = await createLink(sql, envId, common);
  const ruled = await createLink(sql, envId, {
    ...common,
    rules: BENCH_RULES,
    split: [
      { url: "https://example.com/v1", weight: 50 },
      { url: "https://example.com/v2", weight: 30 },
      { url: "https://example.com/v3", weight: 20 },
    ],
  });
  return { plain: plain.path, ruled: ruled.path };
}

/** CPU µs per request of `requests` redirects of `path`, 32 in flight, views written. */
async function cpuPerRedirect(
  fetch: (req: Request) => Response | Promise<Response>,
  flush: () => Promise<void>,
  path: string,
  requests: number,
): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < requests) {
      next++;
      const res = await fetch(
        new Request(`http://127.0.0.1:8000/${path}`, {
          headers: { ...HEADERS, Host: "127.0.0.1:8000" },
        }),
      );
      await res.arrayBuffer();
      if (res.status !== 302) throw new Error(`status ${res.status}, expected 302`);
    }
  };
  const start = process.cpuUsage();
  await Promise.all(Array.from({ length: 32 }, worker));
  await flush();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / requests;
}

export async function rulesBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const { sql } = db;
  const paths = await seed(sql);
  const rows: Row[] = [];

  const config = resolveConfig({
    DATABASE_URL: "postgres://bench",
    ADMIN_TOKEN,
    LINK_BASE_URL: "https://lnk.example.test",
  });
  const logger = createLogger("info", benchLogWriter());
  const views = new ViewRecorder(sql, {
    clock: systemClock,
    linkBaseUrl: config.linkBaseUrl,
    logger,
  });
  const app = createApp({
    sql,
    config,
    clock: systemClock,
    logger,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    cursorSecret: CURSOR_SECRET,
    views,
  });
  const fetch = (req: Request) => app.fetch(req);
  const flush = () => views.flush();
  const requests = 4000;
  // Warm-up: JIT, the compiled rules, the pool's connections.
  for (const path of [paths.plain, paths.ruled]) await cpuPerRedirect(fetch, flush, path, requests);
  const plain: number[] = [];
  const ruled: number[] = [];
  for (let round = 0; round < 8; round++) {
    // Which goes first alternates (ABBA), so a drift of the load favours neither.
    if (round % 2 === 0) {
      plain.push(await cpuPerRedirect(fetch, flush, paths.plain, requests));
      ruled.push(await cpuPerRedirect(fetch, flush, paths.ruled, requests));
    } else {
      ruled.push(await cpuPerRedirect(fetch, flush, paths.ruled, requests));
      plain.push(await cpuPerRedirect(fetch, flush, paths.plain, requests));
    }
  }
  // Each round's pair shares the machine's load of its moment: their ratio cancels its drift.
  const pairs = ruled.map((r, i) => r / plain[i]!);
  const cpuRatio = median(pairs);
  rows.push({
    name: "redirect, 10 rules + 3-way split vs plain link: CPU per redirect (in process)",
    figure: `${fmt(median(ruled), 1)} µs vs ${fmt(median(plain), 1)} µs; per pair ${
      pairs.map((p) => fmt(p, 2)).join(", ")
    }; median ${fmt(cpuRatio, 2)}×`,
    target: "≤ 1.10×",
    outcome: judge(cpuRatio <= 1.1, notFinite({ ratio: cpuRatio })),
  });

  const service = serveService(sql);
  try {
    const run = (path: string) => () =>
      wrk(`${service.url}/${path}`, {
        connections: 32,
        seconds,
        headers: HEADERS,
        expect: { status: 302 },
      });
    const throughput = await compare(run(paths.ruled), run(paths.plain), 4);
    rows.push({
      name: "redirect, 10 rules + 3-way split vs plain link (wrk -c32)",
      figure: `${fmt(throughput.service.rps, 0)} req/s vs ${fmt(throughput.baseline.rps, 0)} = ${
        fmt(throughput.ratio, 2)
      }×; p50 ${fmt(throughput.service.p50ms, 2)} ms vs ${fmt(throughput.baseline.p50ms, 2)} ms`,
      target: "≥ 0.90× (within noise)",
      outcome: judge(throughput.ratio >= 0.9, [
        ...throughput.problems,
        ...notFinite({ ratio: throughput.ratio }),
      ]),
    });
  } finally {
    await service.close();
  }
  return rows;
}
