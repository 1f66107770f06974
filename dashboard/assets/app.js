// The dashboard works without this file; it only adds copy buttons, select-on-focus for secrets,
// a confirmation on forms that ask for one (data-confirm), a written hint above tables that
// scroll sideways, and the browser's own time zone for a new link's expiry.
"use strict";

document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  if (!button) return;
  const id = button.getAttribute("data-copy");
  const field = document.getElementById(id);
  const status = document.querySelector(`[data-copy-status="${CSS.escape(id)}"]`);
  if (!field) return;
  const value = "value" in field ? field.value : field.textContent;
  try {
    await navigator.clipboard.writeText(value);
  } catch {
    // No clipboard API (an insecure origin): fall back to the selection.
    field.select?.();
    document.execCommand("copy");
  }
  if (status) status.textContent = "Copied to the clipboard.";
});

document.addEventListener("focusin", (event) => {
  const t = event.target;
  if (t instanceof HTMLInputElement && t.readOnly) t.select();
});

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  const question = form.getAttribute("data-confirm");
  if (question && !globalThis.confirm(question)) event.preventDefault();
});

// On a narrow screen the tab bar scrolls sideways: bring the current tab into view.
document.addEventListener("DOMContentLoaded", () => {
  document.querySelector('.tabs [aria-current="page"]')
    ?.scrollIntoView({ block: "nearest", inline: "nearest" });
});

// A table wider than its box says so above it (the box's edge shadows say it without scripts).
function markScrolling() {
  for (const note of document.querySelectorAll("[data-scroll-note]")) {
    const box = note.nextElementSibling;
    if (box) note.hidden = box.scrollWidth <= box.clientWidth + 1;
  }
}
document.addEventListener("DOMContentLoaded", () => {
  markScrolling();
  if (typeof ResizeObserver === "function") {
    new ResizeObserver(markScrolling).observe(document.documentElement);
  } else {
    globalThis.addEventListener("resize", markScrolling);
  }
});

// An expiry not yet set is read in the browser's own zone (the server converts it to UTC).
document.addEventListener("DOMContentLoaded", () => {
  const select = document.querySelector("select[data-browser-zone]");
  if (!select) return;
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone && [...select.options].some((o) => o.value === zone)) select.value = zone;
});
