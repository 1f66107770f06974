// A QR code's options as GET .../links/:link_path/qr takes them (CONTRACT.md, "Link rules, splits
// and passwords"): every bad one is a 400 invalid_field naming it.
import { z } from "zod";

const colour = z.string().regex(/^#[0-9A-Fa-f]{6}$/, "must be a colour as #RRGGBB")
  .transform((v) => v.toLowerCase());

const whole = (min: number, max: number, fallback: number) =>
  z.string().regex(/^[0-9]{1,5}$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform((v) => v ?? fallback);

export const qrOptionsQuery = z.object({
  format: z.enum(["svg", "png"]).default("svg"),
  size: whole(64, 2048, 512),
  fg: colour.default("#000000"),
  bg: z.union([z.literal("transparent"), colour]).default("#ffffff")
    .transform((v) => (v === "transparent" ? null : v)),
  margin: whole(0, 16, 4),
  ecc: z.enum(["L", "M", "Q", "H"]).default("M"),
  logo: z.enum(["0", "1"]).default("0").transform((v) => v === "1"),
});

export type QrOptionsQuery = z.output<typeof qrOptionsQuery>;
