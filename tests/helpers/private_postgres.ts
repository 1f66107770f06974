// A PostgreSQL server of a test's own, from the machine's PostgreSQL binaries: for faults a
// shared server must not suffer (a crash, `pg_ctl stop -m immediate`). Run as the `postgres`
// user when the tests run as root (initdb refuses root).
import { freePort } from "./server.ts";

export interface PrivatePostgres {
  /** Its `postgres` database. */
  url: string;
  /** Stops it as a crash does: no shutdown checkpoint, WAL not yet flushed is lost. */
  crash(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its files. */
  remove(): Promise<void>;
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed: ${text}`);
  return text;
}

async function binDir(): Promise<string> {
  try {
    return (await run("pg_config", ["--bindir"])).trim();
  } catch {
    return FALLBACK_BIN;
  }
}

const FALLBACK_BIN = "/usr/lib/postgresql/15/bin";
const exists = (path: string) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
};
/** runuser wherever the distribution keeps it (a PATH without the sbin directories misses it). */
const RUNUSER = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].find(exists) ??
  "runuser";

/**
 * Whether this machine has PostgreSQL's server binaries (initdb, pg_ctl): where only Node.js is
 * installed (the README's test command on a fresh machine), tests that need a server of their
 * own are ignored, as every test that needs DATABASE_URL's server is without it.
 */
export function hasPostgresBinaries(): boolean {
  if (exists(`${FALLBACK_BIN}/initdb`)) return true;
  try {
    const out = new Deno.Command("pg_config", {
      args: ["--bindir"],
      stdout: "piped",
      stderr: "null",
    })
      .outputSync();
    return out.success && exists(`${new TextDecoder().decode(out.stdout).trim()}/initdb`);
  } catch {
    return false;
  }
}

/** initdb, then start with `settings` (postgresql.conf lines) on a free loopback port. */
export async function startPrivatePostgres(
  settings: Record<string, string> = {},
): Promise<PrivatePostgres> {
  const bin = await binDir();
  const dir = await Deno.makeTempDir({ prefix: "private-pg-" });
  const asRoot = (await run("id", ["-u"])).trim() === "0";
  const as = async (cmd: string, args: string[]) =>
    asRoot ? await run(RUNUSER, ["-u", "postgres", "--", cmd, ...args]) : await run(cmd, args);
  if (asRoot) await run("chown", ["postgres:postgres", dir]);
  const data = `${dir}/data`;
  await as(`${bin}/initdb`, ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const port = freePort();
  const conf = Object.entries({ listen_addresses: "'127.0.0.1'", port: String(port), ...settings })
    .map(([k, v]) => `${k} = ${v}`).join("\n");
  await as("sh", ["-c", `printf '%s\\n' "${conf}" >> '${data}/postgresql.conf'`]);
  const start = () =>
    as(`${bin}/pg_ctl`, ["-D", data, "-o", `-k ${dir}`, "-l", `${dir}/log`, "-w", "start"]);
  const stop = (mode: string) => as(`${bin}/pg_ctl`, ["-D", data, "-m", mode, "-w", "stop"]);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    crash: async () => void await stop("immediate"),
    start: async () => void await start(),
    async remove() {
      await stop("immediate").catch(() => {});
      await Deno.remove(dir, { recursive: true });
    },
  };
}
