// Static files for the browser pages (GraphiQL, the API reference), served from the process so
// the pages work on a closed network. Each file's URL holds a hash of its content: browsers keep
// it for a year and a new version of the package gets new URLs.
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gzip } from "node:zlib";

const gzipAsync = promisify(gzip);

export class StaticAsset {
  readonly hash: string;
  #gzipped: Promise<Uint8Array> | undefined;

  constructor(
    readonly name: string,
    readonly contentType: string,
    readonly body: string | Uint8Array,
  ) {
    this.hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
  }

  /** `<hash>/<name>`, the part of the URL after the page's asset folder. */
  get path(): string {
    return `${this.hash}/${this.name}`;
  }

  async respond(request: Request): Promise<Response> {
    const headers: Record<string, string> = {
      "Content-Type": this.contentType,
      "Cache-Control": "public, max-age=31536000, immutable",
      "X-Content-Type-Options": "nosniff",
      Vary: "Accept-Encoding",
    };
    // Compressed once and kept: GraphiQL's bundle is 9 MB, 2 MB gzipped, and compressing it on
    // every request (as the server would otherwise do) costs more than serving it.
    if (/\bgzip\b/.test(request.headers.get("Accept-Encoding") ?? "")) {
      this.#gzipped ??= gzipAsync(this.body).then((b) => new Uint8Array(b));
      const body = await this.#gzipped;
      return new Response(body as Uint8Array<ArrayBuffer>, {
        headers: { ...headers, "Content-Encoding": "gzip" },
      });
    }
    return new Response(this.body as string | Uint8Array<ArrayBuffer>, { headers });
  }
}

/** A set of assets loaded on first use (the packages' bundles are large; start-up stays quick). */
export class AssetSet {
  #loading: Promise<Map<string, StaticAsset>> | undefined;

  constructor(private readonly load: () => Promise<StaticAsset[]>) {}

  assets(): Promise<Map<string, StaticAsset>> {
    this.#loading ??= this.load().then(
      (list) => new Map(list.map((a) => [a.path, a])),
      (err) => {
        this.#loading = undefined;
        throw err;
      },
    );
    return this.#loading;
  }

  /** The asset's `<hash>/<name>` path by name. */
  async pathOf(name: string): Promise<string> {
    for (const asset of (await this.assets()).values()) {
      if (asset.name === name) return asset.path;
    }
    throw new Error(`no asset named ${name}`);
  }

  async find(path: string): Promise<StaticAsset | undefined> {
    return (await this.assets()).get(path);
  }
}

/** JSON that can stand inside a `<script type="application/json">` element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** Text for HTML element content and attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
