// Where the driver connects for a DATABASE_URL.

/**
 * The driver's URL and options for a DATABASE_URL. `?host=/dir` names a Unix-socket directory,
 * as libpq reads it (postgres://user@localhost/db?host=/var/run/postgresql); postgres.js takes
 * the socket as `path` and would otherwise send `host` to the server as a setting.
 */
export function driverTarget(url: string): { url: string; path?: string } {
  const u = new URL(url);
  const dir = u.searchParams.get("host");
  if (dir === null || !dir.startsWith("/")) return { url };
  u.searchParams.delete("host");
  return { url: u.toString(), path: `${dir.replace(/\/+$/, "")}/.s.PGSQL.${u.port || "5432"}` };
}
