// deno task admin <command> [options]: a self-hoster's first steps without curl. It opens the
// configured database itself and calls the same services as the HTTP admin API.
import { CLI_AUDIT } from "../services/access/audit.ts";
import { parseArgs } from "node:util";
import { fail, openToolDatabase, toolConfig } from "./open.ts";
import { systemClock } from "../infra/clock.ts";
import { ApiError } from "../services/errors.ts";
import { createFeedToken, listFeedTokens, revokeFeedToken } from "../services/feed/tokens.ts";
import { createProject, updateProject } from "../services/projects/projects.ts";
import { projectSettings } from "../inputs/project_settings.ts";
import { fieldPath } from "../services/errors.ts";

const USAGE = `usage: deno task admin <command> [options]

commands:
  create-project --name NAME [--enterprise]    create a project (prints its key once)
  set-enterprise --project HASHID --on|--off   grant or withdraw Enterprise access
  set-link-domain --project HASHID --domain HOST|--none
                                               serve the project's links on HOST (or on
                                               LINK_BASE_URL's host again)
  set-apps --project HASHID [--ios JSON] [--android JSON]
                                               the project's apps ('null' removes one), e.g.
    --ios '{"team_id":"ABCDE12345","bundle_id":"com.acme.app","app_store_id":"123","scheme":"acme"}'
    --android '{"package":"com.acme.app","sha256_cert_fingerprints":["14:6D:…"],"scheme":"acme"}'
  create-token --project-id ID --name NAME     create a feed token (prints its value once)
  list-tokens --project-id ID                  list active feed tokens
  revoke-token --project-id ID --token-id ID   revoke a feed token

The database is the server's: DATABASE_URL, or the embedded one in DATA_DIR (stop the server
first; PGlite serves one process).`;

// deno-lint-ignore no-console
const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

// `deno task admin -- …` hands the literal `--` on to the script.
const argv = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
const { values, positionals } = parseArgs({
  args: argv,
  allowPositionals: true,
  strict: false,
  options: {
    name: { type: "string" },
    enterprise: { type: "boolean" },
    project: { type: "string" },
    "project-id": { type: "string" },
    "token-id": { type: "string" },
    on: { type: "boolean" },
    off: { type: "boolean" },
    domain: { type: "string" },
    none: { type: "boolean" },
    ios: { type: "string" },
    android: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
const command = positionals[0];
if (!command || values.help) fail(USAGE);

function need(option: string): string {
  const v = values[option];
  if (typeof v !== "string" || v === "") fail(`${command}: --${option} is required\n\n${USAGE}`);
  return v;
}

const config = toolConfig();
const db = await openToolDatabase(config);
try {
  switch (command) {
    case "create-project": {
      const { project, projectKey } = await createProject(db.sql, {
        name: need("name"),
        enterprise: values.enterprise === true,
      }, CLI_AUDIT);
      print({ project: { ...project, project_key: projectKey } });
      break;
    }
    case "set-enterprise": {
      if (values.on === values.off) fail("set-enterprise: give exactly one of --on and --off");
      print({
        project: await updateProject(
          db.sql,
          need("project"),
          { enterprise: values.on === true },
          CLI_AUDIT,
        ),
      });
      break;
    }
    case "set-link-domain":
    case "set-apps": {
      let raw: Record<string, unknown>;
      if (command === "set-link-domain") {
        if ((values.domain === undefined) === (values.none !== true)) {
          fail("set-link-domain: give exactly one of --domain HOST and --none");
        }
        raw = { link_domain: values.none === true ? null : values.domain };
      } else {
        const apps: Record<string, unknown> = {};
        for (const platform of ["ios", "android"] as const) {
          const v = values[platform];
          if (typeof v !== "string") continue;
          try {
            apps[platform] = JSON.parse(v);
          } catch {
            fail(`set-apps: --${platform} is not JSON`);
          }
        }
        if (Object.keys(apps).length === 0) fail("set-apps: give --ios and/or --android");
        raw = { apps };
      }
      const parsed = projectSettings.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        fail(`${command}: ${fieldPath(issue.path)}: ${issue.message}`);
      }
      print({
        project: await updateProject(db.sql, need("project"), parsed.data, CLI_AUDIT, {
          defaultHost: new URL(config.linkBaseUrl).hostname,
        }),
      });
      break;
    }
    case "create-token":
      print({
        token: await createFeedToken(
          db.sql,
          systemClock,
          need("project-id"),
          need("name"),
          CLI_AUDIT,
        ),
      });
      break;
    case "list-tokens":
      print({ tokens: await listFeedTokens(db.sql, need("project-id")) });
      break;
    case "revoke-token":
      await revokeFeedToken(
        db.sql,
        systemClock,
        need("project-id"),
        need("token-id"),
        CLI_AUDIT,
      );
      print({ revoked: Number(need("token-id")) });
      break;
    default:
      fail(`unknown command: ${command}\n\n${USAGE}`);
  }
} catch (err) {
  if (err instanceof ApiError) {
    await db.close();
    fail(`${command}: ${err.message} (${err.code})`);
  }
  throw err;
} finally {
  await db.close();
}
