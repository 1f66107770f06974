// Request headers both transports read (REST and GraphQL): parsed here, so services take values.

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1] ?? null;
}

/** What clientAddress reads of a request: Hono's Context fits it. */
export interface AddressedRequest {
  req: { header(name: string): string | undefined };
  /** Deno.serve hands its ServeHandlerInfo to app.fetch as Hono's env. */
  env: unknown;
}

/**
 * The client's address: the connection's, or, behind the one trusted proxy (TRUST_PROXY), the
 * last entry of X-Forwarded-For, the one that proxy appended (a client can write the earlier
 * ones). Without TRUST_PROXY the header is ignored, since any client could set it.
 */
export function clientAddress(c: AddressedRequest, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = c.req.header("X-Forwarded-For")?.split(",").map((s) => s.trim()).at(-1);
    if (forwarded) return forwarded.slice(0, 100);
  }
  const info = c.env as { remoteAddr?: { hostname?: string } } | undefined;
  return info?.remoteAddr?.hostname ?? "unknown";
}
