// The Live events page: reads the session's event stream (Server-Sent Events, same origin) and
// shows the events newest first, each as what happened (a custom event's name, a purchase's
// amount, a session's length), then when, through which link, from where, and its id. Every
// value goes in with textContent, never as HTML. Pause holds incoming events (none is dropped)
// and shows them on resume.
"use strict";

(() => {
  const section = document.querySelector("[data-live-stream]");
  if (!section) return;
  const rows = section.querySelector("[data-live-rows]");
  const status = section.querySelector("[data-live-status]");
  const toggle = section.querySelector("[data-live-toggle]");
  const MAX_ROWS = 200;
  let paused = false;
  let held = [];
  let received = 0;

  const LABELS = {
    view: "View",
    open: "Open",
    install: "Install",
    reinstall: "Reinstall",
    reactivation: "Reactivation",
    app_open: "App open",
    user_referred: "User referred",
    session: "Session",
    purchase: "Purchase",
    custom: "Custom event",
  };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const str = (v) => (typeof v === "string" && v !== "" ? v : null);

  /** An amount in minor units as money, by the currency's own number of decimals. */
  function money(amount, currency) {
    if (typeof amount !== "number") return null;
    try {
      const format = new Intl.NumberFormat("en-US", { style: "currency", currency });
      const digits = format.resolvedOptions().maximumFractionDigits;
      return format.format(amount / 10 ** digits);
    } catch {
      // Not a currency code Intl knows: the amount as sent.
      return `${amount.toLocaleString("en-US")} ${currency ?? ""} (minor units)`.trim();
    }
  }

  function duration(seconds) {
    if (typeof seconds !== "number") return null;
    const h = Math.floor(seconds / 3600);
    const m = Math.floor((seconds % 3600) / 60);
    const s = seconds % 60;
    if (h > 0) return `${h} h ${String(m).padStart(2, "0")} min`;
    if (m > 0) return `${m} min ${String(s).padStart(2, "0")} s`;
    return `${s} s`;
  }

  /** What happened beyond its type, in a few words, and a line of details (both may be ""). */
  function describe(event) {
    const p = event.purchase;
    if (event.type === "purchase" && p) {
      return [
        `${str(event.name) ?? "purchase"} ${money(p.amount, p.currency) ?? ""}`.trim(),
        [
          str(p.product_id),
          str(p.store),
          str(p.transaction_id) && `transaction ${p.transaction_id} v${p.version}`,
        ].filter(Boolean).join(" · "),
      ];
    }
    if (event.type === "custom") return [str(event.name) ?? "custom event", ""];
    if (event.type === "session") {
      return [`${duration(event.time_spent) ?? "a session"} in the app`, ""];
    }
    return ["", ""];
  }

  /** Where it came from: the device, the country, the referrer. */
  function origin(event) {
    const d = event.device ?? {};
    const a = event.attribution ?? {};
    return [
      str(d.os) ?? str(d.platform),
      str(d.browser),
      event.geo && str(event.geo.country),
      str(a.referrer_host) && `from ${a.referrer_host}`,
    ].filter(Boolean);
  }

  /** 2026-06-15T11:59:00.000Z as 2026-06-15 11:59:00 UTC. */
  function when(iso) {
    const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(String(iso ?? ""));
    return m ? `${m[1]} ${m[2]} UTC` : String(iso ?? "");
  }

  function show(event) {
    const li = el("li", `live-event t-${String(event.type ?? "")}`);
    const [what, detail] = describe(event);
    const head = el("div", "ev-head");
    head.append(el("span", "ev-type", LABELS[event.type] ?? String(event.type ?? "")));
    if (what) head.append(el("span", "ev-what", what));
    li.append(head);
    if (detail) li.append(el("p", "ev-detail", detail));
    const meta = el("p", "ev-meta");
    const time = el("time", "when", when(event.occurred_at));
    time.dateTime = String(event.occurred_at ?? "");
    meta.append(time);
    const parts = [];
    if (event.link && event.link.path) parts.push(`link /${event.link.path}`);
    parts.push(...origin(event));
    if (parts.length) meta.append(` · ${parts.join(" · ")}`);
    meta.append(" · ", el("span", "mono nowrap", String(event.id ?? "")));
    li.append(meta);
    rows.insertBefore(li, rows.firstChild);
    while (rows.childElementCount > MAX_ROWS) rows.removeChild(rows.lastChild);
  }

  function report(text) {
    status.textContent = paused
      ? `Paused: ${held.length} new event${held.length === 1 ? "" : "s"} held.`
      : text ?? `Live: ${received} event${received === 1 ? "" : "s"} since this page opened.`;
  }

  toggle.addEventListener("click", () => {
    paused = !paused;
    toggle.textContent = paused ? "Resume" : "Pause";
    toggle.setAttribute("aria-pressed", String(paused));
    if (!paused) {
      for (const event of held) show(event);
      held = [];
    }
    report();
  });

  // EventSource reconnects by itself, sending the last id as Last-Event-ID: nothing is missed.
  const source = new EventSource(section.getAttribute("data-live-stream"));
  source.addEventListener("open", () => report());
  source.addEventListener("error", () => {
    if (!paused) report("Disconnected: reconnecting…");
  });
  source.addEventListener("feed_event", (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    received++;
    if (paused) held.push(event);
    else show(event);
    report();
  });
})();
