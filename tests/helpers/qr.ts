// Reading a QR code back, as a phone's camera would: jsQR (Apache-2.0) over the decoded image.
import assert from "node:assert/strict";
import jsqrModule from "jsqr";
import { decode as decodePng } from "fast-png";

// jsQR is CommonJS: its types describe the module, its value is the function.
type Reader = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
export const jsQR = jsqrModule as unknown as Reader;

/** RGBA over white (a transparent ground is read as printed on paper). */
export function onWhite(rgba: Uint8Array | Uint8ClampedArray): Uint8ClampedArray {
  const out = new Uint8ClampedArray(rgba.length);
  for (let i = 0; i < rgba.length; i += 4) {
    const a = rgba[i + 3]! / 255;
    for (let c = 0; c < 3; c++) out[i + c] = rgba[i + c]! * a + 255 * (1 - a);
    out[i + 3] = 255;
  }
  return out;
}

/** What a PNG of RGBA pixels (as the service writes them) reads as, and its width. */
export function readPng(bytes: Uint8Array): { text: string | null; width: number } {
  const image = decodePng(bytes);
  assert.equal(image.channels, 4);
  const found = jsQR(onWhite(image.data as Uint8Array), image.width, image.height);
  return { text: found?.data ?? null, width: image.width };
}
