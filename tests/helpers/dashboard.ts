// Talking to the dashboard over HTTP as a browser would: sign in, keep the cookie, post forms.
import assert from "node:assert/strict";
import { ADMIN_TOKEN } from "./server.ts";

export interface DashboardClient {
  cookie: string;
  /** The session's form token, read from a page as a browser's form would carry it. */
  csrf: string;
}

export async function signInOverHttp(
  base: string,
  headers: Record<string, string> = {},
): Promise<DashboardClient> {
  const res = await fetch(`${base}/dashboard/sign-in`, {
    method: "POST",
    body: new URLSearchParams({ token: ADMIN_TOKEN }),
    headers,
    redirect: "manual",
  });
  await res.body?.cancel();
  assert.equal(res.status, 303);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const page = await fetch(`${base}/dashboard`, { headers: { cookie } });
  const html = await page.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(csrf, "the projects page carries a form token");
  return { cookie, csrf };
}

/** Posts a form as the dashboard's pages do (same origin unless `headers` says otherwise). */
export async function postForm(
  base: string,
  path: string,
  client: { cookie: string },
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  // An empty value leaves the header out (a browser that sends no Origin).
  const sent = Object.entries({ cookie: client.cookie, Origin: base, ...headers })
    .filter(([, v]) => v !== "");
  const res = await fetch(base + path, {
    method: "POST",
    body: new URLSearchParams(fields),
    headers: sent,
    redirect: "manual",
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export async function getPage(
  base: string,
  path: string,
  client?: { cookie: string },
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(base + path, {
    headers: client ? { cookie: client.cookie } : {},
    redirect: "manual",
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * Posts a multipart form with one file as a browser does: the fields first, in order (the form
 * token among them), then the file. `body` replaces the whole body when given (a hand-made one).
 */
export async function postUpload(
  base: string,
  path: string,
  client: { cookie: string },
  fields: Record<string, string>,
  file: { name: string; content: string | Uint8Array; field?: string } | null,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) {
    form.append(
      file.field ?? "file",
      new File([file.content as BlobPart], file.name, { type: "text/csv" }),
    );
  }
  const res = await fetch(base + path, {
    method: "POST",
    body: form,
    headers: { cookie: client.cookie, Origin: base, ...headers },
    redirect: "manual",
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** A person with an account (its password set through the setup link), maybe with a role. */
export interface Person {
  accountId: number;
  email: string;
  name: string;
  password: string;
}

/**
 * Creates an account through the admin API, follows its setup link as the person would (the
 * password form over HTTP) and, with `project`, gives it `role` there. A project's first member
 * must be its owner.
 */
export async function addPerson(
  base: string,
  input: { email: string; name: string; project?: string; role?: string },
): Promise<Person> {
  const auth = { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" };
  const created = await fetch(`${base}/api/v1/admin/accounts`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({ email: input.email, name: input.name }),
  });
  const body = await created.json();
  assert.equal(created.status, 201, JSON.stringify(body));
  const token = new URL(body.setup_url).searchParams.get("token")!;
  const password = `${input.name} has a long password`;
  const setup = await postForm(base, "/dashboard/setup", { cookie: "" }, {
    token,
    password,
    confirm: password,
  });
  assert.equal(setup.status, 303, setup.text);
  if (input.project) {
    const member = await fetch(
      `${base}/api/v1/admin/projects/${input.project}/members/${body.account.id}`,
      { method: "PUT", headers: auth, body: JSON.stringify({ role: input.role ?? "viewer" }) },
    );
    const text = await member.text();
    assert.equal(member.status, 200, text);
  }
  return { accountId: body.account.id, email: input.email, name: input.name, password };
}
