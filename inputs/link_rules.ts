// What a link's rules, split, password and forwarding may be (CONTRACT.md, "Link rules, splits
// and passwords"). Shared by REST, GraphQL (as JSON), the CSV import and the dashboard's form.
import { z } from "zod";
import ipaddr from "ipaddr.js";
import { httpUrl, text } from "./common.ts";
import { isoCountry } from "../services/events/geo.ts";
import { PASSWORD_MAX_LENGTH } from "../services/access/passwords.ts";
import type { LinkRule, LinkSplit } from "../services/links/rules.ts";

export const MAX_RULES = 50;
export const MAX_CONDITION_VALUES = 100;
export const MAX_QUERY_CONDITIONS = 20;
export const MIN_VARIANTS = 2;
export const MAX_VARIANTS = 10;
export const MAX_WEIGHT = 1000;
/** The rules of one link once serialised: what the link host reads on each of its hits. */
export const MAX_RULES_BYTES = 64 * 1024;
/** A link's password: 1 character at least (a short code on a poster is a fair use). */
export const LINK_PASSWORD_MAX = PASSWORD_MAX_LENGTH;

const list = <S extends z.ZodType>(item: S) =>
  z.array(item).min(1, "must hold at least one value").max(
    MAX_CONDITION_VALUES,
    `must hold at most ${MAX_CONDITION_VALUES} values`,
  );

const country = z.string().transform((v, ctx) => {
  const code = isoCountry(v);
  if (code) return code;
  ctx.issues.push({ code: "custom", message: "must be an ISO 3166-1 alpha-2 code", input: v });
  return z.NEVER;
});

const language = z.string().regex(
  /^[A-Za-z]{2,3}$/,
  "must be a primary language subtag such as de or en",
).transform((v) => v.toLowerCase());

const host = z.string().max(253, "must be at most 253 characters").regex(
  /^[A-Za-z0-9.-]+$/,
  "must be a host name such as news.example.com",
).transform((v) => v.toLowerCase().replace(/\.$/, ""));

/** A CIDR range (`10.0.0.0/8`, `2001:db8::/32`) or one address, kept in CIDR form. */
const cidr = z.string().max(64, "must be at most 64 characters").transform((v, ctx) => {
  try {
    if (v.includes("/")) {
      const [address, bits] = ipaddr.parseCIDR(v);
      return `${address.toString()}/${bits}`;
    }
    const address = ipaddr.parse(v);
    return `${address.toString()}/${address.kind() === "ipv4" ? 32 : 128}`;
  } catch {
    ctx.issues.push({
      code: "custom",
      message: "must be an IPv4 or IPv6 address or CIDR range",
      input: v,
    });
    return z.NEVER;
  }
});

const instant = z.iso.datetime({
  offset: true,
  error: "must be an ISO 8601 date and time with an offset, such as 2026-12-31T23:59:59Z",
}).transform((v) => new Date(v).toISOString());

export const ruleConditions = z.strictObject({
  country: list(country).optional(),
  language: list(language).optional(),
  platform: list(z.enum(["ios", "android", "desktop"])).optional(),
  os: list(text(64).pipe(z.string().min(1, "must not be empty"))).optional(),
  query: z.record(
    text(100).pipe(z.string().min(1, "must not be empty")),
    text(500),
  ).refine((q) => Object.keys(q).length >= 1, "must name at least one parameter")
    .refine(
      (q) => Object.keys(q).length <= MAX_QUERY_CONDITIONS,
      `must name at most ${MAX_QUERY_CONDITIONS} parameters`,
    ).optional(),
  referrer_host: list(host).optional(),
  ip: list(cidr).optional(),
  from: instant.optional(),
  until: instant.optional(),
}).refine((w) => !(w.from && w.until) || w.from < w.until, {
  message: "from must be before until",
  path: ["until"],
});

export const splitVariant = z.strictObject({
  url: httpUrl,
  weight: z.int().min(1, "must be a whole number from 1").max(
    MAX_WEIGHT,
    `must be at most ${MAX_WEIGHT}`,
  ),
});

export const splitInput = z.array(splitVariant)
  .min(MIN_VARIANTS, `must hold at least ${MIN_VARIANTS} variants`)
  .max(MAX_VARIANTS, `must hold at most ${MAX_VARIANTS} variants`);

export const linkRule = z.strictObject({
  name: text(100).pipe(z.string().min(1, "must not be empty")).optional(),
  when: ruleConditions.default({}),
  url: httpUrl.optional(),
  split: splitInput.optional(),
}).refine((r) => (r.url === undefined) !== (r.split === undefined), {
  message: "give either url or split",
});

export const rulesInput = z.array(linkRule)
  .max(MAX_RULES, `must hold at most ${MAX_RULES} rules`)
  .refine(
    (rules) => JSON.stringify(rules).length <= MAX_RULES_BYTES,
    `must be at most ${MAX_RULES_BYTES} bytes serialised`,
  );

export const linkPassword = z.string()
  .min(1, "must not be empty")
  .max(LINK_PASSWORD_MAX, `must be at most ${LINK_PASSWORD_MAX} characters`);

export type LinkRuleInput = z.output<typeof linkRule>;
export type SplitInput = z.output<typeof splitInput>;

// What the schemas let through is what the link host's rules take.
const _rule: LinkRule = {} as LinkRuleInput;
const _split: LinkSplit = [] as SplitInput;
