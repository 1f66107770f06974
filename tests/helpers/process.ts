// Runs main.ts as a real process, the way a self-hoster does, and reads what it prints.
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

export interface ServiceProcess {
  pid: number;
  url: Promise<string>;
  stderr(): string;
  stdout(): string;
  stop(): Promise<Deno.CommandStatus>;
  status: Promise<Deno.CommandStatus>;
}

export function startService(
  env: Record<string, string>,
  options: { v8Flags?: string[] } = {},
): ServiceProcess {
  const v8 = options.v8Flags?.length ? [`--v8-flags=${options.v8Flags.join(",")}`] : [];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...v8, "--allow-net", "--allow-env", "--allow-read", "--allow-write", MAIN],
    env: { PORT: "0", NO_COLOR: "1", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let err = "";
  let resolveUrl: (url: string) => void;
  const url = new Promise<string>((r) => (resolveUrl = r));
  const pump = async (stream: ReadableStream<Uint8Array>, sink: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) sink(decoder.decode(chunk, { stream: true }));
  };
  const outDone = pump(child.stdout, (s) => {
    out += s;
    const m = out.match(/"msg":"listening","url":"(http:\/\/[^"]+)"/);
    if (m) resolveUrl(m[1]!);
  });
  const errDone = pump(child.stderr, (s) => (err += s));
  const status = child.status.then(async (s) => {
    await Promise.all([outDone, errDone]);
    return s;
  });
  return {
    pid: child.pid,
    url,
    stderr: () => err,
    stdout: () => out,
    status,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      return await status;
    },
  };
}

/** Resolves with the URL once the process listens, or rejects with what it printed if it exits. */
export async function listening(p: ServiceProcess, timeoutMs = 60_000): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p.url,
      p.status.then((s) => {
        throw new Error(`exited with ${s.code}: ${p.stderr()}`);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no listen in time: ${p.stderr()}`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
