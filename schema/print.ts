// deno task schema: writes the SDL that frontend teams generate types from.
import { lexicographicSortSchema, printSchema } from "graphql";
import { schema } from "./mod.ts";

export function printSdl(): string {
  return printSchema(lexicographicSortSchema(schema)) + "\n";
}

if (import.meta.main) {
  await Deno.writeTextFile(new URL("./schema.graphql", import.meta.url), printSdl());
}
