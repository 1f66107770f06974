// Attribution at ingestion (CONTRACT "Attribution"; docs/analytics.md): which link each event of
// a batch counts for, and how it was decided.
//
// In order of precedence, for an event the app sent (never a link-host view, which is its own
// click):
// 1. `attribution.click_id`: a click id of this environment (services/attribution/click_ids.ts)
//    whose click is at most the project's window before the event's `occurred_at`;
// 2. `link_path`: a link of the environment;
// 3. `user.id`: the link of the user's first touch in the window (`first_touch`) or the latest
//    (`last_touch`), a touch being an event of that user attributed by 1 or 2.
// An unknown or expired click id, or an unknown path, attributes nothing and is kept as sent.
//
// Decided once, when the event is stored, from the touches stored by then and those earlier in
// its batch; the envelope records the decision and is never rewritten, so the feed, the
// webhooks and every figure agree. Concurrent batches that both read and write one user's
// touches take turns (a transaction lock per user, taken before the touches are read): each sees
// the other's touches whole or not at all, in commit order, so two batches never attribute one
// new user's events to different first touches. A batch that only reads a user's touches, or
// only writes them, needs no turn (planReads says why).
import type { Db } from "../../db/connect.ts";
import { jsonColumn } from "../../db/params.ts";
import type { NewEvent } from "../events/event.ts";
import type { Click, ClickIds } from "./click_ids.ts";
import { MAX_CLICK_ID_LENGTH } from "./click_ids.ts";
import { MAX_WINDOW_DAYS } from "./purge.ts";

/** A link as ingestion resolves it (the envelope's `link`). */
export interface LinkRef {
  id: number;
  path: string;
  /** The project's link domain when the event is recorded: it fixes the envelope's access_path. */
  link_domain: string | null;
}

export type AttributionMethod = "click_id" | "link_path" | "user";

/** How one event was attributed. */
export interface Decision {
  method: AttributionMethod;
  link: LinkRef;
  clickId?: string;
  clickedAt?: Date;
}

/** A touch this batch stores: an event with a user attributed by click id or link path. */
export interface NewTouch {
  eventId: string;
  userId: string;
  occurredAt: Date;
  decision: Decision;
}

export type AttributionModel = "first_touch" | "last_touch";

/** The longest `user.id` that attributes: longer ids are stored but never match a touch. */
export const MAX_USER_ID_LENGTH = 256;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The `user.id` that attribution keys on, when the event has a usable one. */
export function attributedUserId(e: NewEvent): string | null {
  const id = e.user?.["id"];
  return typeof id === "string" && id.length > 0 && id.length <= MAX_USER_ID_LENGTH ? id : null;
}

/** The click id the event carries in `attribution.click_id`, as sent. */
function sentClickId(e: NewEvent): string | null {
  const id = e.attribution?.["click_id"];
  return typeof id === "string" && id.length <= MAX_CLICK_ID_LENGTH ? id : null;
}

/** Whether the batch needs more than its link paths to be attributed. */
export function needsAttribution(events: readonly NewEvent[]): boolean {
  return events.some((e) =>
    e.type !== "view" && (attributedUserId(e) !== null || sentClickId(e) !== null)
  );
}

interface ContextRow {
  window_days: number;
  model: AttributionModel;
  link_domain: string | null;
  id: number | null;
  path: string | null;
}

/** A probe's answer: times in epoch milliseconds, which cost the driver less than dates. */
interface TouchRow {
  /** The position (from 1) of the probe's user. */
  ord: number;
  occurred_ms: number;
  event_id: string;
  click_id: string | null;
  clicked_ms: number | null;
  id: number;
  path: string;
}

interface Found {
  occurredAt: Date;
  eventId: string;
  /** The decision of the events it attributes (method "user"), shared by all of them. */
  decision: Decision;
}

/**
 * Decides every event's attribution (undefined: none) and the touches the batch adds. Reads,
 * in one round trip on the batch's transaction: the locks of the users planReads names, the
 * project's window and model with the links named by paths and click ids, and the stored touch
 * of each user with an event its own click id or path does not settle (one probe of
 * attribution_touches_user per such user; see storedTouch for the rare second one).
 */
export async function attributeBatch(
  db: Db,
  environmentId: number,
  clickIds: ClickIds | undefined,
  batch: readonly NewEvent[],
  known: readonly LinkRef[],
  /**
   * The batch's event ids, asked for once the users' locks are held: a user's touches are then
   * stored in the order of their ids (within an instance), which breaks ties of occurred_at.
   */
  newIds: () => string[],
  /** Lock and probe every user of the batch (see UnreadTouches). */
  probeAll = false,
): Promise<{ decisions: (Decision | undefined)[]; touches: NewTouch[]; eventIds: string[] }> {
  // A click id repeated in the batch (a device's install and opens) is checked once.
  const read = new Map<string, Click | null>();
  const clicks = batch.map((event): Click | null => {
    const id = event.type === "view" || !clickIds ? null : sentClickId(event);
    if (id === null) return null;
    let click = read.get(id);
    if (click === undefined) {
      click = clickIds!.read(id);
      if (click && click.environmentId !== environmentId) click = null;
      read.set(id, click);
    }
    return click;
  });
  const users = batch.map((event) => event.type === "view" ? null : attributedUserId(event));
  const plan = planReads(batch, clicks, users, probeAll);
  const links = new Map(known.map((l) => [l.path, l]));
  const paths = [
    ...new Set(
      batch.flatMap((e) => e.link_path != null && !links.has(e.link_path) ? [e.link_path] : []),
    ),
  ];
  const linkIds = [...new Set(clicks.flatMap((c) => c ? [c.linkId] : []))];
  // Each user's earliest event in the batch: one probe per user finds the touch for all of them
  // (see storedTouch).
  const earliest = new Map<string, number>();
  users.forEach((u, i) => {
    if (u === null) return;
    const t = batch[i]!.occurred_at.getTime();
    const seen = earliest.get(u);
    if (seen === undefined || t < seen) earliest.set(u, t);
  });
  const probed = [...plan.probe];
  const locked = [...plan.lock];

  // Arrays go as JSON (db/params.ts says why).
  const [, context, touchRows] = await Promise.all([
    locked.length === 0 ? null : db`
      select count(locked)
      from (
        select pg_advisory_xact_lock(k)::text as locked
        from (
          select distinct hashtextextended(${environmentId}::text || ':' || u, 0) as k
          from json_array_elements_text((${jsonColumn(locked)}::text)::json) as u
          -- In one order: two batches sharing users queue instead of deadlocking.
          order by k
          offset 0
        ) k
      ) s
    `,
    // The project's settings, with the links named by paths and click ids (none: one row).
    db<(ContextRow)[]>`
      select p.attribution_window_days as window_days, p.attribution_model as model,
        p.link_domain, l.id, l.path
      from environments e join projects p on p.id = e.project_id
      left join links l on l.environment_id = e.id and (
        l.path = any(array(
          select json_array_elements_text((${jsonColumn(paths)}::text)::json)
        ))
        or l.id = any(array(
          select json_array_elements_text((${jsonColumn(linkIds)}::text)::json)::int
        ))
      )
      where e.id = ${environmentId}
    `,
    probed.length === 0 ? [] : probeTouches(
      db,
      environmentId,
      probed,
      probed.map((u) => earliest.get(u)!),
    ),
  ]);
  const linkRows = context.flatMap((r): LinkRef[] =>
    r.id === null ? [] : [{ id: r.id, path: r.path!, link_domain: r.link_domain }]
  );
  for (const row of linkRows) links.set(row.path, row);
  const byId = new Map(linkRows.map((l) => [l.id, l]));
  const windowMs = (context[0]?.window_days ?? 30) * DAY_MS;
  const model = context[0]?.model ?? "first_touch";
  const linkDomain = context[0]?.link_domain ?? null;
  const stored = new Map(touchRows.map((t) => [probed[t.ord - 1]!, found(t, linkDomain)]));

  /** The decision event `i`'s own click id or link path makes (a touch, with a user), if any. */
  const ownDecision = (i: number): Decision | undefined => {
    const event = batch[i]!;
    const click = clicks[i];
    if (!click && event.link_path == null) return undefined;
    const clickLink = click ? byId.get(click.linkId) : undefined;
    if (
      click && clickLink && event.occurred_at.getTime() - click.clickedAt.getTime() <= windowMs
    ) {
      return {
        method: "click_id",
        link: clickLink,
        clickId: sentClickId(event)!,
        clickedAt: click.clickedAt,
      };
    }
    const link = event.link_path == null ? undefined : links.get(event.link_path);
    return link && { method: "link_path", link };
  };
  const own = batch.map((_, i) => ownDecision(i));
  // Users presumed settled by their own click ids and paths (planReads), and not: a click older
  // than the project's window, a link that is gone, a path that names none. Their touches are
  // read now; a user the batch also writes touches for needed its lock first (UnreadTouches).
  const wanting = new Set<string>();
  const touching = new Set<string>();
  users.forEach((u, i) => {
    if (u === null) return;
    if (own[i]) touching.add(u);
    else if (!plan.probe.has(u)) wanting.add(u);
  });
  for (const u of wanting) if (touching.has(u)) throw new UnreadTouches();
  if (wanting.size > 0) {
    const late = [...wanting];
    const rows = await probeTouches(db, environmentId, late, late.map((u) => earliest.get(u)!));
    for (const row of rows) stored.set(late[row.ord - 1]!, found(row, linkDomain));
  }
  // A first touch found from the user's earliest event is before a later event's window when the
  // batch spans more than the window's edge: that event's first touch is probed again, once.
  const again: number[] = [];
  if (model === "first_touch") {
    batch.forEach((event, i) => {
      const user = users[i] ?? null;
      // An event its own click id or path settles needs no touch.
      const t = user === null || own[i] ? undefined : stored.get(user);
      if (t && t.occurredAt.getTime() < event.occurred_at.getTime() - windowMs) again.push(i);
    });
  }
  const reprobed = new Map<number, Found>();
  if (again.length > 0) {
    const rows = await probeTouches(
      db,
      environmentId,
      again.map((i) => users[i]!),
      again.map((i) => batch[i]!.occurred_at.getTime()),
    );
    for (const row of rows) reprobed.set(again[row.ord - 1]!, found(row, linkDomain));
  }
  /** The stored touch that attributes event `i` of `user`, if one does. */
  const storedTouch = (i: number, user: string): Found | undefined => {
    const since = batch[i]!.occurred_at.getTime() - windowMs;
    const t = reprobed.get(i) ?? stored.get(user);
    return t && t.occurredAt.getTime() >= since ? t : undefined;
  };

  const eventIds = newIds();
  const touches: NewTouch[] = [];
  const batchTouches = new Map<string, Found[]>();
  const decisions = batch.map((event, i): Decision | undefined => {
    const eventId = eventIds[i]!;
    if (event.type === "view") {
      const link = event.link_path == null ? undefined : links.get(event.link_path);
      return link && { method: "link_path", link };
    }
    const user = users[i]!;
    let decision = own[i];
    if (!decision && user !== null) {
      const fromStore = storedTouch(i, user);
      const earlier = batchTouches.get(user);
      if (!earlier) decision = fromStore?.decision;
      else {
        const since = event.occurred_at.getTime() - windowMs;
        const candidates = earlier.filter((t) => t.occurredAt.getTime() >= since);
        if (fromStore) candidates.push(fromStore);
        decision = pick(candidates, model)?.decision;
      }
    }
    if (decision && decision.method !== "user" && user !== null) {
      touches.push({ eventId, userId: user, occurredAt: event.occurred_at, decision });
      const list = batchTouches.get(user) ?? [];
      list.push({
        occurredAt: event.occurred_at,
        eventId,
        decision: { ...decision, method: "user" },
      });
      batchTouches.set(user, list);
    }
    return decision;
  });
  return { decisions, touches, eventIds };
}

/**
 * Thrown by attributeBatch when a user presumed settled by its own click ids and paths
 * (planReads) has an event they do not settle after all (a click older than the project's
 * window, a link that is gone, a path that names none) beside one they do: the batch reads and
 * writes that user's touches, so it needed the user's lock before the read, and locks are taken
 * together, in one order. The batch's transaction is rolled back and run again with every user
 * locked and probed. Nothing was written before it.
 */
export class UnreadTouches extends Error {
  constructor() {
    super("a user presumed settled by its own click ids and paths needs its touches");
  }
}

/**
 * Which users' stored touches the batch reads (`probe`: those with an event that no click id or
 * link path of its own may settle) and which of them it locks first (`lock`: those the batch
 * may also write a touch for). Two batches that each read and write one user's touches could
 * each miss the other's, so they take turns. A batch that only reads a user's touches reads them
 * in one statement, which sees another batch's whole or not at all (the order: this one first);
 * one that only writes them reads nothing (the order: this one last); either agrees with a
 * serial order of the two. The project's window, the clicks' links and the paths are known only
 * once the batch's reads answer: attributeBatch checks the presumption then. `all`: every user
 * in both.
 */
function planReads(
  batch: readonly NewEvent[],
  clicks: readonly (Click | null)[],
  users: readonly (string | null)[],
  all: boolean,
): { probe: Set<string>; lock: Set<string> } {
  const reads = new Set<string>();
  const writes = new Set<string>();
  users.forEach((user, i) => {
    if (user === null) return;
    const event = batch[i]!;
    const click = clicks[i];
    const mayTouch = all || event.link_path != null ||
      (click &&
        event.occurred_at.getTime() - click.clickedAt.getTime() <= MAX_WINDOW_DAYS * DAY_MS);
    (mayTouch ? writes : reads).add(user);
    if (all) reads.add(user);
  });
  return { probe: reads, lock: new Set([...reads].filter((u) => writes.has(u))) };
}

/**
 * One probe of attribution_touches_user per (user, since): the user's first touch that occurred
 * at or after `since` minus the window (first_touch), or the user's latest touch (last_touch),
 * whose own time the caller checks against each event's window.
 */
function probeTouches(db: Db, environmentId: number, users: string[], since: number[]) {
  return db<TouchRow[]>`
    with s as (
      select p.attribution_window_days * interval '1 day' as span, p.attribution_model as model
      from environments e join projects p on p.id = e.project_id
      where e.id = ${environmentId}
    )
    select c.ord::int, floor(extract(epoch from t.occurred_at) * 1000)::float8 as occurred_ms,
      t.event_id, t.click_id, floor(extract(epoch from t.clicked_at) * 1000)::float8 as clicked_ms,
      l.id, l.path
    from rows from (
      json_array_elements_text((${jsonColumn(users)}::text)::json),
      -- In epoch milliseconds: numbers cost JSON less than dates in text.
      json_array_elements_text((${jsonColumn(since)}::text)::json)
    ) with ordinality as c(user_id, since, ord)
    cross join s
    cross join lateral (
      (select * from attribution_touches a
        where s.model = 'first_touch' and a.environment_id = ${environmentId}
          and a.user_id = c.user_id and a.occurred_at >= to_timestamp(c.since::float8 / 1000) - s.span
        order by a.occurred_at, a.event_id limit 1)
      union all
      (select * from attribution_touches a
        where s.model = 'last_touch' and a.environment_id = ${environmentId}
          and a.user_id = c.user_id
        order by a.occurred_at desc, a.event_id desc limit 1)
    ) t
    join links l on l.id = t.link_id
  `;
}

function found(t: TouchRow, linkDomain: string | null): Found {
  return {
    occurredAt: new Date(t.occurred_ms),
    eventId: t.event_id,
    decision: {
      method: "user",
      link: { id: t.id, path: t.path, link_domain: linkDomain },
      ...(t.click_id !== null ? { clickId: t.click_id } : {}),
      ...(t.clicked_ms !== null ? { clickedAt: new Date(t.clicked_ms) } : {}),
    },
  };
}

/** The first or last touch by occurred_at (then by event id, which follows storage order). */
function pick(candidates: readonly Found[], model: AttributionModel): Found | undefined {
  let best: Found | undefined;
  for (const c of candidates) {
    if (!best) {
      best = c;
      continue;
    }
    const order = c.occurredAt.getTime() - best.occurredAt.getTime() ||
      (c.eventId < best.eventId ? -1 : c.eventId > best.eventId ? 1 : 0);
    if (model === "first_touch" ? order < 0 : order > 0) best = c;
  }
  return best;
}

/**
 * The envelope's `attribution`: what the app sent, with how the event was attributed. A view's
 * stays as the link host made it (its own click id, rule and variant).
 */
export function envelopeAttribution(
  event: NewEvent,
  decision: Decision | undefined,
): Record<string, unknown> | undefined {
  const sent = event.attribution ?? undefined;
  if (!decision || event.type === "view") return sent;
  const out: Record<string, unknown> = { ...sent };
  out["link_path"] = decision.link.path;
  out["method"] = decision.method;
  if (decision.clickId !== undefined) out["click_id"] = decision.clickId;
  if (decision.clickedAt !== undefined) out["clicked_at"] = decision.clickedAt.toISOString();
  return out;
}
