// Ranges for tests that compare figures read from per-day tables (the funnel's installs and
// views by UTC day) with counts over the stored history: whole hours, in zones of several offsets,
// from a few hours within one UTC day to many days, ending up to three days before `now`.
const HOUR = 3_600_000;

/** [from, to, zone] of whole hours, 15 of them, drawn with `random`. */
export function rangesOfWholeHours(now: string, random: () => number): [Date, Date, string][] {
  const out: [Date, Date, string][] = [];
  const end = Math.floor(Date.parse(now) / HOUR) * HOUR + HOUR;
  for (const tz of ["UTC", "America/New_York", "Asia/Tokyo"]) {
    for (const hours of [3, 20, 30, 24 * 4 + 7, 24 * 12]) {
      const to = end - Math.floor(random() * 24 * 3) * HOUR;
      out.push([new Date(to - hours * HOUR), new Date(to), tz]);
    }
  }
  return out;
}
