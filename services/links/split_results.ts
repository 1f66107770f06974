// A split's results (CONTRACT.md, "Link rules, splits and passwords"): per variant its views,
// installs, purchases and revenue from the analytics rollups (the views the link host
// attributed to the variant, and the app's events that carry `attribution.variant`), its
// conversion rate (installs per view) and the probability that it is the best (./bayes.ts).
import type { Db } from "../../db/connect.ts";
import { ApiError } from "../errors.ts";
import { probabilityBest } from "./bayes.ts";
import type { LinkRule, LinkSplit } from "./rules.ts";

/** Views each variant needs before its figures are called enough to decide on. */
export const ENOUGH_VIEWS = 100;

export interface VariantResult {
  variant: number;
  url: string;
  weight: number;
  views: number;
  installs: number;
  purchases: number;
  revenue: number;
  conversion_rate: number;
  probability_best: number;
}

export interface SplitResults {
  /** The rule whose split this is (its name or 1-based index), null: the link's own split. */
  rule: string | number | null;
  variants: VariantResult[];
  enough_data: boolean;
}

/** Which split of the link `rule` names: null for the top level, else a rule's name or index. */
export function splitOf(
  link: { rules: LinkRule[] | null; split: LinkSplit | null },
  rule: string | undefined,
): { label: string | number | null; split: LinkSplit } {
  const rules = link.rules ?? [];
  if (rule === undefined) {
    if (link.split) return { label: null, split: link.split };
    // Without a split of its own, a link whose rules hold one split answers that one.
    const withSplit = rules.map((r, i) => ({ r, i })).filter(({ r }) => r.split);
    if (withSplit.length === 1) {
      const { r, i } = withSplit[0]!;
      return { label: r.name ?? i + 1, split: r.split! };
    }
    throw new ApiError(
      "invalid_field",
      withSplit.length === 0
        ? "rule: the link has no split"
        : "rule: the link has several splits; name one with rule=<name or number>",
      { field: "rule" },
    );
  }
  const index = /^[0-9]{1,2}$/.test(rule) ? Number(rule) - 1 : -1;
  const found = rules.findIndex((r, i) => r.name === rule || (r.name === undefined && i === index));
  const at = found !== -1 ? found : index >= 0 && index < rules.length ? index : -1;
  const chosen = at === -1 ? undefined : rules[at];
  if (!chosen?.split) {
    throw new ApiError(
      "invalid_field",
      "rule: no rule of the link with that name or number has a split",
      {
        field: "rule",
      },
    );
  }
  return { label: chosen.name ?? at + 1, split: chosen.split };
}

interface Row {
  variant: number;
  views: number;
  installs: number;
  purchases: number;
  revenue: number;
}

/**
 * The figures per rule and variant of each of `linkIds` (a GraphQL page's, or one link's), in
 * one query over the rollups.
 */
export async function splitFigures(
  db: Db,
  environmentId: number,
  linkIds: readonly number[],
): Promise<Map<number, (Row & { rule: string | null })[]>> {
  const rows = await db<(Row & { rule: string | null; link_id: number })[]>`
    select link_id, rule, variant::int as variant, sum(views)::float8 as views,
      sum(installs)::float8 as installs, sum(purchases)::float8 as purchases,
      sum(revenue)::float8 as revenue
    from analytics_rollups
    where environment_id = ${environmentId} and link_id = any(${linkIds as number[]}::int[])
      and variant is not null
    group by link_id, rule, variant
  `;
  const byLink = new Map<number, (Row & { rule: string | null })[]>(linkIds.map((id) => [id, []]));
  for (const row of rows) byLink.get(row.link_id)?.push(row);
  return byLink;
}

/** Results of `split` (labelled `label`) from its link's figures (splitFigures). */
export function splitResults(
  label: string | number | null,
  split: LinkSplit,
  figures: readonly (Row & { rule: string | null })[],
): SplitResults {
  const ruleText = label === null ? null : String(label);
  const mine = figures.filter((f) => f.rule === ruleText);
  const variants = split.map((v, i) => {
    const f = mine.find((r) => r.variant === i + 1);
    const views = f?.views ?? 0;
    const installs = f?.installs ?? 0;
    return {
      variant: i + 1,
      url: v.url,
      weight: v.weight,
      views,
      installs,
      purchases: f?.purchases ?? 0,
      revenue: f?.revenue ?? 0,
      conversion_rate: views > 0 ? installs / views : 0,
      probability_best: 0,
    };
  });
  const best = probabilityBest(variants.map((v) => ({ successes: v.installs, trials: v.views })));
  variants.forEach((v, i) => (v.probability_best = best[i]!));
  return {
    rule: label,
    variants,
    enough_data: variants.every((v) => v.views >= ENOUGH_VIEWS),
  };
}
