// The bound on a GraphQL document's size, and the byte-bounded caches of parsed documents.
//
// Armor's token limit does not count comments (graphql-js skips them), so without a bound in
// bytes a document of a few tokens and a megabyte of comment parses, validates and is cached by
// its text: anyone, without credentials, could pin memory with distinct documents. The size is
// checked before anything else looks at the text, and the caches are bounded by an estimate of
// their bytes, not by a count of documents.
import { type DocumentNode, GraphQLError, type Source } from "graphql";
import type { Plugin } from "graphql-yoga";
import { ByteCache, stringBytes } from "../infra/byte_cache.ts";

/**
 * The largest document accepted, in UTF-8 bytes, comments and white space included. Our largest
 * legitimate document, a feed page selecting every field, is under 2 KiB; generated clients'
 * documents with fragments stay well under this.
 */
export const MAX_DOCUMENT_BYTES = 32 * 1024;

const encoder = new TextEncoder();

/** Whether `text` is within MAX_DOCUMENT_BYTES (counted without encoding when it is clear). */
export function documentFits(text: string): boolean {
  if (text.length > MAX_DOCUMENT_BYTES) return false;
  if (text.length * 3 <= MAX_DOCUMENT_BYTES) return true;
  return encoder.encode(text).length <= MAX_DOCUMENT_BYTES;
}

function tooLarge(): GraphQLError {
  return new GraphQLError(
    `the document is larger than ${MAX_DOCUMENT_BYTES} bytes (comments and white space count)`,
    { extensions: { code: "BAD_USER_INPUT", http: { status: 413 } } },
  );
}

/**
 * Refuses an oversized document before it is parsed or cached. It must run before Yoga's parser
 * cache, which Yoga places after every plugin given to it: a throw here skips the parse and the
 * cache's store.
 */
export function useDocumentLimit(): Plugin {
  return {
    onParse({ params }) {
      const source = params.source as string | Source;
      if (!documentFits(typeof source === "string" ? source : source.body)) throw tooLarge();
    },
  };
}

/**
 * The estimated bytes of a parsed document and its source text. A document keeps its location
 * tokens (a linked list, comments included), and graphql-jit compiles each cached document
 * once and keeps the compiled query for as long as the document lives; 400 bytes a token covers
 * the token, its AST node and its share of the compiled code as measured on this schema's
 * queries.
 */
export function documentBytes(document: DocumentNode, source: string): number {
  let tokens = 0;
  for (let token = document.loc?.startToken ?? null; token; token = token.next) tokens++;
  return 2 * stringBytes(source.length) + 400 * tokens;
}

/** A byte-bounded cache of parsed documents by their text. */
export function documentCache(name: string, maxBytes: number): ByteCache<string, DocumentNode> {
  return new ByteCache<string, DocumentNode>({
    name,
    maxBytes,
    sizeOf: (document, source) => documentBytes(document, source),
  });
}

/** Yoga's parse-error cache, by the document's text: an error holds the text and a message. */
export function parseErrorCache(maxBytes: number): ByteCache<string, Error> {
  return new ByteCache<string, Error>({
    name: "graphql parse errors",
    maxBytes,
    sizeOf: (error, source) =>
      2 * stringBytes(source.length) + stringBytes(error.message.length) + 512,
  });
}
