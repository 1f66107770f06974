// Request headers both transports read (REST and GraphQL): parsed here, so services take values.

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1] ?? null;
}
