import type { Principal } from "../services/access/principal.ts";
import type { Clock } from "../infra/clock.ts";

/** Hono's per-request variables, shared by the REST route modules. */
export interface AppEnv {
  /**
   * `principal`: who the admin routes' guard (rest/access.ts) let in; `clock`: the service's
   * clock, which dates the audit entries of the request's changes.
   */
  Variables: { requestId: string; principal: Principal; clock: Clock };
}
