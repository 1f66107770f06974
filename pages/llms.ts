// GET /llms.txt: a short index of the documentation for agents, in the llms.txt format (a title,
// a summary, then sections of links), and GET /docs/<page>.md: the pages it lists, as Markdown.
// The index is made from docs/README.md's table of pages, so it lists what the repository
// documents, with nothing to keep in step by hand; every link is on the instance itself.

const DOCS_DIR = new URL("../docs/", import.meta.url);

export interface DocPage {
  /** The file name in docs/, e.g. `agents.md`. */
  file: string;
  /** The page's first heading. */
  title: string;
  /** What docs/README.md says it covers. */
  covers: string;
}

/** A row of docs/README.md's table: `| [file.md](file.md) | what it covers |`. */
const TABLE_ROW = /^\|\s*\[([A-Za-z0-9_-]+\.md)\]\(\1\)\s*\|\s*(.+?)\s*\|\s*$/gm;

async function readPages(): Promise<DocPage[]> {
  const index = await Deno.readTextFile(new URL("README.md", DOCS_DIR));
  const pages: DocPage[] = [];
  for (const [, file, covers] of index.matchAll(TABLE_ROW)) {
    const text = await Deno.readTextFile(new URL(file!, DOCS_DIR));
    const title = /^# (.+)$/m.exec(text)?.[1] ?? file!;
    pages.push({ file: file!, title, covers: covers! });
  }
  return pages;
}

// Read once per process: a fixed handful of titles, the files do not change while it runs.
let pages: Promise<DocPage[]> | null = null;

/** The pages docs/README.md lists (none when docs/ is not beside the code). */
export function docPages(): Promise<DocPage[]> {
  pages ??= readPages().catch(() => []);
  return pages;
}

/** The text of GET /llms.txt. */
export async function renderLlmsTxt(): Promise<string> {
  const list = await docPages();
  const lines = [
    "# Link and event feed service",
    "",
    "> A self-hostable service for deep links with per-link metrics and analytics, and an " +
    "event feed read by cursor pages, a live tail or webhooks. Every link below is on this " +
    "instance.",
    "",
    "AI assistants can manage links and read analytics through the MCP server at `/mcp` " +
    "(Streamable HTTP, `Authorization: Bearer sk_…` with an API key of one environment): see " +
    "[Agents](/docs/agents.md).",
    "",
    "## Docs",
    "",
    "- [Documentation](/docs/README.md): the index of these pages",
    ...list.map((p) => `- [${p.title}](/docs/${p.file}): ${p.covers}`),
    "",
    "## API descriptions",
    "",
    "- [OpenAPI document](/openapi.json): every REST route, as OpenAPI 3.1",
    "- [API reference](/docs): the same document as a readable page",
    "- [GraphQL](/graphql): the GraphQL endpoint (its schema by introspection; GraphiQL in a " +
    "browser)",
    "",
  ];
  return lines.join("\n");
}

/** The Markdown of docs/README.md or of a page it lists, or null for any other name. */
export async function docPage(file: string): Promise<string | null> {
  if (file !== "README.md" && !(await docPages()).some((p) => p.file === file)) return null;
  try {
    return await Deno.readTextFile(new URL(file, DOCS_DIR));
  } catch {
    return null;
  }
}
