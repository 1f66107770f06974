/** Hono's per-request variables, shared by the REST route modules. */
export interface AppEnv {
  Variables: { requestId: string };
}
