// The MCP server's cost (rest/mcp.ts): the same read, a page of 50 links, as the tool list_links
// through POST /mcp and as REST's GET /api/v1/projects/:project_id/links, with the same `sk_` key
// through the same service in the same run. Stateless MCP builds an SDK server and transport for
// each request, checks its JSON-RPC message and answers the links twice (structured and as
// text): this row says what that costs. Reported, without a target.
import { createApiKey } from "../services/access/api_keys.ts";
import { CLI_AUDIT } from "../services/access/audit.ts";
import { ADMIN_TOKEN_PRINCIPAL } from "../services/access/principal.ts";
import { systemClock } from "../infra/clock.ts";
import { createManagedLink } from "../services/links/manage.ts";
import { createProject } from "../services/projects/projects.ts";
import { type BenchDatabase, compare, fmt, postJson, serveService, wrk } from "./lib.ts";
import { notFinite, report, type Row } from "./rows.ts";

export async function mcpBenchmarks(db: BenchDatabase, seconds: number): Promise<Row[]> {
  const { sql } = db;
  const { project } = await createProject(sql, { name: "mcp", enterprise: true }, CLI_AUDIT);
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
  const auth = { Authorization: `Bearer ${key.value}` };
  const call = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "list_links", arguments: { limit: 50 } },
  });
  try {
    const list = await compare(
      () =>
        wrk(`${service.url}/mcp`, {
          connections: 8,
          seconds,
          headers: { ...auth, Accept: "application/json, text/event-stream" },
          lua: postJson(call),
          // Every answer must be the tool's result, not a tool error that happens to be fast.
          expect: {
            status: 200,
            bodyPrefix: '{"result":{"content":[{"type":"text","text":"50 links:',
            bodyExcludes: ['"isError":true'],
          },
        }),
      () =>
        wrk(`${service.url}/api/v1/projects/${envId}/links?limit=50`, {
          connections: 8,
          seconds,
          headers: auth,
          expect: { status: 200, bodyPrefix: '{"links":[{' },
        }),
    );
    const ratio = list.service.p50ms / list.baseline.p50ms;
    return [{
      name: "list 50 links: MCP tools/call list_links vs REST GET (p50, -c8)",
      figure: `${fmt(list.service.p50ms, 2)} ms vs ${fmt(list.baseline.p50ms, 2)} ms: ${
        fmt(ratio, 2)
      }× (${fmt(list.service.rps, 0)} vs ${fmt(list.baseline.rps, 0)} req/s)`,
      target: "reported",
      outcome: report([...list.problems, ...notFinite({ ratio })]),
    }];
  } finally {
    await service.close();
  }
}
