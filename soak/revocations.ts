// Token revocations: a new token is created, read with once, revoked, and then presented to
// every live instance right after the revoke answered: each must refuse it with 401 (the token
// is read fresh on every request, docs/admin-api.md), on the pull feed and on the live tail.
import { ConnectionFailed, errorCode } from "./cluster.ts";
import { adminHeaders, feedPath, retryAfterMs, sleep, type SoakContext } from "./context.ts";

export interface RevocationLog {
  revoked: number;
  /** Reads with a revoked token, by the status they got (401 is the only right one). */
  afterRevoke: Map<number, number>;
  /** Reads with a revoked token that were not refused with 401: instance, status, delay. */
  leaks: { instance: number; status: number; msAfterRevoke: number; route: string }[];
  /** Instances that were down when a check ran (not checked then). */
  skippedDown: number;
  /** A fresh token's first read did not answer 200 (status → count). */
  firstReadNot200: Map<number, number>;
}

export function newRevocationLog(): RevocationLog {
  return {
    revoked: 0,
    afterRevoke: new Map(),
    leaks: [],
    skippedDown: 0,
    firstReadNot200: new Map(),
  };
}

/** Sends until an instance answers (idempotent requests only), backing off on 503. */
async function answered(
  ctx: SoakContext,
  label: string,
  path: string,
  init: RequestInit,
  stop?: AbortSignal,
): Promise<{ status: number; text: string } | null> {
  for (let attempt = 0; attempt < 50 && !stop?.aborted; attempt++) {
    try {
      const a = await ctx.cluster.request(label, path, init);
      if (a.status !== 503) return a;
      await sleep(retryAfterMs(a.headers));
    } catch (err) {
      if (!(err instanceof ConnectionFailed)) throw err;
      await sleep(200);
    }
  }
  return null;
}

/** Creates a token; an unclear creation leaves a token nobody knows (harmless): try again. */
async function createToken(
  ctx: SoakContext,
  name: string,
  stop: AbortSignal,
): Promise<{ id: number; value: string } | null> {
  while (!stop.aborted) {
    try {
      const a = await ctx.cluster.request(
        "revocation: create",
        `/api/v1/projects/${ctx.envId}/event_stream_tokens`,
        { method: "POST", headers: adminHeaders(ctx), body: JSON.stringify({ name }) },
      );
      if (a.status === 201) {
        return (JSON.parse(a.text) as { token: { id: number; value: string } }).token;
      }
      await sleep(a.status === 503 ? retryAfterMs(a.headers) : 1000, stop);
    } catch (err) {
      if (!(err instanceof ConnectionFailed)) throw err;
      await sleep(200, stop);
    }
  }
  return null;
}

export async function runRevocations(
  ctx: SoakContext,
  everyMs: number,
  stop: AbortSignal,
  log: RevocationLog,
): Promise<void> {
  let n = 0;
  while (!stop.aborted) {
    await revokeOne(ctx, `${ctx.runTag}-revoked-${n++}`, log, stop);
    await sleep(everyMs, stop);
  }
}

async function revokeOne(
  ctx: SoakContext,
  name: string,
  log: RevocationLog,
  stop: AbortSignal,
): Promise<void> {
  const token = await createToken(ctx, name, stop);
  if (!token) return;
  const auth = { Authorization: `Bearer ${token.value}` };
  const first = await answered(ctx, "revocation: first read", feedPath(ctx, { limit: "1" }), {
    headers: auth,
  });
  if (first && first.status !== 200) {
    log.firstReadNot200.set(first.status, (log.firstReadNot200.get(first.status) ?? 0) + 1);
  }
  // DELETE is idempotent in effect: after a lost answer, the second one is a 404.
  const deleted = await answered(
    ctx,
    "revocation: revoke",
    `/api/v1/projects/${ctx.envId}/event_stream_tokens/${token.id}`,
    { method: "DELETE", headers: adminHeaders(ctx) },
  );
  if (!deleted || (deleted.status !== 204 && deleted.status !== 404)) return;
  const revokedAt = Date.now();
  log.revoked++;
  // Right away, on every live instance at once: the pull feed and the live tail.
  await Promise.all(ctx.cluster.instances.flatMap((inst) =>
    [
      ["feed", feedPath(ctx, { limit: "1" })],
      ["live", `/api/v1/projects/${ctx.envId}/event_stream/live`],
    ].map(async ([route, path]) => {
      for (let attempt = 0; attempt < 20; attempt++) {
        if (inst.url === null) {
          log.skippedDown++;
          return;
        }
        let status: number;
        try {
          const a = await ctx.cluster.request(`revocation: ${route} after revoke`, path!, {
            headers: { ...auth, Accept: "text/event-stream" },
          }, { instance: inst.index });
          status = a.status;
          if (status === 503 && errorCode(a.text) === "unavailable") {
            // The database is away: not an answer about the token; ask again.
            await sleep(retryAfterMs(a.headers));
            continue;
          }
        } catch (err) {
          if (!(err instanceof ConnectionFailed)) throw err;
          log.skippedDown++;
          return;
        }
        log.afterRevoke.set(status, (log.afterRevoke.get(status) ?? 0) + 1);
        if (status !== 401) {
          log.leaks.push({
            instance: inst.index,
            status,
            msAfterRevoke: Date.now() - revokedAt,
            route: route!,
          });
        }
        return;
      }
    })
  ));
}
