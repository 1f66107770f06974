// The link host's open-app page (iOS): try the app's scheme; if the page is still showing a
// moment later, the app is not installed, so go to the fallback (the link's custom redirect or
// the App Store). Served as a file because the host's Content-Security-Policy forbids inline
// script; everything it needs is in the data attributes of #open-app.
(function () {
  "use strict";
  /** How long the app has to take over before the page gives up on it. */
  const WAIT_MS = 1500;
  const root = document.getElementById("open-app");
  if (!root) return;
  const appUrl = root.getAttribute("data-app-url") || "";
  const fallbackUrl = root.getAttribute("data-fallback-url") || "";
  let timer = null;

  function cancel() {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
  }

  // When the app opens, Safari hides this page: the fallback must not fire behind the app.
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) cancel();
  });
  addEventListener("pagehide", cancel);

  function tryApp() {
    cancel();
    timer = setTimeout(function () {
      timer = null;
      if (!document.hidden && fallbackUrl) location.href = fallbackUrl;
    }, WAIT_MS);
    location.href = appUrl;
  }

  // Deferred deep link: the freshly installed app reads the link from the pasteboard. Writing
  // the clipboard needs the visitor's gesture, hence a button rather than the automatic path.
  function copy(text) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      return navigator.clipboard.writeText(text).catch(function () {
        copyWithSelection(text);
      });
    }
    copyWithSelection(text);
    return Promise.resolve();
  }

  function copyWithSelection(text) {
    const field = document.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.className = "offscreen";
    document.body.appendChild(field);
    field.select();
    try {
      document.execCommand("copy");
    } catch (_) {
      // Nothing more to try: the app then opens without its link.
    }
    document.body.removeChild(field);
  }

  const open = document.getElementById("open-app-button");
  if (open) {
    open.addEventListener("click", function (event) {
      event.preventDefault();
      tryApp();
    });
  }
  const store = document.getElementById("store-button");
  if (store) {
    store.addEventListener("click", function (event) {
      event.preventDefault();
      cancel();
      const href = store.getAttribute("href");
      copy(store.getAttribute("data-copy") || "").then(function () {
        location.href = href;
      });
    });
  }
  if (root.getAttribute("data-auto") === "true") tryApp();
})();
