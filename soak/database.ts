// The soak's own queries on the database under test. Each opens a connection of its own and
// closes it after: the soak terminates every connection of that database once, and a pooled
// connection caught by it can leave postgres.js with a write that never settles (see
// porsager/postgres#1208); a query that does not answer in time fails instead of hanging.
import postgres from "postgres";

export async function withConnection<T>(
  url: string,
  run: (sql: postgres.Sql) => Promise<T>,
  timeoutMs = 20_000,
): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      run(sql),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}
