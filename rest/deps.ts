import type { Principal } from "../services/access/principal.ts";
import type { Clock } from "../infra/clock.ts";
import type { RequestBindings } from "../inputs/headers.ts";

/** Hono's environment of the REST, GraphQL and dashboard routes. */
export interface AppEnv {
  Bindings: RequestBindings;
  /**
   * `principal`: who the admin routes' guard (rest/access.ts) let in; `clock`: the service's
   * clock, which dates the audit entries of the request's changes.
   */
  Variables: { principal: Principal; clock: Clock };
}
