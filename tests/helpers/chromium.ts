// Whether the browser tests can run: Debian's Chromium at CHROMIUM_PATH (default
// /usr/bin/chromium). Where it is missing, every test declared with browserTest
// (tests/helpers/browser.ts) is reported as ignored, so `deno task test` passes on a machine with
// only Deno; REQUIRE_BROWSER=1 (set by .ci/run) makes a missing browser fail those tests instead.
// No imports: the test task runs this file on its own to print the one line below, once.

export const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";
export const INSTALL_CHROMIUM = "apt-get update && apt-get install -y chromium";

/** True when the browser is installed. */
export function hasChromium(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

/** REQUIRE_BROWSER=1 (or true): a missing browser is a failure, not a skip. */
export function browserRequired(): boolean {
  return ["1", "true"].includes(Deno.env.get("REQUIRE_BROWSER") ?? "");
}

/** The browser tests are skipped: no Chromium, and nobody asked for them to be required. */
export const SKIP_BROWSER_TESTS = !hasChromium() && !browserRequired();

if (import.meta.main && !hasChromium()) {
  const why = browserRequired()
    ? `REQUIRE_BROWSER is set: the browser tests fail without it`
    : `the browser tests are skipped (ignored)`;
  // deno-lint-ignore no-console
  console.error(
    `Chromium is not installed at ${CHROMIUM}: ${why}. Install it: ${INSTALL_CHROMIUM}`,
  );
}
