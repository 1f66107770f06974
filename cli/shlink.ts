// deno task shlink -- (--file export.json | --url https://shlink.example) [--out links.csv]
// Turns Shlink's short URLs and their redirect rules into the links CSV that
// POST /api/v1/projects/:project_id/links/import takes (inputs/shlink.ts says how each
// field maps). With --url it reads Shlink's REST API (v3), its key from SHLINK_API_KEY.
import { parseArgs } from "node:util";
import { type ShlinkShortUrl, shlinkToCsv } from "../inputs/shlink.ts";

const USAGE = `Usage: deno task shlink -- (--file FILE | --url URL) [--out FILE]

  --file FILE   Shlink's short URLs as JSON: its API's answer ({"shortUrls": {"data": [...]}})
                or an array of short URLs, each may hold its "redirectRules"
  --url URL     a Shlink server: every short URL and its redirect rules are read from its API,
                with the key in SHLINK_API_KEY
  --out FILE    where the CSV goes (default: stdout); what could not come across goes to stderr`;

function listOf(json: unknown): ShlinkShortUrl[] {
  if (Array.isArray(json)) return json as ShlinkShortUrl[];
  const data = (json as { shortUrls?: { data?: unknown } })?.shortUrls?.data;
  if (Array.isArray(data)) return data as ShlinkShortUrl[];
  throw new Error("the file holds neither an array of short URLs nor Shlink's list answer");
}

/** Every short URL of a Shlink server, page by page, with its redirect rules. */
export async function readShlinkServer(
  base: string,
  apiKey: string,
  fetcher: typeof fetch = fetch,
): Promise<ShlinkShortUrl[]> {
  const get = async (path: string) => {
    const res = await fetcher(new URL(path, base), { headers: { "X-Api-Key": apiKey } });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return await res.json();
  };
  const all: ShlinkShortUrl[] = [];
  for (let page = 1;; page++) {
    const answer = await get(`/rest/v3/short-urls?page=${page}&itemsPerPage=100`);
    all.push(...listOf(answer));
    const pages = answer?.shortUrls?.pagination?.pagesCount ?? 1;
    if (page >= pages) break;
  }
  for (const short of all) {
    const rules = await get(
      `/rest/v3/short-urls/${encodeURIComponent(short.shortCode)}/redirect-rules`,
    );
    short.redirectRules = rules?.redirectRules ?? [];
  }
  return all;
}

if (import.meta.main) {
  const args = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
  const { values } = parseArgs({
    args,
    options: {
      file: { type: "string" },
      url: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean" },
    },
  });
  const stderr = (line: string) => Deno.stderr.writeSync(new TextEncoder().encode(line + "\n"));
  if (values.help || (!values.file && !values.url)) {
    stderr(USAGE);
    Deno.exit(values.help ? 0 : 2);
  }
  // The one place outside config.ts that reads the environment: this tool is no part of the
  // server, and its key must not be a flag (it would show in the process list).
  const shortUrls = values.file
    ? listOf(JSON.parse(await Deno.readTextFile(values.file)))
    : await readShlinkServer(values.url!, Deno.env.get("SHLINK_API_KEY") ?? "");
  const { csv, warnings } = shlinkToCsv(shortUrls);
  for (const w of warnings) stderr(`${w.shortCode}: ${w.message}`);
  if (values.out) await Deno.writeTextFile(values.out, csv);
  else await Deno.stdout.write(new TextEncoder().encode(csv));
  stderr(`${shortUrls.length} links, ${warnings.length} warnings`);
}
