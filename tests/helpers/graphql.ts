import { call } from "./server.ts";

// deno-lint-ignore no-explicit-any
export type Json = any;

/** POSTs a GraphQL document; answers the HTTP status and the parsed result. */
export async function gql(
  base: string,
  query: string,
  options: { variables?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<{ status: number; data: Json; errors: Json[] | undefined }> {
  const res = await call(base, "POST", "/graphql", {
    headers: options.headers,
    body: { query, variables: options.variables },
  });
  return { status: res.status, data: res.body.data, errors: res.body.errors };
}
