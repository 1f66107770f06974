// Deno's built-in OpenTelemetry (OTEL_DENO=true, docs/operations.md "Traces") under the start
// task's own permissions: the real `deno task start`, exporting OTLP over HTTP (JSON) to a small
// receiver on 127.0.0.1, sends the span of a request it served, and nothing asks for a
// permission the task does not grant.
import assert from "node:assert/strict";
import { createDatabase, dropDatabase } from "../db/databases.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const READY_MS = 120_000;
const ADMIN_TOKEN = "otel-admin-token-0123456789abcdefgh";

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number };
}
interface OtlpSpan {
  name: string;
  traceId: string;
  attributes?: OtlpAttribute[];
}
interface OtlpTraces {
  resourceSpans: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

/** An OTLP/HTTP receiver: every traces request's spans, with their resource's attributes. */
function startCollector() {
  const spans: { span: OtlpSpan; resource: OtlpAttribute[] }[] = [];
  const paths: string[] = [];
  const controller = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: controller.signal, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      paths.push(path);
      const text = await req.text();
      if (path === "/v1/traces") {
        const body = JSON.parse(text) as OtlpTraces;
        for (const rs of body.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              spans.push({ span, resource: rs.resource?.attributes ?? [] });
            }
          }
        }
      }
      return Response.json({});
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    paths,
    async close() {
      controller.abort();
      await server.finished;
    },
  };
}

function attribute(attrs: OtlpAttribute[] | undefined, key: string): string | undefined {
  const v = attrs?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : String(v.intValue));
}

Deno.test("OTEL_DENO=true: deno task start exports the span of a request it served, with the task's permissions", async () => {
  const collector = startCollector();
  const dataDir = await Deno.makeTempDir();
  const base = Deno.env.get("DATABASE_URL");
  const name = `t_otel_${Date.now().toString(36)}`;
  const env: Record<string, string> = {
    PORT: "0",
    NO_COLOR: "1",
    ADMIN_TOKEN,
    ...(base ? { DATABASE_URL: await createDatabase(base, name) } : { DATA_DIR: dataDir }),
    OTEL_DENO: "true",
    OTEL_SERVICE_NAME: "link-event-feed",
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  };
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const v = Deno.env.get(name);
    if (v !== undefined) env[name] = v;
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "start"],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
    // `deno task` runs `deno run` as its child: both stop with the group.
    detached: true,
  }).spawn();
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, sink: (s: string) => void) => {
    const text = new TextDecoder();
    for await (const chunk of stream) sink(text.decode(chunk, { stream: true }));
  };
  const pumped = Promise.all([
    pump(child.stdout, (s) => (out += s)),
    pump(child.stderr, (s) => (err += s)),
  ]);
  const output = () => `--- stdout\n${out}\n--- stderr\n${err}`;
  try {
    let url = "";
    const deadline = Date.now() + READY_MS;
    while (!url && Date.now() < deadline) {
      const port = /"msg":"listening","url":"http:\/\/[^"]*:(\d+)"/.exec(out)?.[1];
      if (port) {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
        await res?.body?.cancel();
        if (res?.status === 200) url = `http://127.0.0.1:${port}`;
      }
      if (!url) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(url, `not ready in time\n${output()}`);
    const res = await fetch(`${url}/api/v1/no/such/route`);
    assert.equal(res.status, 404);
    await res.body?.cancel();

    // Spans go out in batches, about every second.
    const spanOf404 = async () => {
      for (let i = 0; i < 120; i++) {
        const found = collector.spans.find((s) =>
          attribute(s.span.attributes, "http.response.status_code") === "404"
        );
        if (found) return found;
        await new Promise((r) => setTimeout(r, 250));
      }
      return undefined;
    };
    const found = await spanOf404();
    assert.ok(found, `no span of the request arrived (${collector.paths.join(", ")})\n${output()}`);
    assert.equal(attribute(found.span.attributes, "http.request.method"), "GET");
    assert.equal(attribute(found.resource, "service.name"), "link-event-feed");
    assert.match(found.span.traceId, /^[0-9a-f]{32}$/);
  } finally {
    try {
      Deno.kill(-child.pid, "SIGTERM");
    } catch { /* gone already */ }
    await child.status;
    await pumped;
    await collector.close();
    await Deno.remove(dataDir, { recursive: true });
    if (base) await dropDatabase(base, name);
  }
  assert.doesNotMatch(output(), /PermissionDenied|NotCapable|Requires \w+ access/);
});
