// `deno task routes`: the app's route table, in the order Hono matches it: every request is
// answered by the first route whose method and path match (app.ts composes it from the
// transports' route modules), or by the link host's 404. Nothing is served or opened: the app is
// built over a pool that never connects.
import { resolveConfig } from "../config.ts";
import { createApp } from "../app.ts";
import { connect } from "../db/connect.ts";
import { systemClock } from "../infra/clock.ts";
import { createLogger } from "../infra/log.ts";
import { ViewRecorder } from "../services/link_host/view_recorder.ts";

const config = resolveConfig({
  DATABASE_URL: "postgres://routes.invalid/none",
  ADMIN_TOKEN: "route-table-only-not-a-real-admin-token",
});
const sql = connect(config.databaseUrl!, 1);
const logger = createLogger("error", () => {});
const app = createApp({
  sql,
  config,
  clock: systemClock,
  logger,
  adminTokenHash: "",
  cursorSecret: "route-table-only-not-a-real-cursor-secret",
  views: new ViewRecorder(sql, { clock: systemClock, linkBaseUrl: config.linkBaseUrl, logger }),
});
const seen = new Set<string>();
const lines: string[] = [];
for (const r of app.routes) {
  // Hono lists a route once per handler; a route's middleware is listed as ALL on a wildcard.
  const line = `${r.method.padEnd(7)}${r.path}`;
  if (seen.has(line)) continue;
  seen.add(line);
  lines.push(line);
}
// deno-lint-ignore no-console
console.log(lines.join("\n"));
await sql.end({ timeout: 1 });
