// Composition root: read config, open the database, build the app, serve, shut down cleanly.
import { ADMIN_TOKEN_ADVICE, adminTokenWeakness, ConfigError, readConfig } from "./config.ts";
import { APPLICATION_NAME, connect, openDatabase } from "./db/connect.ts";
import {
  surviveClosedConnectionWrites,
  surviveLostConnectionRejections,
} from "./db/closed_write.ts";
import { createApp } from "./app.ts";
import { internalRoutes } from "./rest/internal.ts";
import { resolveAdminToken } from "./services/access/admin_token.ts";
import { defaultHostOwnerProblem } from "./services/link_host/apps.ts";
import { systemClock } from "./infra/clock.ts";
import { DeliveryWorker, sealMigratedSecrets } from "./services/destinations/delivery.ts";
import { startFeedWakeup } from "./services/feed/wakeup.ts";
import { GeoIpDatabase, GeoIpError, watchGeoIp } from "./services/link_host/geoip.ts";
import { maintainPartitions, startBackgroundJobs } from "./services/maintenance/jobs.ts";
import { untilDatabaseAnswers } from "./services/maintenance/wait_for_database.ts";
import { LiveTails } from "./services/feed/live_tail.ts";
import { createLogger, describeError, installFlushOnExit, stdoutLines } from "./infra/log.ts";
import { resolveCursorSecret } from "./infra/settings.ts";
import { ViewRecorder } from "./services/link_host/view_recorder.ts";

function fail(message: string): never {
  // deno-lint-ignore no-console
  console.error(message);
  Deno.exit(1);
}

let config;
try {
  config = readConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
  throw err;
}

const logger = createLogger(config.logLevel, stdoutLines.write);
installFlushOnExit(stdoutLines);
// A known postgres.js crash when the database drops a connection (db/closed_write.ts).
surviveClosedConnectionWrites(() =>
  logger.warn("database connection closed during a write; postgres.js reconnects", {})
);
surviveLostConnectionRejections((reason) =>
  logger.error("a query nobody awaited failed: its database connection was lost", {
    ...describeError(reason),
  })
);
// Before the database: a GEOIP_DATABASE that cannot be used stops start-up, saying why.
let geoip: GeoIpDatabase | null = null;
if (config.geoipDatabase) {
  try {
    geoip = new GeoIpDatabase(config.geoipDatabase);
  } catch (err) {
    if (err instanceof GeoIpError) fail(`configuration error: GEOIP_DATABASE: ${err.message}`);
    throw err;
  }
  logger.info("geoip database loaded", {
    type: geoip.metadata.databaseType,
    built: geoip.metadata.builtAt.toISOString(),
  });
}
const geoipWatch = geoip ? watchGeoIp(geoip, logger) : null;

// Each step of start-up that needs the database runs again while the database is unavailable
// (starting, restarting, dropping connections), for a while (services/maintenance/
// wait_for_database.ts): an instance started beside its database, or during a failover, waits.
const whenAnswering = <T>(what: string, step: () => Promise<T>) =>
  untilDatabaseAnswers(what, step, { logger });

// A weak ADMIN_TOKEN (config.ts, adminTokenWeakness): a new instance refuses it before its
// database is set up; one already set up keeps starting with it, and says what to do.
const weakAdminToken = config.adminToken ? adminTokenWeakness(config.adminToken) : null;
const db = await whenAnswering("migrations", () =>
  openDatabase(config, {
    beforeFirstMigration() {
      if (weakAdminToken) {
        throw new ConfigError(
          `ADMIN_TOKEN: too weak for a new instance: it ${weakAdminToken}; ${ADMIN_TOKEN_ADVICE}`,
        );
      }
    },
  })).catch((err) => {
    if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
    logger.error("database unavailable", describeError(err));
    fail(`cannot open the database: ${err instanceof Error ? err.message : err}`);
  });

const admin = await whenAnswering(
  "admin token",
  () => resolveAdminToken(db.sql, config.adminToken),
);
if (admin.generated) {
  // Shown once, outside the JSON log: only its digest is kept.
  // deno-lint-ignore no-console
  console.error(
    `\nGenerated admin token (shown only this once, keep it safe):\n\n  ${admin.generated}\n\n` +
      `Sign in to the dashboard with it (/dashboard). To give a person an account of their own:\n\n` +
      `  curl -X POST http://localhost:${config.port}/api/v1/admin/accounts \\\n` +
      `    -H "Authorization: Bearer <admin token>" -H 'Content-Type: application/json' \\\n` +
      `    -d '{"email": "ada@example.com", "name": "Ada"}'\n\n` +
      `and send them the setup_url of the answer (valid 7 days); then add them to a project.\n` +
      `docs/access.md has the roles, API keys and the audit log.\n`,
  );
}

if (weakAdminToken) {
  const advice = `set ADMIN_TOKEN to a strong token (${
    ADMIN_TOKEN_ADVICE.replace("generate one with ", "")
  }) on every instance and restart them; sessions signed in with the old token then end`;
  logger.error("ADMIN_TOKEN is weak", { problem: `it ${weakAdminToken}`, advice });
  // Beside the JSON log, where a person starting the service sees it.
  // deno-lint-ignore no-console
  console.error(
    `\nWARNING: ADMIN_TOKEN is weak: it ${weakAdminToken}.\n` +
      `A new instance would refuse it; this one was set up before the rule, so it starts.\n` +
      `To fix: ${advice}.\n`,
  );
}

if (config.defaultHostAppsProject) {
  const project = config.defaultHostAppsProject;
  const problem = await whenAnswering(
    "DEFAULT_HOST_APPS_PROJECT",
    () => defaultHostOwnerProblem(db.sql, project),
  );
  if (problem) logger.warn(`DEFAULT_HOST_APPS_PROJECT ${problem}`, {});
}

const deps = {
  sql: db.sql,
  config,
  clock: systemClock,
  logger,
  adminTokenHash: admin.hash,
  cursorSecret: await whenAnswering(
    "cursor secret",
    () => resolveCursorSecret(db.sql, config.cursorSecret),
  ),
  views: new ViewRecorder(db.sql, { clock: systemClock, linkBaseUrl: config.linkBaseUrl, logger }),
  geoip,
};
// Today's history partitions before the first event (a fresh install has none); then the job.
await maintainPartitions(deps);
const jobs = startBackgroundJobs(deps);
// Push destinations and live tails: woken by the capturing transactions' NOTIFY on PostgreSQL;
// the embedded database cannot deliver notifications (services/feed/wakeup.ts), so there they
// poll 4× a second.
const wakeup = await startFeedWakeup(db.embedded ? null : db.sql, logger);
const liveTails = new LiveTails(deps, { wakeup, pollMs: db.embedded ? 250 : 1_000 });
const app = createApp({ ...deps, liveTails });
await whenAnswering("destination secrets", () => sealMigratedSecrets(db.sql, deps.cursorSecret));
// The deliverer records each delivered batch on a pool of its own whose commits do not wait for
// the disk (services/destinations/delivery.ts, `records`, says what that can and cannot lose).
// The embedded database serves one connection: it records on the main pool.
const deliveryRecords = db.embedded ? undefined : connect(db.url, 4, { synchronous_commit: "off" });
const delivery = new DeliveryWorker(
  { ...deps, records: deliveryRecords },
  { wakeup, pollMs: db.embedded ? 250 : 1_000 },
);
delivery.start();

const server = Deno.serve({
  port: config.port,
  onListen: ({ hostname, port }) =>
    logger.info("listening", {
      url: `http://${hostname === "0.0.0.0" ? "localhost" : hostname}:${port}`,
      database: db.embedded ? `embedded (${config.dataDir})` : "postgresql",
    }),
}, app.fetch);

// The internal listener (rest/internal.ts), on METRICS_PORT when set: never the public port.
const internal = config.metricsPort === null ? null : Deno.serve(
  {
    port: config.metricsPort,
    onListen: ({ port }) => logger.info("internal listener", { port }),
  },
  internalRoutes({
    ...deps,
    liveTails,
    database: {
      embedded: db.embedded,
      poolMax: db.poolMax,
      applicationName: db.embedded ? null : APPLICATION_NAME,
    },
  }).fetch,
);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info("shutting down", { signal });
  // Open live streams end first: a graceful shutdown waits for every response to finish.
  await liveTails.close();
  await server.shutdown();
  await internal?.shutdown();
  await deps.views.flush(5_000);
  await jobs.stop();
  geoipWatch?.stop();
  await delivery.stop();
  await deliveryRecords?.end({ timeout: 5 });
  await wakeup.close();
  await db.close();
  Deno.exit(0);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => void shutdown(signal));
}
