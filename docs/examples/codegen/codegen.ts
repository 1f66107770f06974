// GraphQL Code Generator's client preset on the committed SDL, run under Deno:
//   deno run --config tests/deno.json --allow-read --allow-write --allow-env \
//     docs/examples/codegen/codegen.ts <output dir>
// (tests/deno.json has the generator: the service's own configuration does not).
// writes typed documents (`LinksPageDocument`, …) for the documents beside this file.
//
// A Node.js project runs the same preset through the CLI (`graphql-codegen` with a codegen.ts,
// docs/graphql.md shows it). Here the preset is driven by the generator's core: the CLI looks
// presets up by name in node_modules, which Deno does not have, and brings in packages (a file
// watcher, a task runner) that generating three files does not need.
import { codegen } from "@graphql-codegen/core";
import { preset } from "@graphql-codegen/client-preset";
import { buildASTSchema, parse } from "graphql";

const here = new URL(".", import.meta.url);

/** The client preset's settings (the `config` of a codegen.ts output). */
export const CONFIG = {
  // Deno (and Node's ESM) import with extensions; a bundler needs none.
  importExtension: ".ts" as const,
  emitLegacyCommonJSImports: false,
  useTypeImports: true,
  enumsAsTypes: true,
  futureProofEnums: true,
  strictScalars: true,
  scalars: { DateTime: "string", JSONObject: "Record<string, unknown>", SafeInt: "number" },
};

/** Generates the typed documents into `outDir`; answers the files written. */
export async function generateClient(outDir: string): Promise<string[]> {
  const base = outDir.endsWith("/") ? outDir : `${outDir}/`;
  const schema = parse(await Deno.readTextFile(new URL("../../../schema/schema.graphql", here)));
  const documents = [];
  for await (const entry of Deno.readDir(here)) {
    if (!entry.name.endsWith(".graphql")) continue;
    const text = await Deno.readTextFile(new URL(entry.name, here));
    documents.push({ location: entry.name, document: parse(text), rawSDL: text });
  }
  documents.sort((a, b) => a.location.localeCompare(b.location));
  const outputs = await preset.buildGeneratesSection({
    baseOutputDir: base,
    presetConfig: { fragmentMasking: false },
    plugins: [],
    pluginMap: {},
    schema,
    schemaAst: buildASTSchema(schema),
    documents,
    config: CONFIG,
  });
  const written: string[] = [];
  await Deno.mkdir(base, { recursive: true });
  for (const output of outputs) {
    const content = await codegen({
      ...output,
      importExtension: CONFIG.importExtension,
      emitLegacyCommonJSImports: CONFIG.emitLegacyCommonJSImports,
    });
    await Deno.writeTextFile(output.filename, content);
    written.push(output.filename);
  }
  return written;
}

if (import.meta.main) {
  const out = Deno.args[0];
  if (!out) throw new Error("usage: codegen.ts <output directory>");
  await generateClient(out);
}
