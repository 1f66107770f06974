// The rules editor and the QR designer work without this file (every button posts the form, the
// designer has a Preview button); it only saves the page reloads: an add, remove or move button
// posts the form in the background and swaps in the form the server answers, and the QR preview
// follows the options as they change.
"use strict";

document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element
    ? event.target.closest('form[data-editor] button[name="op"]')
    : null;
  if (!button || button.value === "save") return;
  const form = button.form;
  event.preventDefault();
  const body = new URLSearchParams(new FormData(form));
  body.set("op", button.value);
  const answer = await fetch(form.action, { method: "POST", body, credentials: "same-origin" });
  if (!answer.ok) {
    form.requestSubmit(button);
    return;
  }
  const page = new DOMParser().parseFromString(await answer.text(), "text/html");
  const next = page.querySelector("form[data-editor]");
  if (!next) return;
  form.replaceWith(document.adoptNode(next));
  // Focus where the change happened: the same button if it is still there, else the field of a
  // new rule, condition or variant, else the form's first button.
  const same = next.querySelector(`button[name="op"][value="${CSS.escape(button.value)}"]`);
  const added = button.value.startsWith("add-")
    ? [...next.querySelectorAll("input:not([type=hidden]), select")].filter((el) =>
      el.value === "" || el.value === "1"
    ).at(-1)
    : null;
  (added ?? same ?? next.querySelector("button, input"))?.focus();
});

// A condition's placeholder follows its type.
document.addEventListener("change", (event) => {
  const select = event.target;
  if (!(select instanceof HTMLSelectElement) || !select.hasAttribute("data-hints")) return;
  const input = select.closest(".cond-row")?.querySelector("input");
  const hint = select.selectedOptions[0]?.getAttribute("data-hint");
  if (input && hint) input.placeholder = hint;
});

// The QR designer: the preview and the downloads follow the options.
const designer = document.querySelector("form[data-qr-designer]");
if (designer) {
  const preview = document.querySelector("[data-qr-preview]");
  const error = document.querySelector("[data-qr-error]");
  const base = designer.action.replace(/\/qr$/, "/qr-image");
  const query = (format, download) => {
    const f = new FormData(designer);
    const q = new URLSearchParams({
      format,
      size: f.get("size") || "512",
      fg: f.get("fg") || "#000000",
      bg: f.get("transparent") ? "transparent" : f.get("bg") || "#ffffff",
      margin: f.get("margin") || "4",
      ecc: f.get("ecc") || "M",
      logo: f.get("logo") ? "1" : "0",
    });
    if (download) q.set("download", "1");
    return q.toString();
  };
  let timer;
  const update = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const url = `${base}?${query("svg")}`;
      const answer = await fetch(url, { credentials: "same-origin" });
      if (!answer.ok) {
        // The designer page says why, in the words it shows without JavaScript.
        const form = new URLSearchParams(new FormData(designer));
        const page = await fetch(`${designer.action}?${form}`, { credentials: "same-origin" });
        const why = new DOMParser().parseFromString(await page.text(), "text/html")
          .querySelector("[data-qr-error]")?.textContent;
        if (error) error.textContent = why || "These options cannot be drawn.";
        if (preview) preview.hidden = true;
        return;
      }
      if (error) error.textContent = "";
      if (preview) {
        preview.hidden = false;
        preview.src = url;
      }
      for (const link of document.querySelectorAll("[data-qr-download]")) {
        link.href = `${base}?${query(link.getAttribute("data-qr-download"), true)}`;
      }
    }, 150);
  };
  designer.addEventListener("input", update);
  designer.addEventListener("change", update);
}
