// Issue 22's figure: an admin read (list links) with an `sk_` API key against the same read with
// the admin token, through the same service in the same run: p50 within 1.1×.
import { createApiKey } from "../services/access/api_keys.ts";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { ADMIN_TOKEN_PRINCIPAL } from "../services/access/principal.ts";
import { systemClock } from "../infra/clock.ts";
import { createManagedLink } from "../services/links/manage.ts";
import { createProject } from "../services/projects/projects.ts";
import { ADMIN_TOKEN, type BenchDatabase, compare, fmt, serveService, wrk } from "./lib.ts";
import { judge, notFinite, type Row } from "./rows.ts";

export async function accessBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const { sql } = db;
  const { project } = await createProject(sql, { name: "access", enterprise: true }, CLI_AUDIT);
  const envId = String(project.environments.production.project_id);
  for (let i = 0; i < 200; i++) {
    await createManagedLink(
      sql,
      envId,
      { title: `Link ${i}`, tags: ["bench"] },
      "dashboard",
      CLI_AUDIT,
    );
  }
  const key = await createApiKey(sql, systemClock, ADMIN_TOKEN_PRINCIPAL, envId, {
    name: "bench",
    scopes: ["links:read"],
    expires_at: null,
  }, CLI_AUDIT);
  const service = serveService(sql);
  const url = `${service.url}/api/v1/projects/${envId}/links`;
  try {
    // Every answer must be a page of links, not an error that happens to be fast.
    const expect = { status: 200, bodyPrefix: '{"links":[{' };
    const list = await compare(
      () =>
        wrk(url, {
          connections: 8,
          seconds,
          headers: { Authorization: `Bearer ${key.value}` },
          expect,
        }),
      () =>
        wrk(url, {
          connections: 8,
          seconds,
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
          expect,
        }),
    );
    const ratio = list.service.p50ms / list.baseline.p50ms;
    return [{
      name: "admin list links, sk_ key vs admin token (p50)",
      figure: `${fmt(list.service.p50ms, 2)} ms vs ${fmt(list.baseline.p50ms, 2)} ms: ${
        fmt(ratio, 2)
      }×`,
      target: "≤ 1.1×",
      outcome: judge(ratio <= 1.1, [...list.problems, ...notFinite({ ratio })]),
    }];
  } finally {
    await service.close();
  }
}
