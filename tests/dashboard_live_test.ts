// The dashboard's Live events page and its session-authenticated stream over real HTTP.
import assert from "node:assert/strict";
import { ingestMany } from "./helpers/client.ts";
import { getPage, postForm, signInOverHttp } from "./helpers/dashboard.ts";
import {
  adminHeaders,
  call,
  createFeedToken,
  createProject,
  startTestServer,
} from "./helpers/server.ts";

const srv = await startTestServer();
Deno.test.afterAll(() => srv.close());

interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
}

/** Reads SSE messages from a response until `count` feed events arrived. */
async function readEvents(res: Response, count: number): Promise<SseMessage[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const out: SseMessage[] = [];
  let buffer = "";
  const deadline = setTimeout(() => reader.cancel(), 20_000);
  try {
    while (out.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const m: SseMessage = {};
        for (const line of block.split("\n")) {
          const [field, ...rest] = line.split(": ");
          if (field === "id" || field === "event" || field === "data") m[field] = rest.join(": ");
        }
        if (m.event === "feed_event") out.push(m);
      }
    }
  } finally {
    clearTimeout(deadline);
    await reader.cancel().catch(() => {});
  }
  return out;
}

Deno.test("dashboard live: the page and its stream need a session", async () => {
  const p = await createProject(srv.url);
  for (const path of ["live", "live/stream"]) {
    const res = await getPage(srv.url, `/dashboard/environments/${p.productionId}/${path}`);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/dashboard/sign-in");
  }
});

Deno.test("dashboard live: the page has its tab and script; events ingested after opening arrive on the stream", async () => {
  const p = await createProject(srv.url);
  const client = await signInOverHttp(srv.url);
  const base = `/dashboard/environments/${p.productionId}`;
  const page = await getPage(srv.url, `${base}/live`, client);
  assert.equal(page.status, 200);
  assert.match(page.text, /aria-current="page"[^>]*>Live events<|>Live events</);
  assert.match(page.text, /<script src="\/dashboard\/assets\/live\.js\?v=[0-9a-f]+" defer/);
  assert.match(page.text, new RegExp(`data-live-stream="${base}/live/stream"`));
  assert.doesNotMatch(page.text, /<script>/);

  // The feed is captured while the environment has a feed token or a destination.
  await createFeedToken(srv.url, p.productionId);
  // Events from before the stream opened are not replayed: it starts at the head. Custom events
  // carry their id as their name, so the stream shows which ones it sent.
  await ingestMany(srv.url, p.key, 3, { prefix: "old", type: "custom" });
  const res = await fetch(`${srv.url}${base}/live/stream`, { headers: { cookie: client.cookie } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  assert.match(res.headers.get("content-security-policy") ?? "", /connect-src 'self'/);
  const reading = readEvents(res, 5);
  const sent = await ingestMany(srv.url, p.key, 5, { prefix: "new", type: "custom" });
  const events = await reading;
  // The first five events on the stream are the new ones, in order: none of the old three.
  assert.deepEqual(events.map((e) => JSON.parse(e.data!).name), sent);
  const ids = events.map((e) => JSON.parse(e.data!).id as string);
  assert.equal(new Set(ids).size, 5);
  assert.ok(events.every((e) => typeof e.id === "string" && e.id !== ""));

  // Reconnecting with the last id (what EventSource does) resumes after it.
  const firstId = events[1]!.id!;
  const again = await fetch(`${srv.url}${base}/live/stream`, {
    headers: { cookie: client.cookie, "Last-Event-ID": firstId },
  });
  assert.equal(again.status, 200);
  const rest = await readEvents(again, 3);
  assert.deepEqual(rest.map((e) => e.id), events.slice(2).map((e) => e.id));
});

Deno.test("dashboard live: a bad Last-Event-ID or environment is a 4xx, never a 500", async () => {
  const p = await createProject(srv.url);
  const client = await signInOverHttp(srv.url);
  const bad = await fetch(`${srv.url}/dashboard/environments/${p.productionId}/live/stream`, {
    headers: { cookie: client.cookie, "Last-Event-ID": "not-a-cursor" },
  });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
  for (const id of ["999999999", "abc"]) {
    const res = await getPage(srv.url, `/dashboard/environments/${id}/live/stream`, client);
    assert.ok(res.status >= 400 && res.status < 500, `${id}: ${res.status}`);
  }
});

Deno.test("dashboard live: signing out ends an open stream within seconds", async () => {
  const p = await createProject(srv.url);
  await createFeedToken(srv.url, p.productionId);
  const client = await signInOverHttp(srv.url);
  const res = await fetch(`${srv.url}/dashboard/environments/${p.productionId}/live/stream`, {
    headers: { cookie: client.cookie },
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read(); // the stream's opening comment
  const out = await postForm(srv.url, "/dashboard/sign-out", client, { _csrf: client.csrf });
  assert.equal(out.status, 303);
  const signedOutAt = performance.now();
  // The stream ends by itself (done), with no event and well within 5 s.
  const deadline = setTimeout(() => reader.cancel(), 10_000);
  let done = false;
  while (!done) done = (await reader.read()).done;
  clearTimeout(deadline);
  assert.ok(performance.now() - signedOutAt < 5_000, "ended within 5 s");
});

Deno.test("dashboard live: removing a member ends their open stream within seconds", async () => {
  const p = await createProject(srv.url);
  await createFeedToken(srv.url, p.productionId);
  const made = await call(srv.url, "POST", "/api/v1/admin/accounts", {
    headers: adminHeaders,
    body: { email: "live@example.test", name: "Live" },
  });
  const members = `/api/v1/admin/projects/${p.hashid}/members`;
  await call(srv.url, "PUT", `${members}/${made.body.account.id}`, {
    headers: adminHeaders,
    body: { role: "owner" },
  });
  const password = "a live password 123";
  const setup = await postForm(srv.url, "/dashboard/setup", { cookie: "" }, {
    token: new URL(made.body.setup_url).searchParams.get("token")!,
    password,
    confirm: password,
  });
  const cookie = setup.headers.get("set-cookie")!.split(";")[0]!;
  const res = await fetch(`${srv.url}/dashboard/environments/${p.productionId}/live/stream`, {
    headers: { cookie },
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read(); // the stream's opening comment
  // Another owner first: the last one cannot leave.
  const other = await call(srv.url, "POST", "/api/v1/admin/accounts", {
    headers: adminHeaders,
    body: { email: "stays@example.test", name: "Stays" },
  });
  await call(srv.url, "PUT", `${members}/${other.body.account.id}`, {
    headers: adminHeaders,
    body: { role: "owner" },
  });
  const removed = await call(srv.url, "DELETE", `${members}/${made.body.account.id}`, {
    headers: adminHeaders,
  });
  assert.equal(removed.status, 204);
  const removedAt = performance.now();
  const deadline = setTimeout(() => reader.cancel(), 10_000);
  let done = false;
  while (!done) done = (await reader.read()).done;
  clearTimeout(deadline);
  assert.ok(performance.now() - removedAt < 5_000, "ended within 5 s");
});
