import type { Principal } from "../services/access/principal.ts";

/** Hono's per-request variables, shared by the REST route modules. */
export interface AppEnv {
  /** `principal`: who the admin routes' guard (rest/access.ts) let in. */
  Variables: { requestId: string; principal: Principal };
}
