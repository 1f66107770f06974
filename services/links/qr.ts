// A link's QR code (CONTRACT.md, "Link rules, splits and passwords"): SVG or PNG, of a given size,
// colours, margin and error correction, with the project's logo in the middle if asked. uqr
// (MIT) encodes the modules; the SVG is written here, the PNG encoded by fast-png (MIT, pure
// JavaScript). Colours must keep a 3:1 contrast, dark modules on a lighter ground, so that common
// readers decode every code (tests/qr_test.ts reads each variant back with jsQR).
import { encode as encodeQr } from "uqr";
import { decode as decodePng, encode as encodePng } from "fast-png";
import { ApiError } from "../errors.ts";

export type QrFormat = "svg" | "png";
export type Ecc = "L" | "M" | "Q" | "H";

export interface QrLogo {
  bytes: Uint8Array;
  type: "image/png" | "image/svg+xml";
}

export interface QrOptions {
  format: QrFormat;
  /** The image's width and height in pixels, margin included. */
  size: number;
  fg: string;
  /** `#RRGGBB`, or null for a transparent ground. */
  bg: string | null;
  /** Quiet zone in modules. */
  margin: number;
  ecc: Ecc;
  logo: QrLogo | null;
}

export const MIN_CONTRAST = 3;
/** The logo's box side, as a share of the code's side: 9% of its area, within the 20% allowed. */
const LOGO_SIDE = 0.3;

function rgb(hex: string): [number, number, number] {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** WCAG 2 relative luminance of `#RRGGBB`. */
export function luminance(hex: string): number {
  const [r, g, b] = rgb(hex).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

function invalid(field: string, message: string): ApiError {
  return new ApiError("invalid_field", `${field}: ${message}`, { field });
}

/**
 * Refuses colours a reader may not decode: under 3:1 contrast, or light modules on a dark
 * ground (many readers look only for dark modules). A transparent ground is taken as white,
 * where such codes are most often printed.
 */
export function checkColours(fg: string, bg: string | null): void {
  const ground = bg ?? "#ffffff";
  const ratio = contrastRatio(fg, ground);
  if (ratio < MIN_CONTRAST) {
    throw invalid(
      bg === null ? "fg" : "bg",
      `the contrast of fg and ${bg === null ? "a white ground" : "bg"} is ${
        ratio.toFixed(2)
      }:1; at least ${MIN_CONTRAST}:1 is needed for readers to decode the code`,
    );
  }
  if (luminance(fg) > luminance(ground)) {
    throw invalid("fg", "must be darker than bg: many readers decode only dark modules on light");
  }
}

/** The code's modules (true: dark), without a quiet zone. */
function modules(text: string, ecc: Ecc): boolean[][] {
  return encodeQr(text, { ecc, border: 0 }).data;
}

interface Layout {
  grid: boolean[][];
  /** Modules across, quiet zone included. */
  total: number;
  /** The logo's box in modules from the image's corner (square), when there is a logo. */
  logoBox: { at: number; side: number } | null;
}

function layout(text: string, options: QrOptions): Layout {
  // A logo hides modules: the highest error correction recovers them.
  const grid = modules(text, options.logo ? "H" : options.ecc);
  const total = grid.length + 2 * options.margin;
  if (options.size < 2 * total) {
    throw invalid(
      "size",
      `must be at least ${2 * total} pixels for this link's code (${total} modules, 2 pixels each)`,
    );
  }
  let logoBox = null;
  if (options.logo) {
    const side = Math.floor(grid.length * LOGO_SIDE);
    logoBox = { at: options.margin + (grid.length - side) / 2, side };
  }
  return { grid, total, logoBox };
}

function base64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(out);
}

/** The code as SVG: one path of dark modules on a rectangle of the ground, and the logo. */
export function qrSvg(text: string, options: QrOptions): string {
  const { grid, total, logoBox } = layout(text, options);
  let d = "";
  grid.forEach((row, y) => {
    let x = 0;
    while (x < row.length) {
      if (!row[x]) {
        x++;
        continue;
      }
      let run = 1;
      while (row[x + run]) run++;
      d += `M${x + options.margin} ${y + options.margin}h${run}v1h-${run}z`;
      x += run;
    }
  });
  const ground = options.bg === null
    ? ""
    : `<rect width="${total}" height="${total}" fill="${options.bg}"/>`;
  let logo = "";
  if (logoBox && options.logo) {
    const pad = logoBox.side * 0.08;
    logo =
      `<rect x="${logoBox.at}" y="${logoBox.at}" width="${logoBox.side}" height="${logoBox.side}" fill="${
        options.bg ?? "#ffffff"
      }"/><image x="${logoBox.at + pad}" y="${logoBox.at + pad}" width="${
        logoBox.side - 2 * pad
      }" height="${
        logoBox.side - 2 * pad
      }" preserveAspectRatio="xMidYMid meet" href="data:${options.logo.type};base64,${
        base64(options.logo.bytes)
      }"/>`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${options.size}" height="${options.size}" viewBox="0 0 ${total} ${total}" shape-rendering="crispEdges">${ground}<path fill="${options.fg}" d="${d}"/>${logo}</svg>`;
}

interface Raster {
  width: number;
  height: number;
  /** RGBA, 8 bits a channel. */
  rgba: Uint8Array;
}

/** A PNG logo as RGBA, whatever its colour type and depth. */
export function decodeLogo(bytes: Uint8Array): Raster {
  const image = decodePng(bytes);
  const { width, height, channels, depth } = image;
  const data = image.data as Uint8Array | Uint16Array;
  const palette = image.palette as number[][] | undefined;
  const rgba = new Uint8Array(width * height * 4);
  const shift = depth === 16 ? 8 : 0;
  for (let i = 0; i < width * height; i++) {
    let r: number, g: number, b: number, a = 255;
    if (palette) {
      const entry = palette[data[i]!] ?? [0, 0, 0, 255];
      [r, g, b] = entry as [number, number, number];
      a = entry[3] ?? 255;
    } else if (channels <= 2) {
      r = g = b = data[i * channels]! >> shift;
      if (channels === 2) a = data[i * 2 + 1]! >> shift;
    } else {
      r = data[i * channels]! >> shift;
      g = data[i * channels + 1]! >> shift;
      b = data[i * channels + 2]! >> shift;
      if (channels === 4) a = data[i * 4 + 3]! >> shift;
    }
    if (depth < 8 && !palette) r = g = b = Math.round((r / ((1 << depth) - 1)) * 255);
    rgba.set([r, g, b, a], i * 4);
  }
  return { width, height, rgba };
}

/** The code as PNG: each pixel the module under it; the logo scaled into its box. */
export function qrPng(text: string, options: QrOptions): Uint8Array {
  if (options.logo?.type === "image/svg+xml") {
    throw invalid(
      "logo",
      "the project's logo is an SVG, which is drawn on SVG codes only: ask for format=svg, or " +
        "upload a PNG logo",
    );
  }
  const { grid, total, logoBox } = layout(text, options);
  const size = options.size;
  const fg = [...rgb(options.fg), 255];
  const bg = options.bg === null ? [255, 255, 255, 0] : [...rgb(options.bg), 255];
  const rgba = new Uint8Array(size * size * 4);
  const moduleAt = new Int32Array(size);
  for (let p = 0; p < size; p++) moduleAt[p] = Math.floor((p * total) / size) - options.margin;
  for (let y = 0; y < size; y++) {
    const row = grid[moduleAt[y]!];
    for (let x = 0; x < size; x++) {
      const dark = row?.[moduleAt[x]!] === true;
      rgba.set(dark ? fg : bg, (y * size + x) * 4);
    }
  }
  if (logoBox && options.logo) {
    const logo = decodeLogo(options.logo.bytes);
    const scale = size / total;
    const box0 = Math.round(logoBox.at * scale);
    const boxSide = Math.round(logoBox.side * scale);
    const ground = options.bg === null ? [255, 255, 255, 255] : bg;
    for (let y = box0; y < box0 + boxSide; y++) {
      for (let x = box0; x < box0 + boxSide; x++) rgba.set(ground, (y * size + x) * 4);
    }
    // Fitted in the box with a little padding, its aspect kept, nearest pixel, alpha blended.
    const pad = Math.round(boxSide * 0.08);
    const inner = boxSide - 2 * pad;
    const fit = Math.min(inner / logo.width, inner / logo.height);
    const w = Math.max(1, Math.round(logo.width * fit));
    const h = Math.max(1, Math.round(logo.height * fit));
    const x0 = box0 + pad + Math.floor((inner - w) / 2);
    const y0 = box0 + pad + Math.floor((inner - h) / 2);
    for (let y = 0; y < h; y++) {
      const sy = Math.min(logo.height - 1, Math.floor(y / fit));
      for (let x = 0; x < w; x++) {
        const sx = Math.min(logo.width - 1, Math.floor(x / fit));
        const s = (sy * logo.width + sx) * 4;
        const a = logo.rgba[s + 3]! / 255;
        const o = ((y0 + y) * size + x0 + x) * 4;
        for (let c = 0; c < 3; c++) {
          rgba[o + c] = Math.round(logo.rgba[s + c]! * a + rgba[o + c]! * (1 - a));
        }
        rgba[o + 3] = 255;
      }
    }
  }
  return encodePng({ width: size, height: size, data: rgba, channels: 4, depth: 8 });
}

/** The most a logo may weigh, refused before it is read. */
export const MAX_LOGO_BYTES = 256 * 1024;

/**
 * Checks an uploaded logo: a PNG that decodes (and is not absurdly large once decoded), or an
 * SVG document with nothing active in it (no script, event handler, external reference or
 * embedded document). Answers its stored type.
 */
export function checkLogo(bytes: Uint8Array, contentType: string): QrLogo["type"] {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "image/png") {
    let decoded;
    try {
      decoded = decodePng(bytes);
    } catch {
      throw invalid("logo", "is not a PNG image that can be read");
    }
    if (decoded.width * decoded.height > 1024 * 1024) {
      throw invalid("logo", "must be at most 1024 × 1024 pixels");
    }
    return "image/png";
  }
  if (type === "image/svg+xml") {
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw invalid("logo", "is not UTF-8 text");
    }
    if (!/<svg[\s>]/i.test(text)) throw invalid("logo", "is not an SVG document");
    if (
      /<script|<foreignObject|<iframe|<object|<embed|\son[a-z]+\s*=|javascript:|<!ENTITY|(?:xlink:)?href\s*=\s*["'](?!#|data:image\/(?:png|jpeg|gif);)/i
        .test(text)
    ) {
      throw invalid(
        "logo",
        "must be a plain SVG drawing: no scripts, event handlers, embedded documents or external references",
      );
    }
    return "image/svg+xml";
  }
  throw invalid("logo", "must be sent as image/png or image/svg+xml");
}
