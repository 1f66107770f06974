// What every wrk run of the bench checks, and how its report is read. wrk itself counts only
// statuses >= 400 as errors, so a run of 302s or 304s, or of GraphQL errors (status 200), would
// look clean: a Lua script appended to the run's own counts every answer by status and, where
// asked, checks each expected answer's body, then prints one JSON line from wrk's done() hook.
//
// Its cost, measured on this project's 2-core development machine: against a bare Deno.serve
// answering 1 KB at -c32, wrk spends about 1 µs more CPU per request (13 to 13.8 µs instead of
// 12.5 µs), where the service spends tens of µs on each. With the hook wrk also keeps each body
// to hand it over: on a 3.3 MB answer (10,000 links of metrics) about 0.9 ms more CPU per
// request, part of it (the copy while reading) inside the latency sample, and 2.5 ms more for
// the search of an excluded string, after the sample (wrk takes it before calling the hook):
// at -c1 that means fewer requests in the run, not higher latencies. Against metrics answers of
// 90 to 150 ms this is about 1%, and both sides of each comparison check their answers.

export interface WrkExpect {
  /** The status every answer must have. */
  status: number;
  /** Each answer with that status must start with this (e.g. `{"data":{"link":{`). */
  bodyPrefix?: string;
  /** ...and contain none of these (e.g. `"errors":`). */
  bodyExcludes?: string[];
}

export interface WrkResult {
  rps: number;
  p50ms: number;
  p99ms: number;
  requests: number;
  /** Answers that were not the expected status or body, plus socket errors and timeouts. */
  errors: number;
  /** Answers by status. */
  statuses: Record<string, number>;
  /** Why the run is not a valid measurement; empty when it is. */
  problems: string[];
}

export const REPORT_MARK = "bench-wrk ";

/** Lua string literal for any ASCII or UTF-8 text: every byte but letters and digits escaped. */
function luaString(s: string): string {
  let out = '"';
  for (const b of new TextEncoder().encode(s)) {
    out += /[A-Za-z0-9 ]/.test(String.fromCharCode(b))
      ? String.fromCharCode(b)
      // Always three digits: \34 followed by a digit would read as one escape.
      : `\\${String(b).padStart(3, "0")}`;
  }
  return out + '"';
}

/**
 * The Lua appended to a run's script. Its globals start with `bench_`; the run's own script
 * must not define setup, init, response or done (wrk() refuses one that does).
 */
export function checkScript(expect: WrkExpect): string {
  const excludes = (expect.bodyExcludes ?? []).map(luaString).join(", ");
  return `
local bench_expect_status = ${expect.status}
local bench_body_prefix = ${expect.bodyPrefix === undefined ? "nil" : luaString(expect.bodyPrefix)}
local bench_body_excludes = { ${excludes} }
local bench_threads = {}
function setup(thread) table.insert(bench_threads, thread) end
function init(args)
  bench_statuses = {}
  bench_bad_bodies = 0
end
function response(status, headers, body)
  bench_statuses[status] = (bench_statuses[status] or 0) + 1
  if status == bench_expect_status and (bench_body_prefix or #bench_body_excludes > 0) then
    local ok = body ~= nil
    if ok and bench_body_prefix then
      ok = string.sub(body, 1, #bench_body_prefix) == bench_body_prefix
    end
    for _, s in ipairs(bench_body_excludes) do
      if ok and string.find(body, s, 1, true) then ok = false end
    end
    if not ok then bench_bad_bodies = bench_bad_bodies + 1 end
  end
end
function done(summary, latency, requests)
  local statuses, bad = {}, 0
  for _, t in ipairs(bench_threads) do
    for k, v in pairs(t:get("bench_statuses")) do statuses[k] = (statuses[k] or 0) + v end
    bad = bad + t:get("bench_bad_bodies")
  end
  local parts = {}
  for k, v in pairs(statuses) do parts[#parts + 1] = string.format('"%d":%d', k, v) end
  local e = summary.errors
  io.write(string.format(
    '\\n${REPORT_MARK}{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
      '"statuses":{%s},"bad_bodies":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, math.floor(latency:percentile(50)),
    math.floor(latency:percentile(99)), table.concat(parts, ","), bad,
    e.connect, e.read, e.write, e.timeout))
end
`;
}

interface Report {
  requests: number;
  duration_us: number;
  p50_us: number;
  p99_us: number;
  statuses: Record<string, number>;
  bad_bodies: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
}

/** Reads the line checkScript's done() printed in wrk's output, and judges the run by it. */
export function parseWrkReport(stdout: string, expect: WrkExpect): WrkResult {
  const line = stdout.split("\n").find((l) => l.startsWith(REPORT_MARK));
  let report: Report | undefined;
  try {
    report = line ? JSON.parse(line.slice(REPORT_MARK.length)) : undefined;
  } catch {
    report = undefined;
  }
  if (!report) {
    return {
      rps: NaN,
      p50ms: NaN,
      p99ms: NaN,
      requests: 0,
      errors: 0,
      statuses: {},
      problems: ["wrk printed no report of its answers"],
    };
  }
  const problems: string[] = [];
  const requests = report.requests;
  const expected = report.statuses[String(expect.status)] ?? 0;
  const unexpected = Object.entries(report.statuses)
    .filter(([status]) => status !== String(expect.status));
  const unexpectedCount = unexpected.reduce((n, [, count]) => n + count, 0);
  const socket = { connect: report.connect, read: report.read, write: report.write };
  const socketErrors = socket.connect + socket.read + socket.write;
  if (requests === 0) problems.push("no request completed");
  if (unexpectedCount > 0) {
    problems.push(
      `${unexpectedCount} of ${requests} answers were not ${expect.status} (${
        unexpected.map(([status, count]) => `${count}× ${status}`).join(", ")
      })`,
    );
  }
  if (report.bad_bodies > 0) {
    const wanted = [
      ...(expect.bodyPrefix === undefined ? [] : [`starting ${expect.bodyPrefix}`]),
      ...(expect.bodyExcludes ?? []).map((s) => `without ${s}`),
    ].join(", ");
    problems.push(
      `${report.bad_bodies} of ${expected} ${expect.status} answers not the expected body (${wanted})`,
    );
  }
  if (report.timeout > 0) problems.push(`${report.timeout} requests timed out`);
  if (socketErrors > 0) {
    problems.push(
      `socket errors: ${
        Object.entries(socket).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(", ")
      }`,
    );
  }
  const seconds = report.duration_us / 1e6;
  return {
    rps: seconds > 0 ? requests / seconds : NaN,
    p50ms: requests > 0 ? report.p50_us / 1000 : NaN,
    p99ms: requests > 0 ? report.p99_us / 1000 : NaN,
    requests,
    errors: unexpectedCount + report.bad_bodies + report.timeout + socketErrors,
    statuses: report.statuses,
    problems,
  };
}
