// The Live events page: reads the session's event stream (Server-Sent Events, same origin) and
// shows the events newest first. Every value goes in with textContent, never as HTML. Pause holds
// incoming events (none is dropped) and shows them on resume.
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

  function cell(text, className) {
    const td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  function show(event) {
    const tr = document.createElement("tr");
    tr.appendChild(cell(String(event.occurred_at ?? ""), "mono"));
    tr.appendChild(cell(String(event.type ?? "")));
    tr.appendChild(cell(event.link && event.link.path ? `/${event.link.path}` : "–", "mono"));
    tr.appendChild(cell(String(event.id ?? ""), "mono"));
    rows.insertBefore(tr, rows.firstChild);
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
