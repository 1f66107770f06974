// The soak's service processes: real `main.ts` processes over one PostgreSQL database, killed
// with SIGKILL and restarted by the chaos schedule, and the one HTTP client every traffic source
// goes through (round-robin over the live instances, failover on connection errors, every answer
// accounted for the "no 5xx but the contract's 503" check).

const ROOT = new URL("..", import.meta.url).pathname;
const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** One answer, read whole. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The instance (index) that answered. */
  instance: number;
}

/** A 5xx that is not the contract's 503 with Retry-After. */
export interface ServerErrorRecord {
  label: string;
  instance: number;
  status: number;
  retryAfter: string | null;
  requestId: string | null;
  body: string;
  at: number;
}

export interface KillRecord {
  instance: number;
  pid: number;
  /** Date.now() when SIGKILL was sent. */
  at: number;
}

interface Instance {
  index: number;
  generation: number;
  pid: number;
  /** null while the instance is down (killed, or starting again). */
  url: string | null;
  startedAt: number;
  child: Deno.ChildProcess | null;
  done: Promise<void>;
  /** Set by kill() and stop(): any other exit is the process dying on its own. */
  exitExpected: boolean;
}

/** A process that exited without being told to: a crash. */
export interface CrashRecord {
  instance: number;
  pid: number;
  at: number;
  status: string;
  /** The end of its stderr and stdout. */
  tail: string;
  logFile: string;
}

/** Counts per traffic label: statuses, connection errors (killed instance, timeout). */
export interface LabelStats {
  statuses: Map<number, number>;
  connectionErrors: number;
}

export interface ClusterOptions {
  env: Record<string, string>;
  /** Where each process's stdout and stderr are written (one file per process generation). */
  logDir: string;
  count: number;
  requestTimeoutMs?: number;
}

export class ConnectionFailed extends Error {
  override name = "ConnectionFailed";
}

export class Cluster {
  readonly instances: Instance[] = [];
  readonly kills: KillRecord[] = [];
  readonly restarts: { instance: number; at: number; tookMs: number }[] = [];
  readonly serverErrors: ServerErrorRecord[] = [];
  readonly stats = new Map<string, LabelStats>();
  /** 503s with Retry-After, by error code (`unavailable`, `rate_limited`). */
  readonly contract503 = new Map<string, number>();
  readonly logFiles: string[] = [];
  /** Why requests failed without an answer, by message. */
  readonly connectionErrorKinds = new Map<string, number>();
  /** Processes that exited on their own (each was started again, as a supervisor would). */
  readonly crashes: CrashRecord[] = [];
  #next = 0;
  #stopping = false;
  /** Per instance: the supervisor's restart after a crash, while it runs. */
  #restarting: Promise<void>[] = [];
  #options: ClusterOptions;

  constructor(options: ClusterOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    await Deno.mkdir(this.#options.logDir, { recursive: true });
    for (let i = 0; i < this.#options.count; i++) {
      this.instances.push({
        index: i,
        generation: 0,
        pid: 0,
        url: null,
        startedAt: 0,
        child: null,
        done: Promise.resolve(),
        exitExpected: false,
      });
    }
    await Promise.all(this.instances.map((inst) => this.#spawn(inst)));
  }

  /** SIGKILL: no shutdown handler runs, pending link views and open streams die with it. */
  async kill(index: number): Promise<KillRecord> {
    const inst = this.instances[index]!;
    const record = { instance: index, pid: inst.pid, at: Date.now() };
    inst.url = null;
    inst.exitExpected = true;
    try {
      inst.child?.kill("SIGKILL");
    } catch { /* already gone */ }
    await inst.done;
    inst.child = null;
    this.kills.push(record);
    return record;
  }

  async restart(index: number): Promise<void> {
    const started = Date.now();
    await this.#restarting[index];
    if (this.instances[index]!.url !== null) return; // its supervisor got there first
    await this.#spawn(this.instances[index]!);
    this.restarts.push({ instance: index, at: Date.now(), tookMs: Date.now() - started });
  }

  /** SIGTERM to every live process (a clean shutdown), then waits for them. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.instances.map(async (inst) => {
      inst.url = null;
      inst.exitExpected = true;
      try {
        inst.child?.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          inst.child?.kill("SIGKILL");
        } catch { /* gone */ }
      }, 15_000);
      await inst.done;
      clearTimeout(timer);
    }));
  }

  /** Live instances, in index order. */
  live(): Instance[] {
    return this.instances.filter((i) => i.url !== null);
  }

  /** The next live instance, round-robin; null when none is up. */
  pick(): Instance | null {
    const n = this.instances.length;
    for (let k = 0; k < n; k++) {
      const inst = this.instances[(this.#next + k) % n]!;
      if (inst.url !== null) {
        this.#next = (inst.index + 1) % n;
        return inst;
      }
    }
    return null;
  }

  /**
   * One request, answered by some instance: round-robin (or `instance` when given), and on a
   * connection error (the instance was just killed) the next live one, up to `attempts`
   * instances. Throws ConnectionFailed when none answered: the caller then retries later, as a
   * client behind a load balancer would. Every answer is counted under `label`.
   */
  async request(
    label: string,
    path: string,
    init: RequestInit = {},
    options: { instance?: number; attempts?: number } = {},
  ): Promise<Answer> {
    const stats = this.#stats(label);
    const attempts = options.attempts ?? this.instances.length;
    let lastError: unknown = null;
    for (let a = 0; a < attempts; a++) {
      const inst = options.instance !== undefined ? this.instances[options.instance]! : this.pick();
      if (!inst?.url) break;
      try {
        const res = await fetch(inst.url + path, {
          ...init,
          redirect: "manual",
          signal: AbortSignal.timeout(this.#options.requestTimeoutMs ?? 15_000),
        });
        // A live stream that opened is not read here (it would not end): its status is the answer.
        const streaming = res.headers.get("content-type")?.startsWith("text/event-stream");
        const text = streaming ? "" : await res.text();
        if (streaming) await res.body?.cancel();
        const answer = { status: res.status, headers: res.headers, text, instance: inst.index };
        this.account(label, answer);
        return answer;
      } catch (err) {
        // Reset by a SIGKILL, refused while restarting, or no answer in time: the outcome is
        // unknown, so only idempotent requests may be sent again (callers make sure of that).
        stats.connectionErrors++;
        const why = err instanceof Error
          ? `${err.name}: ${err.message}`.slice(0, 160)
          : String(err);
        this.connectionErrorKinds.set(why, (this.connectionErrorKinds.get(why) ?? 0) + 1);
        lastError = err;
        if (options.instance !== undefined) break;
      }
    }
    throw new ConnectionFailed(`${label}: no instance answered`, { cause: lastError });
  }

  /** Counts one answer; a 5xx other than a 503 with Retry-After is recorded as a failure. */
  account(label: string, answer: Omit<Answer, "text"> & { text?: string }): void {
    const stats = this.#stats(label);
    stats.statuses.set(answer.status, (stats.statuses.get(answer.status) ?? 0) + 1);
    if (answer.status < 500) return;
    const retryAfter = answer.headers.get("retry-after");
    if (answer.status === 503 && retryAfter !== null && /^[0-9]+$/.test(retryAfter)) {
      const code = errorCode(answer.text ?? "") ?? "(no code)";
      this.contract503.set(code, (this.contract503.get(code) ?? 0) + 1);
      return;
    }
    this.serverErrors.push({
      label,
      instance: answer.instance,
      status: answer.status,
      retryAfter,
      requestId: answer.headers.get("x-request-id"),
      body: (answer.text ?? "").slice(0, 300),
      at: Date.now(),
    });
  }

  /** A connection error seen outside request() (a live stream that broke). */
  connectionError(label: string): void {
    this.#stats(label).connectionErrors++;
  }

  #stats(label: string): LabelStats {
    let s = this.stats.get(label);
    if (!s) {
      s = { statuses: new Map(), connectionErrors: 0 };
      this.stats.set(label, s);
    }
    return s;
  }

  /** A crashed process is recorded and started again, as a process supervisor would. */
  #supervise(inst: Instance, pid: number, status: Deno.CommandStatus, file: string) {
    if (inst.exitExpected || this.#stopping) return;
    inst.url = null;
    inst.child = null;
    const crash: CrashRecord = {
      instance: inst.index,
      pid,
      at: Date.now(),
      status: JSON.stringify(status),
      tail: "",
      logFile: file,
    };
    this.crashes.push(crash);
    this.#restarting[inst.index] = (async () => {
      const text = await Deno.readTextFile(file).catch(() => "");
      crash.tail = text.split("\n").filter((l) => !l.startsWith('{"time"')).join("\n")
        .slice(-1500);
      if (!this.#stopping) await this.#spawn(inst).catch(() => {});
    })();
  }

  async #spawn(inst: Instance): Promise<void> {
    inst.generation++;
    inst.exitExpected = false;
    const file = `${this.#options.logDir}/instance-${inst.index}.${inst.generation}.log`;
    this.logFiles.push(file);
    const log = await Deno.open(file, { create: true, write: true, truncate: true });
    // The service's own environment only (as in tests/helpers/process.ts), plus what Deno
    // needs to find its cache.
    const passThrough: Record<string, string> = {};
    for (const name of ["HOME", "DENO_DIR", "PATH"]) {
      const v = Deno.env.get(name);
      if (v !== undefined) passThrough[name] = v;
    }
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", MAIN],
      cwd: ROOT,
      env: { ...passThrough, PORT: "0", NO_COLOR: "1", ...this.#options.env },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).spawn();
    inst.child = child;
    inst.pid = child.pid;
    let resolveUrl!: (url: string) => void;
    const url = new Promise<string>((r) => (resolveUrl = r));
    const encoder = new TextEncoder();
    // Both streams go to the file as they come; stdout is scanned for the listening line until
    // it shows. A process writing its log must never wait for us: pump without pause.
    const pump = async (stream: ReadableStream<Uint8Array>, scan: boolean) => {
      const decoder = new TextDecoder();
      let seen = "";
      for await (const chunk of stream) {
        await log.write(chunk);
        if (!scan) continue;
        seen += decoder.decode(chunk, { stream: true });
        const m = seen.match(/"msg":"listening","url":"http:\/\/[^":]+:(\d+)"/);
        if (m) {
          resolveUrl(`http://127.0.0.1:${m[1]}`);
          scan = false;
          seen = "";
        } else if (seen.length > 1_000_000) seen = seen.slice(-10_000);
      }
    };
    const pumps = Promise.all([pump(child.stdout, true), pump(child.stderr, false)]);
    inst.done = child.status.then(async (status) => {
      await pumps.catch(() => {});
      await log.write(encoder.encode(`\n# exited: ${JSON.stringify(status)}\n`)).catch(() => {});
      log.close();
      this.#supervise(inst, child.pid, status, file);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const listening = await Promise.race([
        url,
        inst.done.then(() => {
          throw new Error(`instance ${inst.index} exited before listening (see ${file})`);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`instance ${inst.index} not listening in 60 s (see ${file})`)),
            60_000,
          );
        }),
      ]);
      inst.url = listening;
      inst.startedAt = Date.now();
    } catch (err) {
      inst.exitExpected = true;
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The contract error body's `code`, if the text is one. */
export function errorCode(text: string): string | null {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown } };
    return typeof body.error?.code === "string" ? body.error.code : null;
  } catch {
    return null;
  }
}
