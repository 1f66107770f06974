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
// webhooks and every figure agree. Concurrent batches of one user take turns (a transaction lock
// per user, taken before the touches are read): each sees the other's touches whole or not at
// all, in commit order, so two batches never attribute one new user's events to different first
// touches.
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

interface TouchRow {
  ord: number;
  user_id: string;
  occurred_at: Date;
  event_id: string;
  click_id: string | null;
  clicked_at: Date | null;
  id: number;
  path: string;
  link_domain: string | null;
}

interface Found {
  occurredAt: Date;
  eventId: string;
  decision: Decision;
}

/**
 * Decides every event's attribution (undefined: none) and the touches the batch adds. Reads,
 * in one round trip on the batch's transaction: the users' locks, the project's window and
 * model with the links named by paths and click ids, and each user's stored touch (one probe of
 * attribution_touches_user per user of the batch; see storedTouch for the rare second one).
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
  const events = batch.map((event) => ({ event }));
  // A click id repeated in the batch (a device's install and opens) is checked once.
  const read = new Map<string, Click | null>();
  const clicks = events.map(({ event }): Click | null => {
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
  const users = events.map(({ event }) => event.type === "view" ? null : attributedUserId(event));
  // A user all of whose events a click id settles (an install through a link, typically) has
  // no stored touch to read, so neither its lock nor its probe is taken (see settledByClicks).
  const settled = probeAll ? new Set<string>() : settledByClicks(batch, clicks, users);
  const links = new Map(known.map((l) => [l.path, l]));
  const paths = [
    ...new Set(
      events.flatMap(({ event: e }) =>
        e.link_path != null && !links.has(e.link_path) ? [e.link_path] : []
      ),
    ),
  ];
  const linkIds = [...new Set(clicks.flatMap((c) => c ? [c.linkId] : []))];
  // Each user's earliest event in the batch: one probe per user finds the touch for all of them
  // (see storedTouch).
  const earliest = new Map<string, number>();
  users.forEach((u, i) => {
    if (u === null || settled.has(u)) return;
    const t = events[i]!.event.occurred_at.getTime();
    const seen = earliest.get(u);
    if (seen === undefined || t < seen) earliest.set(u, t);
  });
  const batchUsers = [...earliest.keys()];

  // Arrays go as JSON (db/params.ts says why).
  const [, context, touchRows] = await Promise.all([
    batchUsers.length === 0 ? null : db`
      select count(locked)
      from (
        select pg_advisory_xact_lock(k)::text as locked
        from (
          select distinct hashtextextended(${environmentId}::text || ':' || u, 0) as k
          from json_array_elements_text((${jsonColumn(batchUsers)}::text)::json) as u
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
    batchUsers.length === 0 ? [] : probeTouches(
      db,
      environmentId,
      batchUsers,
      batchUsers.map((u) => earliest.get(u)!),
    ),
  ]);
  const linkRows = context.flatMap((r): LinkRef[] =>
    r.id === null ? [] : [{ id: r.id, path: r.path!, link_domain: r.link_domain }]
  );
  for (const row of linkRows) links.set(row.path, row);
  const byId = new Map(linkRows.map((l) => [l.id, l]));
  const windowMs = (context[0]?.window_days ?? 30) * DAY_MS;
  const model = context[0]?.model ?? "first_touch";
  const stored = new Map(touchRows.map((t) => [t.user_id, found(t)]));
  // A first touch found from the user's earliest event is before a later event's window when the
  // batch spans more than the window's edge: that event's first touch is probed again, once.
  const again = model === "first_touch"
    ? events.flatMap(({ event }, i) => {
      const user = users[i] ?? null;
      const t = user === null ? undefined : stored.get(user);
      return t && t.occurredAt.getTime() < event.occurred_at.getTime() - windowMs ? [i] : [];
    })
    : [];
  const reprobed = new Map<number, Found>();
  if (again.length > 0) {
    const rows = await probeTouches(
      db,
      environmentId,
      again.map((i) => users[i]!),
      again.map((i) => events[i]!.event.occurred_at.getTime()),
    );
    for (const row of rows) reprobed.set(again[row.ord - 1]!, found(row));
  }
  /** The stored touch that attributes event `i` of `user`, if one does. */
  const storedTouch = (i: number, user: string): Found | undefined => {
    const since = events[i]!.event.occurred_at.getTime() - windowMs;
    const t = reprobed.get(i) ?? stored.get(user);
    return t && t.occurredAt.getTime() >= since ? t : undefined;
  };

  const eventIds = newIds();
  const touches: NewTouch[] = [];
  const batchTouches = new Map<string, Found[]>();
  const decisions = events.map(({ event }, i): Decision | undefined => {
    const eventId = eventIds[i]!;
    if (event.type === "view") {
      const link = event.link_path == null ? undefined : links.get(event.link_path);
      return link && { method: "link_path", link };
    }
    const user = users[i]!;
    const click = clicks[i];
    const occurred = event.occurred_at.getTime();
    let decision: Decision | undefined;
    const clickLink = click ? byId.get(click.linkId) : undefined;
    if (click && clickLink && occurred - click.clickedAt.getTime() <= windowMs) {
      decision = {
        method: "click_id",
        link: clickLink,
        clickId: sentClickId(event)!,
        clickedAt: click.clickedAt,
      };
    } else if (event.link_path != null && links.has(event.link_path)) {
      decision = { method: "link_path", link: links.get(event.link_path)! };
    } else if (user !== null) {
      // Presumed settled by its clicks, and not: its touches were not read.
      if (settled.has(user)) throw new UnreadTouches();
      const since = occurred - windowMs;
      const fromStore = storedTouch(i, user);
      const candidates = [
        ...(fromStore ? [fromStore] : []),
        ...(batchTouches.get(user) ?? []).filter((t) => t.occurredAt.getTime() >= since),
      ];
      const chosen = pick(candidates, model);
      if (chosen) {
        const { method: _, ...rest } = chosen.decision;
        decision = { ...rest, method: "user" };
      }
    }
    if (decision && decision.method !== "user" && user !== null) {
      touches.push({ eventId, userId: user, occurredAt: event.occurred_at, decision });
      const list = batchTouches.get(user) ?? [];
      list.push({ occurredAt: event.occurred_at, eventId, decision });
      batchTouches.set(user, list);
    }
    return decision;
  });
  return { decisions, touches, eventIds };
}

/**
 * Thrown by attributeBatch when a user presumed settled by its click ids (settledByClicks) has an
 * event they do not settle after all (a click older than the project's window, or whose link is
 * gone): that user's touches were neither locked nor read, so the batch's transaction is rolled
 * back and run again with every user locked and probed. Nothing was written before it.
 */
export class UnreadTouches extends Error {
  constructor() {
    super("a user presumed settled by its click ids needs its touches");
  }
}

/**
 * The users of the batch every event of whom carries a click id of this environment no older
 * than the longest window: those events are attributed by their clicks, whatever the user's
 * touches, so the user needs no lock and no probe (its touches are only written, which a
 * concurrent batch reading them sees whole or not at all, as it would in either serial order).
 * The project's window and the click's link are known only once the batch's reads answer;
 * attributeBatch checks the presumption then (UnreadTouches).
 */
function settledByClicks(
  batch: readonly NewEvent[],
  clicks: readonly (Click | null)[],
  users: readonly (string | null)[],
): Set<string> {
  const settled = new Set<string>();
  const unsettled = new Set<string>();
  users.forEach((user, i) => {
    if (user === null) return;
    const click = clicks[i];
    const fresh = click &&
      batch[i]!.occurred_at.getTime() - click.clickedAt.getTime() <= MAX_WINDOW_DAYS * DAY_MS;
    if (fresh) settled.add(user);
    else unsettled.add(user);
  });
  for (const user of unsettled) settled.delete(user);
  return settled;
}

/**
 * One probe of attribution_touches_user per (user, since): the user's first touch that occurred
 * at or after `since` minus the window (first_touch), or the user's latest touch (last_touch),
 * whose own time the caller checks against each event's window.
 */
function probeTouches(db: Db, environmentId: number, users: string[], since: number[]) {
  return db<TouchRow[]>`
    with s as (
      select p.attribution_window_days * interval '1 day' as span, p.attribution_model as model,
        p.link_domain
      from environments e join projects p on p.id = e.project_id
      where e.id = ${environmentId}
    )
    select c.ord::int, c.user_id, t.occurred_at, t.event_id, t.click_id, t.clicked_at, l.id,
      l.path, s.link_domain
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

function found(t: TouchRow): Found {
  return {
    occurredAt: t.occurred_at,
    eventId: t.event_id,
    decision: {
      method: "user",
      link: { id: t.id, path: t.path, link_domain: t.link_domain },
      ...(t.click_id !== null ? { clickId: t.click_id } : {}),
      ...(t.clicked_at !== null ? { clickedAt: t.clicked_at } : {}),
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
