// A real OpenID provider for the tests: oidc-provider (its development login and consent pages)
// on a loopback port, with two confidential clients and people the test names. `intercept` lets
// a test play a provider that misbehaves (a token endpoint that answers for another client or
// another issuer), so the service's own checks are what refuse.
import http from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type Provider from "oidc-provider";

export const CLIENT_ID = "feeds-dashboard";
export const CLIENT_SECRET = "feeds-dashboard-client-secret-0123456789";
export const OTHER_CLIENT_ID = "another-app";
export const OTHER_CLIENT_SECRET = "another-app-client-secret-0123456789";

export interface Person {
  email: string;
  email_verified: boolean;
  name: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface TestProvider {
  /** The issuer identifier (and the base URL it is served at). */
  issuer: string;
  /** The provider's own request handler, for another provider's `intercept` to call. */
  handler: Handler;
  /** Sees every request first: return true when it answered (or passed it on) itself. */
  intercept: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
  close(): Promise<void>;
}

// oidc-provider warns, as it loads and as it starts, that Deno is not Node.js and that its
// development defaults are on (in-memory storage, generated keys, the development login pages):
// all intended here, so those warnings are not printed.
async function quietly<T>(make: () => Promise<T>): Promise<T> {
  // deno-lint-ignore no-console
  const warn = console.warn;
  // deno-lint-ignore no-console
  console.warn = () => {};
  try {
    return await make();
  } finally {
    // deno-lint-ignore no-console
    console.warn = warn;
  }
}

let providerClass: typeof Provider | undefined;

/**
 * Starts a provider on 127.0.0.1. `host` names it in its issuer ("localhost" makes it another
 * site than the app at 127.0.0.1, as a real provider is). `emailInIdToken`: the ID token carries
 * the email (as Google's, Keycloak's and Authentik's do); otherwise only the userinfo answer does.
 */
export async function startProvider(options: {
  redirectUris: string[];
  people: Record<string, Person>;
  host?: string;
  emailInIdToken?: boolean;
}): Promise<TestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://${options.host ?? "127.0.0.1"}:${port}`;
  const provider = await quietly(async () => {
    providerClass ??= (await import("oidc-provider")).default;
    return new providerClass(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: options.redirectUris,
        },
        {
          client_id: OTHER_CLIENT_ID,
          client_secret: OTHER_CLIENT_SECRET,
          redirect_uris: options.redirectUris,
        },
      ],
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
      conformIdTokenClaims: options.emailInIdToken === false,
      pkce: { required: () => true },
      cookies: { keys: ["test-provider-cookie-key-0123456789"] },
      ttl: {
        AccessToken: 600,
        AuthorizationCode: 60,
        Grant: 600,
        IdToken: 600,
        Interaction: 600,
        Session: 600,
      },
      findAccount(_ctx: unknown, id: string) {
        const person = options.people[id];
        if (!person) return undefined;
        return { accountId: id, claims: () => ({ sub: id, ...person }) };
      },
    });
  });
  const result: TestProvider = {
    issuer,
    handler: provider.callback() as Handler,
    intercept: null,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (result.intercept?.(req, res)) return;
    result.handler(req, res);
  });
  return result;
}

/** A browser's cookies, for driving the provider's pages over HTTP. */
class CookieJar {
  #cookies = new Map<string, string>();
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(";")[0]!;
      const eq = pair.indexOf("=");
      this.#cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
}

/**
 * Signs `login` in at the provider as a browser would, starting from an authorization URL, and
 * gives back the URL the provider sends the browser to (the app's callback, with its query).
 * Follows redirects, fills the login form and confirms the consent form.
 */
export async function loginAtProvider(
  authorizationUrl: string,
  login: string,
  redirectUrl: string,
): Promise<URL> {
  const jar = new CookieJar();
  let url = authorizationUrl;
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 12; step++) {
    const res = await fetch(url, {
      method: body ? "POST" : "GET",
      body,
      headers: { cookie: jar.header() },
      redirect: "manual",
    });
    jar.take(res);
    const text = await res.text();
    if (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get("location")!, url);
      if (next.href.startsWith(redirectUrl)) return next;
      url = next.href;
      body = undefined;
      continue;
    }
    if (res.status !== 200) throw new Error(`the provider answered ${res.status}: ${text}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(text)?.[1];
    if (!action) throw new Error(`no form on the provider's page: ${text.slice(0, 500)}`);
    body = new URLSearchParams(
      [...text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)]
        .map((m) => [m[1]!, m[2]!]),
    );
    if (text.includes('name="login"')) {
      body.set("login", login);
      body.set("password", "any password will do");
    }
    url = new URL(action.replaceAll("&amp;", "&"), url).href;
  }
  throw new Error("the provider never sent the browser back");
}
