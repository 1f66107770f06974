// The one place that reads the environment. Everything else receives a resolved Config.
import { createHash } from "node:crypto";
import { parse } from "graphql";
import { z } from "zod";
import { MAX_SECRET_LENGTH } from "./infra/secrets.ts";

export interface Config {
  port: number;
  /**
   * The internal listener (rest/internal.ts: Prometheus metrics at /metrics, and the reverse
   * proxy's on-demand TLS check at /internal/tls/allowed), on all interfaces; null: not served.
   */
  metricsPort: number | null;
  /** Set: use this PostgreSQL. Unset: run the embedded PGlite in `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  /** Unset is only allowed with the embedded database (a token is then generated once). */
  adminToken: string | null;
  /** Unset: a secret is generated once and kept in the database, shared by every instance. */
  cursorSecret: string | null;
  linkBaseUrl: string;
  analyticsRetentionDays: number;
  /** How long the analytics rollups (what analytics queries read) are kept, in days. */
  analyticsRollupDays: number;
  /**
   * Days a dashboard session lasts at most from its sign-in, however busy it is kept
   * (services/access/sessions.ts); it also ends after 12 hours without a request.
   */
  dashboardSessionMaxDays: number;
  /** Feed reads admitted per token in any 60 s window; the contract's 120, raised only for load tests. */
  feedRateLimit: number;
  logLevel: "debug" | "info" | "warn" | "error";
  /** GraphQL introspection (frontend teams generate types from it); off only by choice. */
  graphqlIntrospection: boolean;
  /**
   * GraphQL's trusted documents by their SHA-256 (hex), read from the file
   * GRAPHQL_TRUSTED_DOCUMENTS names: when set, only these documents run. Null: any document
   * runs, and automatic persisted queries register them.
   */
  graphqlTrustedDocuments: ReadonlyMap<string, string> | null;
  /** Bounds on GraphQL's WebSockets (graphql/websocket.ts), which anyone may open. */
  graphqlWebSockets: {
    /** Open sockets on this instance at most; one more is refused (503) before the upgrade. */
    maxConnections: number;
    /** Open sockets from one client address (an IPv6 one by its /64) on this instance at most. */
    maxPerAddress: number;
    /** A socket that has not sent connection_init within this many ms is closed (4408). */
    initTimeoutMs: number;
    /** A socket with no subscription for this many ms is closed (1000). */
    idleTimeoutMs: number;
  };
  /** Push destinations may be loopback, private or link-local addresses (tests, closed networks). */
  destinationsAllowPrivate: boolean;
  /**
   * Behind one reverse proxy: the dashboard then takes the scheme from X-Forwarded-Proto (for
   * its cookie's Secure flag) and the client address from X-Forwarded-For's last entry (for the
   * limit on wrong admin tokens, services/access/admin_token_limit.ts). Off, both come from the
   * connection itself.
   */
  trustProxy: boolean;
  /**
   * The hashid of the one project whose apps the default host (LINK_BASE_URL's) declares in its
   * association files; null: that host declares none (services/link_host/apps.ts says why).
   */
  defaultHostAppsProject: string | null;
  /**
   * A GeoIP database in MaxMind's format (services/link_host/geoip.ts) giving link-host views their
   * country; null: the country of a view is unknown.
   */
  geoipDatabase: string | null;
  /**
   * OpenID Connect sign-in to the dashboard (services/access/oidc.ts): on when OIDC_ISSUER,
   * OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are all set; null otherwise.
   */
  oidc: OidcConfig | null;
  /**
   * Where the background jobs fetch the ECB's daily reference rates (services/fx/fetch.ts); null
   * (FX_RATES_URL=off): never fetched, rates come only from `deno task fx` or the admin API.
   */
  fxRatesUrl: string | null;
}

/** The ECB's file of the latest reference rates (about 2 KB, published on working days). */
export const ECB_DAILY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml";

export interface OidcConfig {
  /** The issuer identifier, exactly as the provider's discovery document states it. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The provider's name on the sign-in button ("Sign in with …"). */
  displayName: string;
  /** The callback URL registered at the provider (the dashboard's /sign-in/oidc/callback). */
  redirectUrl: string;
}

/** Where the provider sends the browser back, under the dashboard. */
export const OIDC_CALLBACK_PATH = "/dashboard/sign-in/oidc/callback";

export class ConfigError extends Error {
  override name = "ConfigError";
}

const blankToUndefined = (v: unknown) => (v === "" ? undefined : v);

function wholeNumber(error: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

const envSchema = z.object({
  PORT: z.preprocess(
    blankToUndefined,
    wholeNumber("must be a port number from 0 to 65535", 0, 65535).default(8000),
  ),
  METRICS_PORT: z.preprocess(
    blankToUndefined,
    wholeNumber("must be a port number from 0 to 65535", 0, 65535).optional(),
  ),
  DATABASE_URL: z.preprocess(
    blankToUndefined,
    z.string().regex(
      /^postgres(ql)?:\/\//,
      "must start with postgres:// or postgresql://",
    ).optional(),
  ),
  DATA_DIR: z.preprocess(blankToUndefined, z.string().default("./data")),
  ADMIN_TOKEN: z.preprocess(
    blankToUndefined,
    z.string().min(16, "must be at least 16 characters")
      .max(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`).optional(),
  ),
  CURSOR_SECRET: z.preprocess(
    blankToUndefined,
    z.string().min(32, "must be at least 32 characters").optional(),
  ),
  LINK_BASE_URL: z.preprocess(
    blankToUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL" })
      .optional(),
  ),
  ANALYTICS_RETENTION_DAYS: z.preprocess(
    blankToUndefined,
    wholeNumber("must be a number of days from 1 to 3650", 1, 3650).default(90),
  ),
  ANALYTICS_ROLLUP_DAYS: z.preprocess(
    blankToUndefined,
    wholeNumber("must be a number of days from 1 to 3650", 1, 3650).default(400),
  ),
  DASHBOARD_SESSION_MAX_DAYS: z.preprocess(
    blankToUndefined,
    wholeNumber("must be a number of days from 1 to 365", 1, 365).default(7),
  ),
  FEED_RATE_LIMIT: z.preprocess(
    blankToUndefined,
    wholeNumber("must be a whole number of requests, at least 1", 1).default(120),
  ),
  GRAPHQL_INTROSPECTION: z.preprocess(
    blankToUndefined,
    z.enum(["true", "false"], { error: "must be true or false" }).default("true"),
  ),
  GRAPHQL_TRUSTED_DOCUMENTS: z.preprocess(blankToUndefined, z.string().optional()),
  GRAPHQL_WS_MAX_CONNECTIONS: z.preprocess(
    blankToUndefined,
    wholeNumber("must be a whole number of sockets from 1 to 1000000", 1, 1_000_000).default(
      2_000,
    ),
  ),
  GRAPHQL_WS_MAX_PER_ADDRESS: z.preprocess(
    blankToUndefined,
    wholeNumber("must be a whole number of sockets from 1 to 1000000", 1, 1_000_000).default(50),
  ),
  GRAPHQL_WS_INIT_TIMEOUT_MS: z.preprocess(
    blankToUndefined,
    wholeNumber("must be milliseconds from 100 to 600000", 100, 600_000).default(10_000),
  ),
  GRAPHQL_WS_IDLE_TIMEOUT_MS: z.preprocess(
    blankToUndefined,
    wholeNumber("must be milliseconds from 100 to 3600000", 100, 3_600_000).default(60_000),
  ),
  DESTINATIONS_ALLOW_PRIVATE: z.preprocess(
    blankToUndefined,
    z.enum(["true", "false"], { error: "must be true or false" }).default("false"),
  ),
  TRUST_PROXY: z.preprocess(
    blankToUndefined,
    z.enum(["true", "false"], { error: "must be true or false" }).default("false"),
  ),
  DEFAULT_HOST_APPS_PROJECT: z.preprocess(
    blankToUndefined,
    z.string().regex(/^[A-Za-z0-9]{1,64}$/, "must be a project's hashid (its id in the admin API)")
      .optional(),
  ),
  GEOIP_DATABASE: z.preprocess(blankToUndefined, z.string().optional()),
  FX_RATES_URL: z.preprocess(
    blankToUndefined,
    z.union([
      z.literal("off"),
      z.url({ protocol: /^https?$/, error: "must be an http(s) URL, or off" }),
    ], { error: "must be an http(s) URL, or off" }).optional(),
  ),
  OIDC_ISSUER: z.preprocess(
    blankToUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).refine(
      (v) => urlOf(v)?.protocol !== "http:" || isLoopback(urlOf(v)!.hostname),
      "must be an https URL (http only on a loopback address, for tests)",
    ).refine(
      (v) => !urlOf(v)?.search && !urlOf(v)?.hash,
      "must be the issuer identifier, without a query or fragment",
    ).optional(),
  ),
  OIDC_CLIENT_ID: z.preprocess(
    blankToUndefined,
    z.string().max(255, "must be at most 255 characters").optional(),
  ),
  OIDC_CLIENT_SECRET: z.preprocess(
    blankToUndefined,
    z.string().max(MAX_SECRET_LENGTH, `must be at most ${MAX_SECRET_LENGTH} characters`)
      .optional(),
  ),
  OIDC_NAME: z.preprocess(
    blankToUndefined,
    z.string().trim().min(1, "must not be blank").max(60, "must be at most 60 characters")
      .default("single sign-on"),
  ),
  OIDC_REDIRECT_URL: z.preprocess(
    blankToUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).refine(
      (v) => !urlOf(v) || (urlOf(v)!.pathname.endsWith(OIDC_CALLBACK_PATH) && !urlOf(v)!.search),
      `must be the dashboard's callback URL, ending in ${OIDC_CALLBACK_PATH}`,
    ).optional(),
  ),
  LOG_LEVEL: z.preprocess(
    blankToUndefined,
    z.enum(["debug", "info", "warn", "error"]).default("info"),
  ),
});

/** Resolves configuration from an environment map; throws ConfigError naming the variable. */
export function resolveConfig(
  env: Record<string, string | undefined>,
  options: { requireAdminToken?: boolean } = {},
): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new ConfigError(`${name}: ${issue.message}`);
  }
  const e = parsed.data;
  if (e.DATABASE_URL && !e.ADMIN_TOKEN && options.requireAdminToken !== false) {
    throw new ConfigError(
      "ADMIN_TOKEN: required when DATABASE_URL is set (only the embedded database generates one)",
    );
  }
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === e.PORT) {
    throw new ConfigError("METRICS_PORT: must differ from PORT (it is not served to the public)");
  }
  const linkBaseUrl = (e.LINK_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "");
  return {
    port: e.PORT,
    metricsPort: e.METRICS_PORT ?? null,
    databaseUrl: e.DATABASE_URL ?? null,
    dataDir: e.DATA_DIR,
    adminToken: e.ADMIN_TOKEN ?? null,
    cursorSecret: e.CURSOR_SECRET ?? null,
    linkBaseUrl,
    analyticsRetentionDays: e.ANALYTICS_RETENTION_DAYS,
    analyticsRollupDays: e.ANALYTICS_ROLLUP_DAYS,
    dashboardSessionMaxDays: e.DASHBOARD_SESSION_MAX_DAYS,
    feedRateLimit: e.FEED_RATE_LIMIT,
    logLevel: e.LOG_LEVEL,
    graphqlIntrospection: e.GRAPHQL_INTROSPECTION === "true",
    graphqlTrustedDocuments: e.GRAPHQL_TRUSTED_DOCUMENTS === undefined
      ? null
      : readTrustedDocuments(e.GRAPHQL_TRUSTED_DOCUMENTS),
    graphqlWebSockets: {
      maxConnections: e.GRAPHQL_WS_MAX_CONNECTIONS,
      maxPerAddress: e.GRAPHQL_WS_MAX_PER_ADDRESS,
      initTimeoutMs: e.GRAPHQL_WS_INIT_TIMEOUT_MS,
      idleTimeoutMs: e.GRAPHQL_WS_IDLE_TIMEOUT_MS,
    },
    destinationsAllowPrivate: e.DESTINATIONS_ALLOW_PRIVATE === "true",
    trustProxy: e.TRUST_PROXY === "true",
    defaultHostAppsProject: e.DEFAULT_HOST_APPS_PROJECT ?? null,
    geoipDatabase: e.GEOIP_DATABASE ?? null,
    oidc: resolveOidc(e, linkBaseUrl),
    fxRatesUrl: e.FX_RATES_URL === "off" ? null : e.FX_RATES_URL ?? ECB_DAILY_URL,
  };
}

/** The URL `v` names, or null: the refinements run even on a value z.url() refused. */
function urlOf(v: string): URL | null {
  return URL.canParse(v) ? new URL(v) : null;
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

const OIDC_REQUIRED = ["OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET"] as const;

/**
 * On when all three of OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set; one or two
 * of them alone is a mistake that stops start-up, naming the first one missing.
 */
function resolveOidc(
  e: z.infer<typeof envSchema>,
  linkBaseUrl: string,
): OidcConfig | null {
  const given = OIDC_REQUIRED.filter((name) => e[name] !== undefined);
  if (given.length === 0) return null;
  const missing = OIDC_REQUIRED.find((name) => e[name] === undefined);
  if (missing) {
    throw new ConfigError(
      `${missing}: required when ${given.join(" and ")} ${given.length === 1 ? "is" : "are"} set`,
    );
  }
  return {
    issuer: e.OIDC_ISSUER!,
    clientId: e.OIDC_CLIENT_ID!,
    clientSecret: e.OIDC_CLIENT_SECRET!,
    displayName: e.OIDC_NAME,
    redirectUrl: e.OIDC_REDIRECT_URL ?? `${linkBaseUrl}${OIDC_CALLBACK_PATH}`,
  };
}

/** A trusted document at most, as any GraphQL document (graphql/document_limit.ts). */
const MAX_TRUSTED_DOCUMENT_BYTES = 32 * 1024;

/**
 * The trusted documents of the file at `path`: a JSON object of each document by the SHA-256 of
 * its text in hex, as GraphQL Code Generator's client preset writes it (`persistedDocuments`
 * with `hashAlgorithm: "sha256"`). Every hash must be its document's, and every document must
 * parse; anything else stops start-up naming the variable.
 */
function readTrustedDocuments(path: string): Map<string, string> {
  const bad = (why: string) => new ConfigError(`GRAPHQL_TRUSTED_DOCUMENTS: ${why}`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(Deno.readTextFileSync(path));
  } catch (err) {
    throw bad(`${path} is not a readable JSON file (${(err as Error).message})`);
  }
  if (typeof manifest !== "object" || manifest === null || Array.isArray(manifest)) {
    throw bad("must name a JSON object of documents by their SHA-256 hash");
  }
  const documents = new Map<string, string>();
  for (const [hash, document] of Object.entries(manifest)) {
    if (!/^[0-9a-f]{64}$/.test(hash) || typeof document !== "string") {
      throw bad(`each key must be a SHA-256 in hex and each value a document (at ${hash})`);
    }
    if (createHash("sha256").update(document).digest("hex") !== hash) {
      throw bad(`${hash} is not the SHA-256 of its document`);
    }
    if (new TextEncoder().encode(document).length > MAX_TRUSTED_DOCUMENT_BYTES) {
      throw bad(`${hash}: the document is larger than ${MAX_TRUSTED_DOCUMENT_BYTES} bytes`);
    }
    try {
      parse(document);
    } catch (err) {
      throw bad(`${hash} does not parse: ${(err as Error).message}`);
    }
    documents.set(hash, document);
  }
  return documents;
}

/** The shortest admin token a new instance accepts (`openssl rand -hex 24` gives 48). */
export const ADMIN_TOKEN_STRONG_LENGTH = 32;
const ADMIN_TOKEN_STRONG_KINDS = 2;
const ADMIN_TOKEN_STRONG_DISTINCT = 10;

/** How to make an admin token that passes adminTokenWeakness, for messages and docs. */
export const ADMIN_TOKEN_ADVICE = "generate one with `openssl rand -hex 24`";

/**
 * Null when `token` is strong enough that guessing it is hopeless whatever the limit on wrong
 * tokens lets through, else why not: at least 32 characters of at least two kinds (lower case,
 * upper case, digits, others) and at least 10 different characters. By the usual estimate
 * (length × log2 of the alphabet its kinds span) that is at least 165 bits for a random token;
 * the rule catches short and patterned tokens ("changeme…", one character repeated), it cannot
 * tell a random token from a chosen one. A generated token (services/access/admin_token.ts,
 * `openssl rand -hex 24`, `openssl rand -base64 32`) passes.
 */
export function adminTokenWeakness(token: string): string | null {
  if (token.length < ADMIN_TOKEN_STRONG_LENGTH) {
    return `is ${token.length} characters; it must be at least ${ADMIN_TOKEN_STRONG_LENGTH}`;
  }
  const kinds = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^a-zA-Z0-9]/].filter((re) => re.test(token)).length;
  if (kinds < ADMIN_TOKEN_STRONG_KINDS) {
    return "must mix at least two kinds of character (lower case, upper case, digits, others)";
  }
  if (new Set(token).size < ADMIN_TOKEN_STRONG_DISTINCT) {
    return `must have at least ${ADMIN_TOKEN_STRONG_DISTINCT} different characters`;
  }
  return null;
}

/** The process's configuration. The admin CLI works on the database directly: it needs no token. */
export function readConfig(options: { requireAdminToken?: boolean } = {}): Config {
  return resolveConfig(Deno.env.toObject(), options);
}
