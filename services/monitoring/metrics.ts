// The service's Prometheus metrics (docs/operations.md, "Metrics"): what this process counts as it
// serves (here, imported by the services that count), and what each scrape reads from the
// database and the process (scrape.ts, imported only by the internal listener). One set per process,
// served on METRICS_PORT (rest/internal.ts); every instance is scraped on its own.
//
// No label takes a value a client chooses: `route` is the route template (`/:link_path`, never
// the path), `method` one of the HTTP methods below or `other`, `status` a number, `type` one of
// the event types, `state` one of PostgreSQL's connection states, and `destination` a
// destination's numeric id. Destinations exist only as an admin or maintainer creates them, and a
// deleted one's series leave at the next scrape: their number is the number of destinations.
import { Counter, Histogram, Registry } from "./exposition.ts";

/** This process's metrics; what a scrape reads besides them is services/monitoring/scrape.ts. */
export const registry = new Registry();

/** Upper bounds of the request latency buckets, in seconds: 1 ms to 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const requestDuration = registry.register(
  new Histogram(
    "linkfeed_http_request_duration_seconds",
    "HTTP requests served, by route template, method and status, with their latency in seconds.",
    ["route", "method", "status"],
    LATENCY_BUCKETS,
  ),
);

const METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
]);

/**
 * One request served: `route` is the template that answered it (hono's matched route), never
 * the path. Called by the request frame (rest/middleware.ts) once per request.
 */
export function observeRequest(route: string, method: string, status: number, ms: number): void {
  // Route, then method, then status: three Map lookups of values at hand, no key built per
  // request (services/monitoring/exposition.ts says why this is not prom-client).
  const known = METHODS.has(method) ? method : "other";
  let byMethod = requestSeries.get(route);
  if (!byMethod) requestSeries.set(route, byMethod = new Map());
  let byStatus = byMethod.get(known);
  if (!byStatus) byMethod.set(known, byStatus = new Map());
  let series = byStatus.get(status);
  if (!series) {
    series = requestDuration.child([route, known, String(status)]);
    byStatus.set(status, series);
  }
  series.observe(ms / 1000);
}

/** The request histogram's series by route, method (or "other") and status. */
const requestSeries = new Map<
  string,
  Map<string, Map<number, { observe(value: number): void }>>
>();

const eventsIngested = registry.register(
  new Counter(
    "linkfeed_events_ingested_total",
    "Events stored in the analytics history (link-host views included), by type.",
    ["type"],
  ),
);

/** Events stored by one committed batch, by their types. */
export function countIngested(types: Iterable<string>): void {
  for (const type of types) eventsIngested.inc([type]);
}

const feedPagesRead = registry.register(
  new Counter(
    "linkfeed_feed_pages_read_total",
    "Feed pages served to readers (REST, GraphQL and live tails; push deliveries not included).",
  ),
).child();
const feedEventsRead = registry.register(
  new Counter("linkfeed_feed_events_read_total", "Events in the feed pages served to readers."),
).child();

/** A feed page served to a reader, with its number of events. */
export function countFeedPage(events: number): void {
  feedPagesRead.inc();
  feedEventsRead.inc(events);
}

export const batchesDelivered = registry.register(
  new Counter(
    "linkfeed_webhook_batches_delivered_total",
    "Webhook batches a destination's receiver answered with 2xx, by this instance.",
    ["destination"],
  ),
);
export const eventsDelivered = registry.register(
  new Counter(
    "linkfeed_webhook_events_delivered_total",
    "Events in the webhook batches delivered, by this instance.",
    ["destination"],
  ),
);
export const attemptsFailed = registry.register(
  new Counter(
    "linkfeed_webhook_attempts_failed_total",
    "Webhook deliveries that failed and will be retried (network error, timeout, non-2xx), by this instance.",
    ["destination"],
  ),
);

/** A batch of `events` events delivered to destination `id`. */
export function countDelivered(id: number, events: number): void {
  const labels = [String(id)];
  batchesDelivered.inc(labels);
  eventsDelivered.inc(labels, events);
}

/** A failed delivery attempt to destination `id`. */
export function countFailedAttempt(id: number): void {
  attemptsFailed.inc([String(id)]);
}
