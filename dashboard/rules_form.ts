// The dashboard's rules editor as a form (dashboard/pages/link_rules.tsx): a link's rules, split,
// forwarding and password as flat fields, the buttons that add, remove and reorder rules,
// conditions and variants (each posts the whole form and gets it back changed, so the editor
// works without JavaScript; dashboard/assets/editor.js does the same without reloading), and the
// PATCH body a save sends through patchLinkBody, the admin API's own schema.
import type { z } from "zod";
import { patchLinkBody } from "../inputs/links.ts";
import type { LinkRule, LinkSplit } from "../services/links/rules.ts";

export const CONDITION_TYPES = [
  "country",
  "language",
  "platform",
  "os",
  "query",
  "referrer_host",
  "ip",
  "from",
  "until",
] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

export const CONDITION_LABELS: Record<ConditionType, string> = {
  country: "Country",
  language: "Language",
  platform: "Platform",
  os: "Operating system",
  query: "Query parameter",
  referrer_host: "Referrer host",
  ip: "IP range",
  from: "From (UTC)",
  until: "Until (UTC)",
};

export const CONDITION_HINTS: Record<ConditionType, string> = {
  country: "DE, AT, CH",
  language: "de, fr",
  platform: "ios, android, desktop",
  os: "Windows, Mac OS",
  query: "utm_source=newsletter, ref=*",
  referrer_host: "news.example.org",
  ip: "10.0.0.0/8, 2001:db8::/32",
  from: "2026-12-24T18:00",
  until: "2026-12-27T00:00",
};

export interface DraftCondition {
  type: ConditionType;
  value: string;
}
export interface DraftVariant {
  url: string;
  weight: string;
}
export interface DraftRule {
  name: string;
  mode: "url" | "split";
  url: string;
  conditions: DraftCondition[];
  variants: DraftVariant[];
}
export interface Draft {
  rules: DraftRule[];
  split: DraftVariant[];
  forwardQuery: boolean;
  appendUtm: boolean;
  /** A new password typed in (never shown back). */
  password: string;
  removePassword: boolean;
}

/** Errors by field name, and those about no one field. */
export interface DraftErrors {
  fields: Record<string, string>;
  general: string[];
}

export const MAX_DRAFT_RULES = 50;
const MAX_DRAFT_CONDITIONS = 9;
const MAX_DRAFT_VARIANTS = 10;

const list = (values: readonly string[] | undefined) => (values ?? []).join(", ");

/** A link's rules and split as the editor's draft. */
export function draftOf(link: {
  rules: LinkRule[] | null;
  split: LinkSplit | null;
  forward_query: boolean;
  append_utm: boolean;
}): Draft {
  return {
    rules: (link.rules ?? []).map((r) => ({
      name: r.name ?? "",
      mode: r.split ? "split" : "url",
      url: r.url ?? "",
      conditions: CONDITION_TYPES.flatMap((type): DraftCondition[] => {
        const v = (r.when as Record<string, unknown>)[type];
        if (v === undefined) return [];
        if (type === "query") {
          const q = v as Record<string, string>;
          return [{ type, value: Object.entries(q).map(([k, x]) => `${k}=${x}`).join(", ") }];
        }
        if (type === "from" || type === "until") {
          return [{ type, value: String(v).slice(0, 16) }];
        }
        return [{ type, value: list(v as string[]) }];
      }),
      variants: (r.split ?? []).map((s) => ({ url: s.url, weight: String(s.weight) })),
    })),
    split: (link.split ?? []).map((s) => ({ url: s.url, weight: String(s.weight) })),
    forwardQuery: link.forward_query,
    appendUtm: link.append_utm,
    password: "",
    removePassword: false,
  };
}

type Form = Record<string, string | File | (string | File)[]>;

function field(form: Form, name: string): string {
  const v = form[name];
  const one = Array.isArray(v) ? v[0] : v;
  return typeof one === "string" ? one : "";
}

/** Indices present in the form for a name pattern, in order. */
function indices(form: Form, pattern: RegExp): number[] {
  const found = new Set<number>();
  for (const key of Object.keys(form)) {
    const m = pattern.exec(key);
    if (m) found.add(Number(m[1]));
  }
  return [...found].sort((a, b) => a - b).slice(0, 100);
}

function variantsOf(form: Form, prefix: string): DraftVariant[] {
  return indices(form, new RegExp(`^${prefix}v(\\d{1,2})_url$`)).map((j) => ({
    url: field(form, `${prefix}v${j}_url`).trim(),
    weight: field(form, `${prefix}v${j}_weight`).trim(),
  })).slice(0, MAX_DRAFT_VARIANTS);
}

/** The draft a posted form holds. */
export function draftFromForm(form: Form): Draft {
  const rules = indices(form, /^r(\d{1,2})_mode$/).slice(0, MAX_DRAFT_RULES).map((i) => {
    const p = `r${i}_`;
    const conditions = indices(form, new RegExp(`^${p}c(\\d{1,2})_type$`)).flatMap((j) => {
      const type = field(form, `${p}c${j}_type`) as ConditionType;
      if (!CONDITION_TYPES.includes(type)) return [];
      return [{ type, value: field(form, `${p}c${j}_value`).trim() }];
    }).slice(0, MAX_DRAFT_CONDITIONS);
    return {
      name: field(form, `${p}name`).trim(),
      mode: field(form, `${p}mode`) === "split" ? "split" as const : "url" as const,
      url: field(form, `${p}url`).trim(),
      conditions,
      variants: variantsOf(form, p),
    };
  });
  return {
    rules,
    split: variantsOf(form, "s"),
    forwardQuery: field(form, "forward_query") === "on",
    appendUtm: field(form, "append_utm") === "on",
    password: field(form, "password"),
    removePassword: field(form, "remove_password") === "on",
  };
}

const emptyVariant = (): DraftVariant => ({ url: "", weight: "1" });

/**
 * Applies a button's operation (`add-rule`, `remove-rule:2`, `up-rule:2`, `down-rule:2`,
 * `add-cond:2`, `remove-cond:2:0`, `add-variant:2` or `add-variant:top`,
 * `remove-variant:2:1`), in place. Unknown or out-of-range operations change nothing.
 */
export function applyOperation(draft: Draft, op: string): void {
  const [name, a, b] = op.split(":");
  const i = Number(a);
  const rule = Number.isInteger(i) ? draft.rules[i] : undefined;
  const swap = (x: number, y: number) => {
    if (x < 0 || y < 0 || x >= draft.rules.length || y >= draft.rules.length) return;
    [draft.rules[x], draft.rules[y]] = [draft.rules[y]!, draft.rules[x]!];
  };
  switch (name) {
    case "add-rule":
      if (draft.rules.length < MAX_DRAFT_RULES) {
        draft.rules.push({
          name: "",
          mode: "url",
          url: "",
          conditions: [{ type: "country", value: "" }],
          variants: [emptyVariant(), emptyVariant()],
        });
      }
      break;
    case "remove-rule":
      if (rule) draft.rules.splice(i, 1);
      break;
    case "up-rule":
      swap(i, i - 1);
      break;
    case "down-rule":
      swap(i, i + 1);
      break;
    case "add-cond":
      if (rule && rule.conditions.length < MAX_DRAFT_CONDITIONS) {
        const used = new Set(rule.conditions.map((c) => c.type));
        rule.conditions.push({
          type: CONDITION_TYPES.find((t) => !used.has(t)) ?? "country",
          value: "",
        });
      }
      break;
    case "remove-cond":
      if (rule) rule.conditions.splice(Number(b), 1);
      break;
    case "add-variant": {
      const variants = a === "top" ? draft.split : rule?.variants;
      if (variants && variants.length < MAX_DRAFT_VARIANTS) {
        // A split has two variants at least: the first click makes two.
        if (variants.length === 0) variants.push(emptyVariant());
        variants.push(emptyVariant());
      }
      break;
    }
    case "remove-variant": {
      const variants = a === "top" ? draft.split : rule?.variants;
      variants?.splice(Number(b), 1);
      break;
    }
  }
}

type PatchBody = z.output<typeof patchLinkBody>;

function splitBody(variants: DraftVariant[]): { url: string; weight: number }[] {
  return variants.filter((v) => v.url !== "" || v.weight !== "").map((v) => ({
    url: v.url,
    weight: /^\d{1,4}$/.test(v.weight) ? Number(v.weight) : NaN,
  }));
}

/**
 * The PATCH body a save sends, validated by the admin API's schema; or the errors by field.
 * Condition texts are read as the hints show: comma-separated lists, `param=value` pairs, and
 * dates and times in UTC.
 */
export function draftToPatch(draft: Draft): { body: PatchBody } | { errors: DraftErrors } {
  const errors: DraftErrors = { fields: {}, general: [] };
  /** rules[i].when.<type> → the field of the condition that gave it. */
  const conditionField = new Map<string, string>();
  const rules = draft.rules.map((r, i) => {
    const when: Record<string, unknown> = {};
    r.conditions.forEach((c, j) => {
      const name = `r${i}_c${j}_value`;
      conditionField.set(`${i}.${c.type}`, name);
      const values = c.value.split(/[,\s]+/).map((v) => v.trim()).filter(Boolean);
      if (c.type === "query") {
        const q: Record<string, string> = { ...(when.query as Record<string, string>) };
        for (const pair of c.value.split(",").map((p) => p.trim()).filter(Boolean)) {
          const eq = pair.indexOf("=");
          if (eq <= 0) {
            errors.fields[name] = "Write each as param=value (or param=* for any value).";
            continue;
          }
          q[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
        }
        when.query = q;
      } else if (c.type === "from" || c.type === "until") {
        const v = c.value.trim();
        if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(v)) {
          errors.fields[name] = "Give a date and time, such as 2026-12-24T18:00 (UTC).";
        } else when[c.type] = `${v.length === 16 ? v + ":00" : v}Z`;
      } else {
        when[c.type] = [...((when[c.type] as string[] | undefined) ?? []), ...values];
      }
    });
    return {
      ...(r.name ? { name: r.name } : {}),
      when,
      ...(r.mode === "split" ? { split: splitBody(r.variants) } : { url: r.url }),
    };
  });
  const split = splitBody(draft.split);
  const raw: Record<string, unknown> = {
    rules,
    split: split.length === 0 ? null : split,
    forward_query: draft.forwardQuery,
    append_utm: draft.appendUtm,
  };
  if (draft.removePassword) raw.password = null;
  else if (draft.password !== "") raw.password = draft.password;
  const parsed = patchLinkBody.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = fieldOf(issue.path, conditionField, draft);
      const message = sentence(issue.message);
      if (name) errors.fields[name] ??= message;
      else errors.general.push(message);
    }
  }
  if (Object.keys(errors.fields).length > 0 || errors.general.length > 0) return { errors };
  return { body: parsed.data! };
}

function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** The form field a schema issue is about, or null for one about the whole set. */
function fieldOf(
  path: readonly PropertyKey[],
  conditionField: Map<string, string>,
  draft: Draft,
): string | null {
  const [top, i, key, k, leaf] = path;
  if (top === "password") return "password";
  if (top === "split") {
    if (typeof i !== "number") return "s_split";
    return `sv${i}_${key === "weight" ? "weight" : "url"}`;
  }
  if (top !== "rules" || typeof i !== "number") return null;
  const rule = draft.rules[i];
  if (key === "when" && typeof k === "string") return conditionField.get(`${i}.${k}`) ?? null;
  if (key === "split") {
    if (typeof k !== "number") return `r${i}_split`;
    return `r${i}_v${k}_${leaf === "weight" ? "weight" : "url"}`;
  }
  if (key === "name") return `r${i}_name`;
  if (key === "url" || rule?.mode === "url") return `r${i}_url`;
  return `r${i}_split`;
}
