// A real browser for the tests: Debian's Chromium (`apt-get install chromium`, which .ci/run
// does) driven by playwright-core. The flags keep Chromium off every network but loopback, as
// the tests' closed network expects; screenshots go to test-output/ (not committed).
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";
import { CHROMIUM, SKIP_BROWSER_TESTS } from "./chromium.ts";

export { CHROMIUM, hasChromium, SKIP_BROWSER_TESTS } from "./chromium.ts";
export const SCREENSHOT_DIR = "test-output/screenshots";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

type BrowserTestDefinition = Omit<Deno.TestDefinition, "ignore" | "only">;

/**
 * Deno.test for a test that drives the browser: ignored, with all the others, where Chromium is
 * missing (tests/helpers/chromium.ts says when). Every test of a *_browser_test.ts file is
 * declared with it, so they are skipped together or not at all (tests/test_permissions_test.ts).
 * Named `test` so that `deno fmt` keeps `test("name", async () => {` on one line, as it does
 * for `Deno.test`.
 */
export function test(name: string, fn: () => Promise<void>): void;
export function test(definition: BrowserTestDefinition): void;
export function test(
  nameOrDefinition: string | BrowserTestDefinition,
  fn?: () => Promise<void>,
): void {
  const definition = typeof nameOrDefinition === "string"
    ? { name: nameOrDefinition, fn: fn! }
    : nameOrDefinition;
  Deno.test({ ...definition, ignore: SKIP_BROWSER_TESTS });
}

export async function launchBrowser(): Promise<Browser> {
  // playwright gives every launch an empty profile directory of its own.
  return await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

/** Writes a screenshot of the page's full height; the name says what it shows. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await Deno.mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = `${SCREENSHOT_DIR}/${name.replace(/[^a-zA-Z0-9_.-]/g, "_")}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The page's content is wider than its viewport: horizontal overflow, which phones show. */
export async function hasHorizontalOverflow(page: Page): Promise<boolean> {
  return await page.evaluate(() =>
    document.documentElement.scrollWidth > document.documentElement.clientWidth + 1
  );
}

/**
 * Checks a page as a person would meet it, then shoots it at 390×844 and 1440×900, light and
 * dark: every visible field has a label (for screen readers and keyboards), and nothing
 * overflows sideways on a phone. Leaves the page at 1440 px, light.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll("input:not([type=hidden]), textarea, select")]
      .filter((el) =>
        !(el as HTMLInputElement).labels?.length && !el.getAttribute("aria-label") &&
        !el.getAttribute("aria-labelledby")
      )
      .map((el) => (el as HTMLInputElement).name || el.id)
  );
  assert.deepEqual(unlabelled, [], `${name}: fields without a label`);
  await page.setViewportSize({ width: 390, height: 844 });
  assert.equal(await hasHorizontalOverflow(page), false, `${name}: overflows at 390 px`);
  await screenshot(page, `${name}-390`);
  await page.emulateMedia({ colorScheme: "dark" });
  assert.equal(await hasHorizontalOverflow(page), false, `${name}: overflows at 390 px, dark`);
  await screenshot(page, `${name}-390-dark`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await screenshot(page, `${name}-1440-dark`);
  await page.emulateMedia({ colorScheme: "light" });
  await screenshot(page, `${name}-1440`);
}

/** Opens every group of the link form (each is a disclosure, closed until it has a value). */
export async function openLinkFormSections(page: Page): Promise<void> {
  await page.$$eval("details.form-section", (all) => {
    for (const d of all) (d as HTMLDetailsElement).open = true;
  });
}
