// Query parameters of the dashboard's listings, read the same way by the admin API and the pages.
import { z } from "zod";
import { MAX_CHART_DAYS } from "../services/analytics/events_per_day.ts";
import { optional, text } from "./common.ts";

const pageNumber = z.string()
  .regex(/^[1-9][0-9]{0,5}$/, "must be a page number from 1 to 100000")
  .transform(Number)
  .refine((n) => n <= 100_000, "must be a page number from 1 to 100000");

/** `q` (a substring to search for) and `page` (1-based), both optional. */
export const listQuery = z.object({
  q: optional(text(200)),
  page: optional(pageNumber),
});

/**
 * The links page: `q` and `page`, and `state` (every link but the archived ones when absent or
 * empty, as the form's first choice sends it).
 */
export const linkListQuery = listQuery.extend({
  state: z.preprocess(
    (v) => (v === "" || v === null ? undefined : v),
    z.enum(["active", "inactive", "expired", "archived"]).optional(),
  ),
});

/** `days` of the events-per-day chart: 1 to 90, 30 when absent. */
export const chartQuery = z.object({
  days: optional(
    z.string()
      .regex(/^[0-9]{1,3}$/, `must be a whole number of days from 1 to ${MAX_CHART_DAYS}`)
      .transform(Number)
      .refine(
        (n) => n >= 1 && n <= MAX_CHART_DAYS,
        `must be a whole number of days from 1 to ${MAX_CHART_DAYS}`,
      ),
  ).transform((n) => n ?? 30),
});
