// Every JSON answer a test server gives is checked against /openapi.json: the response schema of
// its path, method and status (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 writes it). serveApp
// (helpers/server.ts) puts this between Deno.serve and the app, so the traffic of every test file
// is checked, whether the test called through `call` or `fetch`; a mismatch fails the test that
// closes the server (close() throws, listing each mismatch). The document and the service so
// cannot drift apart without a failing test.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { OPENAPI_DOCUMENT } from "../../rest/openapi.ts";

type Json = Record<string, unknown>;
interface ResponseSpec {
  content?: Record<string, { schema?: unknown }>;
  $ref?: string;
}
interface Operation {
  responses: Record<string, ResponseSpec>;
}
interface Route {
  template: string;
  pattern: RegExp;
  literals: number;
  operations: Record<string, Operation>;
}

/** The document as a client reads it (GET /openapi.json serves this object as JSON). */
const DOCUMENT = JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)) as {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, ResponseSpec> } & Json;
};

const DOCUMENT_ID = "openapi.json";
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// The components, under the document's own id, so that a response schema's $ref reaches them.
ajv.addSchema({ $id: DOCUMENT_ID, components: DOCUMENT.components });

/** A response schema whose `#/components/…` references point into the document. */
function rooted(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rooted);
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [
      k,
      k === "$ref" && typeof v === "string" && v.startsWith("#/") ? DOCUMENT_ID + v : rooted(v),
    ]),
  );
}

/** Path templates, the most literal first: /admin/projects/{hashid} before /{path}. */
const ROUTES: Route[] = Object.entries(DOCUMENT.paths).map(([template, operations]) => {
  const segments = template.split("/");
  const source = segments
    .map((s) => /^\{[^}]+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
    .join("/");
  return {
    template,
    pattern: new RegExp(`^${source}$`),
    literals: segments.filter((s) => s !== "" && !s.startsWith("{")).length,
    operations,
  };
}).sort((a, b) => b.literals - a.literals);

/** The app's own pages at the root, which the link host's /{path} would otherwise match. */
const NOT_LINK_HOST = new Set(["/api", "/graphql", "/dashboard"]);

function routeOf(pathname: string): Route | undefined {
  const route = ROUTES.find((r) => r.pattern.test(pathname));
  return route?.template === "/{path}" && NOT_LINK_HOST.has(pathname) ? undefined : route;
}

const validators = new Map<string, ValidateFunction>();

function validatorFor(key: string, schema: unknown): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(rooted(schema) as Json);
    validators.set(key, validate);
  }
  return validate;
}

/** What the document says a route answers with this status: its JSON schema, if any. */
function documented(
  route: Route,
  method: string,
  status: number,
): { response: ResponseSpec; json: unknown } | { missing: string } {
  const operation = route.operations[method.toLowerCase()];
  if (!operation) return { missing: `${method} is not documented for ${route.template}` };
  let response = operation.responses[String(status)];
  if (!response) {
    return { missing: `status ${status} is not documented for ${method} ${route.template}` };
  }
  if (response.$ref) {
    response = DOCUMENT.components.responses[response.$ref.split("/").at(-1)!]!;
  }
  return { response, json: response.content?.["application/json"]?.schema };
}

/** Checks the answers of one server; `settle` reports what did not conform. */
export class OpenApiConformance {
  #failures: string[] = [];
  #pending = new Set<Promise<void>>();
  /** Answers checked so far (a test of this check reads it). */
  checked = 0;

  /** Looks at `res` (a copy of its body) and hands it on unchanged. */
  observe(req: Request, res: Response): Response {
    const { pathname } = new URL(req.url);
    const type = res.headers.get("content-type") ?? "";
    const isJson = /^application\/json\b/i.test(type);
    const route = routeOf(pathname);
    if (!route) {
      // Outside the document: the dashboard, GraphQL, static assets. An /api/ path answering
      // with anything but "no such route" is a route the document lacks.
      if (pathname.startsWith("/api/") && res.status !== 404 && res.status !== 405) {
        this.#failures.push(`${req.method} ${pathname}: not in /openapi.json (${res.status})`);
      }
      return res;
    }
    if (req.method === "HEAD" || req.method === "OPTIONS") return res;
    const where = `${req.method} ${pathname} (${route.template}) ${res.status}`;
    const spec = documented(route, req.method, res.status);
    if ("missing" in spec) {
      // A path of the link host's shape that no route serves is the link host's; the rest of
      // what /{path} cannot document (a method the server refuses) is no drift either.
      if (!(route.template === "/{path}" && req.method !== "GET")) {
        this.#failures.push(`${where}: ${spec.missing}`);
      }
      return res;
    }
    // Not modified, or no content: no body to judge.
    if (res.status === 204 || res.status === 304) return res;
    if (!isJson) {
      if (spec.json !== undefined && res.body !== null) {
        this.#failures.push(`${where}: answered ${type || "no content type"}, not JSON`);
      }
      return res;
    }
    if (spec.json === undefined) {
      const types = Object.keys(spec.response.content ?? {}).join(", ") || "no body";
      this.#failures.push(`${where}: answered JSON where the document says ${types}`);
      return res;
    }
    const validate = validatorFor(`${req.method} ${route.template} ${res.status}`, spec.json);
    const body = res.clone().text();
    const check = body.then((text) => {
      this.checked++;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        this.#failures.push(`${where}: the body is not JSON: ${text.slice(0, 200)}`);
        return;
      }
      if (!validate(value)) {
        const errors = (validate.errors ?? [])
          .map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`)
          .join("; ");
        this.#failures.push(`${where}: ${errors}; body ${text.slice(0, 300)}`);
      }
    }, () => {
      // The client went away before the body was whole: nothing to judge.
    });
    this.#pending.add(check);
    check.finally(() => this.#pending.delete(check));
    return res;
  }

  /** Waits for the answers still being read; throws if any did not conform. */
  async settle(): Promise<void> {
    await Promise.all(this.#pending);
    const failures = this.#failures.splice(0);
    if (failures.length > 0) {
      throw new Error(
        `${failures.length} answer(s) do not conform to /openapi.json:\n- ${
          failures.slice(0, 20).join("\n- ")
        }`,
      );
    }
  }
}
