// What every command-line tool does first: read the configuration as the server does (without
// requiring ADMIN_TOKEN, which no tool needs), and open the database with one connection. A
// problem with either ends the tool with one line on stderr and exit status 2.
import { type Config, ConfigError, readConfig } from "../config.ts";
import { type Database, openDatabase } from "../db/connect.ts";

/** One line on stderr, then exit status `code` (2: the tool could not do what it was asked). */
export function fail(message: string, code = 2): never {
  // deno-lint-ignore no-console
  console.error(message);
  Deno.exit(code);
}

export function toolConfig(): Config {
  try {
    return readConfig({ requireAdminToken: false });
  } catch (err) {
    if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
    throw err;
  }
}

/** The configured database (migrated, as the server would at start), on one connection. */
export async function openToolDatabase(config: Config = toolConfig()): Promise<Database> {
  return await openDatabase(config, { max: 1 }).catch((err) =>
    fail(`cannot open the database: ${err instanceof Error ? err.message : err}`)
  );
}
