// The feed's query parameters as REST sends them, turned into the values services/feed/feed.ts takes.

/**
 * `limit` as a number: undefined when absent, NaN when it is not a plain decimal (the feed
 * service answers that with 400 invalid_limit, after the checks that come first).
 */
export function limitParam(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  return /^[0-9]{1,7}$/.test(raw) ? Number(raw) : NaN;
}
