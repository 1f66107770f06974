// Persisted documents, the two production conventions:
//
// - Trusted documents (GRAPHQL_TRUSTED_DOCUMENTS, config.ts): only the listed documents run. A
//   client sends a document's hash (`extensions.persistedQuery.sha256Hash`, as Apollo's
//   persisted-query link and GraphQL Code Generator's persisted documents do) or its exact
//   text; anything else is refused before it is parsed. Yoga's persisted-operations plugin
//   serves the hashes; automatic persisted queries are off, since they would let a client add
//   documents to the list.
// - Otherwise, automatic persisted queries (Yoga's APQ plugin, Apollo Client's protocol): a
//   client sends a hash alone, and on PERSISTED_QUERY_NOT_FOUND the document with its hash,
//   which is kept for the next time. The store is keyed by client input, so it is bounded in
//   bytes (a least-recently-used ByteCache), and holds only documents within the 32 KiB bound;
//   each instance keeps its own (a miss costs the client one more round trip).
//
// Yoga's plugins act on the parameters of its HTTP requests; the WebSocket transport
// (websocket.ts) takes its messages without them, and `webSocketQuery` applies the same list
// there.
import { useAPQ } from "@graphql-yoga/plugin-apq";
import { usePersistedOperations } from "@graphql-yoga/plugin-persisted-operations";
import { GraphQLError } from "graphql";
import type { Plugin } from "graphql-yoga";
import { ByteCache, stringBytes } from "../infra/byte_cache.ts";
import { documentFits } from "./document_limit.ts";

/** The hash a request names (`extensions.persistedQuery`, version 1), or null. */
function persistedHash(extensions: unknown): string | null | undefined {
  const persisted = (extensions as { persistedQuery?: unknown } | null | undefined)
    ?.persistedQuery;
  if (persisted == null) return null;
  const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
  return version === 1 && typeof sha256Hash === "string" ? sha256Hash : undefined;
}

const NOT_TRUSTED = {
  message: "only this server's trusted documents run here (GRAPHQL_TRUSTED_DOCUMENTS): send " +
    "a listed document, or its SHA-256 as extensions.persistedQuery.sha256Hash",
  extensions: { code: "PERSISTED_QUERY_NOT_IN_LIST", http: { status: 400 } },
};

export interface PersistedDocuments {
  /** Yoga plugins for requests that go through Yoga's own path. */
  plugins: Plugin[];
  /** The document a WebSocket subscribe message runs, or the error that refuses it. */
  webSocketQuery(payload: { query: string; extensions?: unknown }): string | GraphQLError;
}

export function persistedDocuments(
  trusted: ReadonlyMap<string, string> | null,
): PersistedDocuments {
  return trusted ? trustedDocuments(trusted) : automaticPersistedQueries();
}

function trustedDocuments(trusted: ReadonlyMap<string, string>): PersistedDocuments {
  const hashOf = new Map([...trusted].map(([hash, text]) => [text, hash]));
  /** A listed document sent as text runs as its hash does. */
  const textToHash: Plugin = {
    onParams({ params, setParams }) {
      if (typeof params.query !== "string" || params.query === "") return;
      const hash = hashOf.get(params.query);
      const named = persistedHash(params.extensions);
      if (hash === undefined || (named != null && named !== hash)) return;
      setParams({
        ...params,
        query: undefined,
        extensions: { ...params.extensions, persistedQuery: { version: 1, sha256Hash: hash } },
      });
    },
  };
  return {
    plugins: [
      textToHash,
      usePersistedOperations({
        getPersistedOperation: (hash) => trusted.get(hash) ?? null,
        customErrors: {
          notFound: NOT_TRUSTED,
          keyNotFound: NOT_TRUSTED,
          persistedQueryOnly: NOT_TRUSTED,
        },
      }) as Plugin,
    ],
    webSocketQuery(payload) {
      if (hashOf.has(payload.query)) return payload.query;
      const hash = persistedHash(payload.extensions);
      const text = hash ? trusted.get(hash) : undefined;
      if (text !== undefined && payload.query === "") return text;
      return new GraphQLError(NOT_TRUSTED.message, {
        extensions: { code: NOT_TRUSTED.extensions.code },
      });
    },
  };
}

function automaticPersistedQueries(): PersistedDocuments {
  const documents = new ByteCache<string, string>({
    name: "graphql persisted queries",
    maxBytes: 4 * 1024 * 1024,
    sizeOf: (text, hash) => stringBytes(text.length) + stringBytes(hash.length) + 64,
  });
  return {
    plugins: [
      useAPQ({
        store: {
          get: (hash: string) => documents.get(hash),
          // Only documents within the size bound: a larger one is refused when parsed anyway.
          set: (hash: string, text: string) => {
            if (documentFits(text)) documents.set(hash, text);
          },
        },
        // Apollo Client's link looks for PERSISTED_QUERY_NOT_FOUND in a 200 answer.
        responseConfig: { forceStatusCodeOk: true },
      }) as Plugin,
    ],
    webSocketQuery: (payload) => payload.query,
  };
}
