// QR codes (CONTRACT.md, "Link rules, splits and passwords"): every variant (SVG and PNG, sizes,
// colours, margins, error correction, the project's logo) is read back with jsQR (Apache-2.0) to
// the link's URL. PNGs are decoded as served (fast-png); SVGs are rasterised here from their own
// geometry (the path of dark modules, the ground, the logo's box), independently of the service.
import assert from "node:assert/strict";
import { decode as decodePng, encode as encodePng } from "fast-png";
import { jsQR, readPng } from "./helpers/qr.ts";
import {
  adminHeaders,
  assertError,
  call,
  createProject,
  startTestServer,
} from "./helpers/server.ts";
import { contrastRatio } from "../services/links/qr.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());
const project = await createProject(srv.url);
const base = `/api/v1/projects/${project.productionId}/links`;
const created = await call(srv.url, "POST", base, {
  headers: adminHeaders,
  body: { path: "spring-poster", desktop_custom_redirect: { url: "https://example.com/" } },
});
const link = created.body.link;

async function qr(params: Record<string, string>, path = link.path) {
  const res = await fetch(`${srv.url}${base}/${path}/qr?${new URLSearchParams(params)}`, {
    headers: adminHeaders,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const type = res.headers.get("content-type");
  const body: unknown = type?.includes("json") ? JSON.parse(new TextDecoder().decode(bytes)) : null;
  return { status: res.status, type, bytes, headers: res.headers, body };
}

function hex(colour: string): number[] {
  const n = parseInt(colour.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** Rasterises the service's SVG from its own markup: 4 pixels a module. */
function readSvg(svg: string): { text: string | null; size: string } {
  const viewBox = /viewBox="0 0 (\d+) \1"/.exec(svg);
  assert.ok(viewBox, "a square viewBox in modules");
  const total = Number(viewBox[1]);
  const scale = 4;
  const px = total * scale;
  const rgba = new Uint8ClampedArray(px * px * 4);
  const fill = (x: number, y: number, w: number, h: number, colour: number[]) => {
    for (let yy = Math.round(y * scale); yy < Math.round((y + h) * scale); yy++) {
      for (let xx = Math.round(x * scale); xx < Math.round((x + w) * scale); xx++) {
        rgba.set([...colour, 255], (yy * px + xx) * 4);
      }
    }
  };
  fill(0, 0, total, total, [255, 255, 255]);
  const ground = /<rect width="\d+" height="\d+" fill="(#[0-9a-f]{6})"\/>/.exec(svg);
  if (ground) fill(0, 0, total, total, hex(ground[1]!));
  const path = /<path fill="(#[0-9a-f]{6})" d="([^"]*)"\/>/.exec(svg)!;
  for (const m of path[2]!.matchAll(/M(\d+) (\d+)h(\d+)v1h-\3z/g)) {
    fill(Number(m[1]), Number(m[2]), Number(m[3]), 1, hex(path[1]!));
  }
  // The logo's box hides what is under it, as the drawn logo would.
  const box =
    /<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="[\d.]+" fill="(#[0-9a-f]{6})"\/><image/
      .exec(svg);
  if (box) fill(Number(box[1]), Number(box[2]), Number(box[3]), Number(box[3]), hex(box[4]!));
  const found = jsQR(rgba, px, px);
  return { text: found?.data ?? null, size: /width="(\d+)"/.exec(svg)![1]! };
}

async function uploadLogo(bytes: Uint8Array<ArrayBuffer>, type: string) {
  const res = await fetch(`${srv.url}/api/v1/admin/projects/${project.hashid}/qr_logo`, {
    method: "PUT",
    headers: { ...adminHeaders, "Content-Type": type },
    body: bytes,
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

/** A 40×40 PNG logo: a red disc on transparency. */
function logoPng(): Uint8Array<ArrayBuffer> {
  const size = 40;
  const data = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const inside = (x - 20) ** 2 + (y - 20) ** 2 < 18 ** 2;
      data.set(inside ? [220, 30, 40, 255] : [0, 0, 0, 0], (y * size + x) * 4);
    }
  }
  return encodePng({ width: size, height: size, data, channels: 4, depth: 8 }) as Uint8Array<
    ArrayBuffer
  >;
}

Deno.test("every QR variant decodes to the link's URL", async () => {
  const variants: Record<string, string>[] = [];
  for (const ecc of ["L", "M", "Q", "H"]) {
    for (const margin of ["0", "4", "16"]) variants.push({ ecc, margin });
  }
  variants.push(
    { size: "64", margin: "1", ecc: "L" },
    { size: "2048" },
    { fg: "#1d3557", bg: "#f1faee" },
    { fg: "#2f6fed", bg: "#ffffff" },
    { fg: "#000000", bg: "transparent" },
    { fg: "#595959", bg: "#ffffff" },
  );
  for (const options of variants) {
    for (const format of ["png", "svg"]) {
      const res = await qr({ ...options, format });
      const label = JSON.stringify({ ...options, format });
      assert.equal(res.status, 200, `${label}: ${new TextDecoder().decode(res.bytes)}`);
      if (format === "png") {
        assert.equal(res.type, "image/png");
        const read = readPng(res.bytes);
        assert.equal(read.text, link.access_path, label);
        assert.equal(read.width, Number(options.size ?? 512), label);
      } else {
        assert.equal(res.type, "image/svg+xml");
        assert.match(res.headers.get("content-security-policy")!, /default-src 'none'/);
        const read = readSvg(new TextDecoder().decode(res.bytes));
        assert.equal(read.text, link.access_path, label);
        assert.equal(read.size, options.size ?? "512", label);
      }
    }
  }
});

Deno.test("with the project's logo (PNG in both formats, SVG on SVG codes) the code still decodes", async () => {
  assertError(await qr({ logo: "1" }), 400, "invalid_field", /no QR logo/);
  const stored = await uploadLogo(logoPng(), "image/png");
  assert.equal(stored.status, 200, stored.text);
  assert.deepEqual(stored.body, { qr_logo: { type: "image/png", bytes: logoPng().length } });
  const withLogo: Record<string, string>[] = [{}, { fg: "#1d3557", bg: "#f1faee", margin: "2" }, {
    ecc: "L",
  }];
  for (const options of withLogo) {
    const png = await qr({ ...options, logo: "1", format: "png" });
    assert.equal(png.status, 200);
    assert.equal(readPng(png.bytes).text, link.access_path, JSON.stringify(options));
    // The logo is drawn: red pixels in the middle of the PNG.
    const image = decodePng(png.bytes);
    const mid = (256 * 512 + 256) * 4;
    assert.deepEqual([...image.data.slice(mid, mid + 3)], [220, 30, 40]);
    const svg = await qr({ ...options, logo: "1", format: "svg" });
    const text = new TextDecoder().decode(svg.bytes);
    assert.match(text, /<image [^>]*href="data:image\/png;base64,/);
    assert.equal(readSvg(text).text, link.access_path);
  }
  const svgLogo =
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="#c00"/></svg>`;
  assert.equal((await uploadLogo(new TextEncoder().encode(svgLogo), "image/svg+xml")).status, 200);
  const svg = await qr({ logo: "1", format: "svg" });
  assert.match(new TextDecoder().decode(svg.bytes), /href="data:image\/svg\+xml;base64,/);
  assert.equal(readSvg(new TextDecoder().decode(svg.bytes)).text, link.access_path);
  assertError(await qr({ logo: "1", format: "png" }), 400, "invalid_field", /SVG/);
});

Deno.test("logos that are not plain images, or too large, are refused", async () => {
  const put = (body: string, type: string) => uploadLogo(new TextEncoder().encode(body), type);
  for (
    const svg of [
      `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
      `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>`,
      `<svg xmlns="http://www.w3.org/2000/svg"><image href="https://tracker.example/x.png"/></svg>`,
      `<svg xmlns="http://www.w3.org/2000/svg"><foreignObject></foreignObject></svg>`,
      `not an svg`,
    ]
  ) {
    assertError(await put(svg, "image/svg+xml"), 400, "invalid_field");
  }
  assertError(await put("not a png", "image/png"), 400, "invalid_field", /PNG/);
  assertError(await put("GIF89a", "image/gif"), 400, "invalid_field");
  assertError(await put("x".repeat(256 * 1024 + 1), "image/png"), 413, "payload_too_large");
});

Deno.test("colours under 3:1 contrast, light on dark, and bad options are 400 invalid_field", async () => {
  assert.ok(contrastRatio("#777777", "#888888") < 3);
  assertError(await qr({ fg: "#777777", bg: "#888888" }), 400, "invalid_field", /contrast/);
  assertError(await qr({ fg: "#cccccc", bg: "transparent" }), 400, "invalid_field", /contrast/);
  assertError(await qr({ fg: "#ffffff", bg: "#000000" }), 400, "invalid_field", /darker/);
  const bad: Record<string, string>[] = [
    { format: "gif" },
    { size: "63" },
    { size: "2049" },
    { size: "big" },
    { fg: "red" },
    { bg: "#12345" },
    { margin: "17" },
    { ecc: "X" },
    { logo: "yes" },
  ];
  for (const options of bad) {
    const res = await qr(options);
    assertError(res, 400, "invalid_field", new RegExp(Object.keys(options)[0]!));
  }
  // A size too small for the code's modules says how large it must be.
  const long = await call(srv.url, "POST", base, { headers: adminHeaders, body: {} });
  const res = await qr({ size: "64", margin: "16", ecc: "H" }, long.body.link.path);
  assertError(res, 400, "invalid_field", /size: must be at least/);
  assert.equal((await qr({}, "no-such-link")).status, 404);
});

Deno.test("a project with a link domain gets codes of its domain's URL", async () => {
  const other = await createProject(srv.url, { name: "Domain" });
  const set = await call(srv.url, "PATCH", `/api/v1/admin/projects/${other.hashid}`, {
    headers: adminHeaders,
    body: { link_domain: "go.acme-qr.example" },
  });
  assert.equal(set.status, 200, set.text);
  const made = await call(srv.url, "POST", `/api/v1/projects/${other.productionId}/links`, {
    headers: adminHeaders,
    body: { path: "qr-domain" },
  });
  const res = await fetch(
    `${srv.url}/api/v1/projects/${other.productionId}/links/qr-domain/qr?format=png`,
    {
      headers: adminHeaders,
    },
  );
  assert.equal(
    readPng(new Uint8Array(await res.arrayBuffer())).text,
    "https://go.acme-qr.example/qr-domain",
  );
  assert.equal(made.body.link.access_path, "https://go.acme-qr.example/qr-domain");
});
