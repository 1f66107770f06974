// A typed client, as docs/graphql.md shows it: GraphQL Code Generator's client preset run on the
// committed SDL and three documents (docs/examples/codegen/: a links page, a link with its
// series, an update), code using the typed documents type-checked by `deno check` (and code that
// misuses them refused), then run against the real server.
import assert from "node:assert/strict";
import { adminHeaders, call, createProject, startTestServer } from "./helpers/server.ts";

const repo = new URL("..", import.meta.url).pathname;

/** Code a frontend would write with the generated documents. */
const USAGE = `import { print } from "graphql";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import {
  LinkSeriesDocument,
  LinksPageDocument,
  type LinkState,
  UpdateLinkDocument,
} from "./gql/graphql.ts";

/** A typed request: the variables a document takes in, the data it answers. */
async function request<R, V>(
  base: string,
  headers: Record<string, string>,
  document: TypedDocumentNode<R, V>,
  variables: V,
): Promise<R> {
  const res = await fetch(base + "/graphql", {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify({ query: print(document), variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data as R;
}

export async function linksScreen(base: string, headers: Record<string, string>, projectId: string) {
  const page = await request(base, headers, LinksPageDocument, {
    projectId,
    filter: { state: "ACTIVE" },
  });
  const rows: { path: string; title: string; views: number; state: LinkState }[] =
    page.environment?.links.edges.map(({ node }) => ({
      path: node.path,
      title: node.title,
      views: node.metrics.totalViews,
      state: node.state,
    })) ?? [];
  const more: boolean = page.environment?.links.pageInfo.hasNextPage ?? false;
  const first = rows[0]!;
  const link = await request(base, headers, LinkSeriesDocument, {
    projectId,
    path: first.path,
    tz: "Europe/Berlin",
  });
  const days: { day: string; views: number }[] =
    link.environment?.link?.analytics.series?.map((point) => ({
      day: point.start,
      views: point.views ?? 0,
    })) ?? [];
  const edited = await request(base, headers, UpdateLinkDocument, {
    projectId,
    path: first.path,
    input: { title: "Renamed", tags: null, active: false },
  });
  const updated: { title: string; tags: string[]; active: boolean; updatedAt: string } =
    edited.updateLink;
  return { rows, more, days, updated, state: edited.updateLink.state };
}
`;

/** The same code's mistakes, each of which the generated types must refuse. */
const MISUSE =
  `import { LinkSeriesDocument, LinksPageDocument, UpdateLinkDocument } from "./gql/graphql.ts";
import type { ResultOf, VariablesOf } from "@graphql-typed-document-node/core";

export const wrongVariable: VariablesOf<typeof LinksPageDocument> = { after: "x" };
export const unknownInput: VariablesOf<typeof UpdateLinkDocument> = {
  projectId: "1",
  path: "p",
  input: { colour: "red" },
};
export function unselected(data: ResultOf<typeof LinkSeriesDocument>) {
  return data.environment?.link?.subtitle;
}
`;

async function deno(args: string[]): Promise<{ ok: boolean; output: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { ok: out.success, output: decode(out.stdout) + decode(out.stderr) };
}

// The generator and the typed-document types are test-only packages: tests/deno.json has them.
const CONFIG = `${repo}tests/deno.json`;
const denoCheck = (file: string) => deno(["check", "--config", CONFIG, file]);

Deno.test("codegen's client preset on the committed SDL: typed documents that type-check and run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "codegen-" });
  const srv = await startTestServer();
  try {
    // As docs/graphql.md runs it, in a process of its own with its own permissions.
    const generated = await deno([
      "run",
      "--config",
      CONFIG,
      "--allow-read",
      `--allow-write=${dir}`,
      "--allow-env",
      `${repo}docs/examples/codegen/codegen.ts`,
      `${dir}/gql`,
    ]);
    assert.ok(generated.ok, generated.output);
    const files = [...Deno.readDirSync(`${dir}/gql`)].map((e) => e.name).sort();
    assert.deepEqual(files, ["gql.ts", "graphql.ts", "index.ts"]);
    await Deno.writeTextFile(`${dir}/usage.ts`, USAGE);
    await Deno.writeTextFile(`${dir}/misuse.ts`, MISUSE);

    const usage = await denoCheck(`${dir}/usage.ts`);
    assert.ok(usage.ok, usage.output);
    const misuse = await denoCheck(`${dir}/misuse.ts`);
    assert.ok(!misuse.ok, "misuse type-checked");
    assert.match(misuse.output, /Property .projectId. is missing/);
    assert.match(misuse.output, /'colour' does not exist/);
    assert.match(misuse.output, /'subtitle' does not exist/);

    // The typed code against the server.
    const p = await createProject(srv.url);
    for (const title of ["First", "Second"]) {
      const res = await call(srv.url, "POST", `/api/v1/projects/${p.productionId}/links`, {
        headers: adminHeaders,
        body: { title, tags: ["t"] },
      });
      assert.equal(res.status, 201);
    }
    const { linksScreen } = await import(`file://${dir}/usage.ts`);
    const screen = await linksScreen(srv.url, adminHeaders, String(p.productionId));
    assert.deepEqual(screen.rows.map((r: { title: string }) => r.title), ["Second", "First"]);
    assert.equal(screen.rows[0].state, "ACTIVE");
    assert.equal(screen.more, false);
    assert.equal(screen.days.length, 31);
    assert.deepEqual(
      { title: screen.updated.title, tags: screen.updated.tags, active: screen.updated.active },
      { title: "Renamed", tags: [], active: false },
    );
    assert.equal(screen.state, "INACTIVE");
  } finally {
    await srv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
