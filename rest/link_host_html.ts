// The link host's HTML: the preview page and the 404 page. Small, self-contained (inline CSS,
// no external asset), and every value from a link goes through `escapeHtml`.

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;
padding:24px;background:#f4f5f7;color:#1d2129;
font:16px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{width:100%;max-width:420px;background:#fff;border-radius:16px;overflow:hidden;
box-shadow:0 8px 30px rgba(0,0,0,.08)}
img{display:block;width:100%;max-height:260px;object-fit:cover;background:#e9ebee}
.body{padding:24px}
h1{margin:0 0 8px;font-size:1.35rem;line-height:1.3;word-wrap:break-word}
p{margin:0 0 20px;color:#5b6270;word-wrap:break-word}
a.button{display:block;text-align:center;padding:14px 18px;border-radius:10px;
background:#2f6fed;color:#fff;font-weight:600;text-decoration:none}
a.button:active{background:#2559c2}
a.button+a.button{margin-top:12px}
a.secondary{background:transparent;color:#2f6fed;box-shadow:inset 0 0 0 2px #2f6fed}
.muted{color:#8a909c;font-size:.9rem;margin:0}
.offscreen{position:fixed;left:-9999px;top:0}
label{display:block;font-weight:600;margin:0 0 6px}
input{display:block;width:100%;font:inherit;padding:12px;border-radius:10px;
border:1px solid #b8bdc7;margin:0 0 16px;background:#fff;color:#1d2129}
button{display:block;width:100%;font:inherit;font-weight:600;padding:14px 18px;border:0;
border-radius:10px;background:#2f6fed;color:#fff;cursor:pointer}
.error{color:#b42318;font-weight:600}
@media (prefers-color-scheme:dark){body{background:#15171c;color:#e8eaed}
main{background:#1f2229;box-shadow:none}p{color:#aab0bb}
input{background:#15171c;color:#e8eaed;border-color:#5b6270}.error{color:#ffb4a8}}
`;

function document(head: string, body: string, script = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
${head}
<style>${STYLE}</style>
${script}</head>
<body>
${body}
</body>
</html>
`;
}

export interface PreviewPage {
  title: string;
  subtitle: string;
  image: string | null;
  /** The link's own URL (og:url). */
  url: string;
  /** Where the button leads; null when the platform has no destination. */
  destination: string | null;
}

/** The preview page, with the Open Graph and Twitter card tags crawlers read. */
export function renderPreviewPage(page: PreviewPage): string {
  const title = escapeHtml(page.title);
  const subtitle = escapeHtml(page.subtitle);
  const image = page.image === null ? null : escapeHtml(page.image);
  const meta = [
    `<title>${title || "Shared link"}</title>`,
    `<meta property="og:type" content="website">`,
    `<meta property="og:url" content="${escapeHtml(page.url)}">`,
    `<meta property="og:title" content="${title}">`,
    `<meta property="og:description" content="${subtitle}">`,
    image === null ? "" : `<meta property="og:image" content="${image}">`,
    `<meta name="twitter:card" content="${image === null ? "summary" : "summary_large_image"}">`,
    `<meta name="twitter:title" content="${title}">`,
    `<meta name="twitter:description" content="${subtitle}">`,
    image === null ? "" : `<meta name="twitter:image" content="${image}">`,
    subtitle ? `<meta name="description" content="${subtitle}">` : "",
  ].filter((line) => line !== "").join("\n");
  const action = page.destination === null
    ? `<p class="muted">There is nothing to open on this device.</p>`
    : `<a class="button" href="${escapeHtml(page.destination)}" rel="noopener">Continue</a>`;
  const body = `<main>
${image === null ? "" : `<img src="${image}" alt="">`}
<div class="body">
${title ? `<h1>${title}</h1>` : ""}
${subtitle ? `<p>${subtitle}</p>` : ""}
${action}
</div>
</main>`;
  return document(meta, body);
}

export function renderNotFoundPage(): string {
  return document(
    "<title>Link not found</title>",
    `<main><div class="body">
<h1>Link not found</h1>
<p>This link does not exist or is no longer active.</p>
</div></main>`,
  );
}

/** A link past its expiry date or its views (410 Gone): no content of the link is shown. */
export function renderExpiredPage(): string {
  return document(
    "<title>Link expired</title>",
    `<main><div class="body">
<h1>This link has expired</h1>
<p>It was available for a limited time or a limited number of visits, and is no longer.</p>
</div></main>`,
  );
}

/** The script of the open-app page: a file, never inline (the host's CSP allows no inline script). */
export const OPEN_APP_SCRIPT_PATH = "/open-app.js";

export interface OpenAppPage {
  title: string;
  subtitle: string;
  image: string | null;
  /** The link's own URL: what the App Store button copies for a deferred deep link. */
  url: string;
  /** `<scheme>://<path>`. */
  appUrl: string;
  /** Where to go when the app did not open; null: stay on this page. */
  fallback: string | null;
  /** The App Store page, or null when no App Store id is configured. */
  storeUrl: string | null;
  /** Try the app as soon as the page loads, rather than on the visitor's tap. */
  auto: boolean;
}

/**
 * iOS: the page that tries to open the app. Its script (OPEN_APP_SCRIPT_PATH) reads everything
 * from the data attributes of #open-app, so the page carries no script of its own.
 */
export function renderOpenAppPage(page: OpenAppPage): string {
  const title = escapeHtml(page.title);
  const subtitle = escapeHtml(page.subtitle);
  const image = page.image === null ? null : escapeHtml(page.image);
  const fallback = page.fallback ?? "";
  const buttons = [
    `<a class="button" id="open-app-button" href="${escapeHtml(page.appUrl)}">Open in the app</a>`,
    page.storeUrl === null
      ? ""
      : `<a class="button secondary" id="store-button" href="${
        escapeHtml(page.storeUrl)
      }" data-copy="${escapeHtml(page.url)}">Get the app</a>`,
    page.fallback === null || page.fallback === page.storeUrl
      ? ""
      : `<a class="button secondary" href="${
        escapeHtml(page.fallback)
      }" rel="noopener">Continue in the browser</a>`,
  ].filter((b) => b !== "").join("\n");
  const body = `<main id="open-app" data-app-url="${escapeHtml(page.appUrl)}" data-fallback-url="${
    escapeHtml(fallback)
  }" data-auto="${page.auto}">
${image === null ? "" : `<img src="${image}" alt="">`}
<div class="body">
${title ? `<h1>${title}</h1>` : ""}
${subtitle ? `<p>${subtitle}</p>` : ""}
${buttons}
</div>
</main>`;
  return document(
    `<title>${title || "Open in the app"}</title>`,
    body,
    `<script src="${OPEN_APP_SCRIPT_PATH}" defer></script>\n`,
  );
}

export interface PasswordPage {
  /** What went wrong with the last attempt, if anything: a fixed sentence, never link data. */
  problem: "wrong" | "limited" | null;
}

/**
 * A password link's page: the same for every protected link (nothing of the link, no title,
 * image or destination), so crawlers and guessers learn only that a password is asked for.
 * The form posts back to the link's own URL.
 */
export function renderPasswordPage(page: PasswordPage): string {
  const problem = page.problem === "wrong"
    ? `<p class="error" role="alert">That password is not right. Try again.</p>`
    : page.problem === "limited"
    ? `<p class="error" role="alert">Too many wrong passwords. Wait a few minutes, then try again.</p>`
    : "";
  return document(
    [
      `<title>Password required</title>`,
      `<meta property="og:title" content="Password required">`,
      `<meta property="og:description" content="This link is protected by a password.">`,
      `<meta name="twitter:card" content="summary">`,
    ].join("\n"),
    `<main><div class="body">
<h1>Password required</h1>
<p>This link is protected. Enter its password to continue.</p>
${problem}<form method="post">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="off" required autofocus>
<button type="submit">Continue</button>
</form>
</div></main>`,
  );
}
