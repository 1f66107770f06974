// Request headers both transports read (REST and GraphQL): parsed here, so services take values.

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1] ?? null;
}

/**
 * What the app's frame (rest/frame.ts) hands every route of every transport as Hono's `c.env`:
 * the request's id and, served by Deno.serve, the connection's address.
 */
export interface RequestBindings {
  requestId: string;
  remoteAddr?: Deno.Addr;
}

/** What clientAddress reads of a request: Hono's Context fits it. */
export interface AddressedRequest {
  req: { header(name: string): string | undefined };
  env: Pick<RequestBindings, "remoteAddr"> | undefined;
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
  const addr = c.env?.remoteAddr;
  return addr && "hostname" in addr ? addr.hostname : "unknown";
}

/** The value of the cookie `name` in a Cookie header (the first, as browsers send it), if any. */
export function cookieValue(header: string | null | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return value.startsWith('"') && value.endsWith('"') && value.length >= 2
        ? value.slice(1, -1)
        : value;
    }
  }
  return undefined;
}

/**
 * Whether another site made the browser send this request: its Origin names another host than
 * the one it was sent to (or is "null"), or, from a browser that sends no Origin, Sec-Fetch-Site
 * says cross-site. A request with neither comes from outside a browser, where a synchronizer
 * token is the check that matters. The host it was sent to is the Host header's (the request
 * URL's when there is none): behind a proxy, the host the browser asked for.
 */
export function isCrossSite(
  header: (name: string) => string | null | undefined,
  url: string,
): boolean {
  const origin = header("Origin");
  if (origin != null) {
    if (origin === "null") return true;
    try {
      return new URL(origin).host !== (header("Host") ?? new URL(url).host);
    } catch {
      return true;
    }
  }
  const site = header("Sec-Fetch-Site");
  return site != null && site !== "same-origin" && site !== "none";
}
