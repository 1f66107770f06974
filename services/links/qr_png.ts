// A link's QR code as a PNG image, for clients that take raster images only (an MCP image content:
// assistants read PNG, not SVG). The dashboard serves the same code as SVG (uqr's renderSVG).
import { encode as encodeQr } from "uqr";
import { encode as encodePng } from "fast-png";

/** Pixels per module, and modules of white around the code (the quiet zone scanners need). */
export const QR_PNG_SCALE = 8;
export const QR_PNG_BORDER = 4;

export interface QrPng {
  png: Uint8Array;
  /** Width and height in pixels. */
  size: number;
}

/** `text` (a short URL) as a black-on-white QR code, 8-bit greyscale. */
export function qrPng(text: string): QrPng {
  const { data, size: modules } = encodeQr(text, { border: QR_PNG_BORDER });
  const size = modules * QR_PNG_SCALE;
  const pixels = new Uint8Array(size * size).fill(255);
  for (let y = 0; y < modules; y++) {
    const row = data[y]!;
    for (let x = 0; x < modules; x++) {
      if (!row[x]) continue;
      for (let dy = 0; dy < QR_PNG_SCALE; dy++) {
        const start = (y * QR_PNG_SCALE + dy) * size + x * QR_PNG_SCALE;
        pixels.fill(0, start, start + QR_PNG_SCALE);
      }
    }
  }
  return {
    png: encodePng({ width: size, height: size, data: pixels, channels: 1, depth: 8 }),
    size,
  };
}
