// deno run --allow-read bench/top_frames.ts [profile.cpuprofile] [--top N]: the frames of a V8
// CPU profile (as `deno task profile` writes them) by self time, as a share of the busy time
// (every sample but the idle ones), with the file and line of each. Without a file: the newest
// profile under test-output/profiles.
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: { top: { type: "string", default: "25" } },
});

async function newestProfile(): Promise<string> {
  let newest: { path: string; mtime: number } | undefined;
  for await (const entry of Deno.readDir("test-output/profiles")) {
    if (!entry.name.endsWith(".cpuprofile")) continue;
    const path = `test-output/profiles/${entry.name}`;
    const mtime = (await Deno.stat(path)).mtime?.getTime() ?? 0;
    if (!newest || mtime > newest.mtime) newest = { path, mtime };
  }
  if (!newest) throw new Error("no profile under test-output/profiles");
  return newest.path;
}

const file = positionals[0] ?? await newestProfile();
const profile: CpuProfile = JSON.parse(await Deno.readTextFile(file));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let busy = 0;
profile.samples.forEach((id, i) => {
  const frame = byId.get(id)!.callFrame;
  const dt = profile.timeDeltas[i] ?? 0;
  if (frame.functionName === "(idle)") return;
  busy += dt;
  const where = frame.url
    ? `${frame.url.replace(/^.*\/(npm|main)\//, "")}:${frame.lineNumber + 1}`
    : "";
  const key = `${frame.functionName || "(anonymous)"} ${where}`;
  self.set(key, (self.get(key) ?? 0) + dt);
});

// deno-lint-ignore no-console
const print = (s: string) => console.log(s);
print(`${file}: busy ${(busy / 1000).toFixed(0)} ms`);
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  print(`${(100 * us / busy).toFixed(1).padStart(5)}%  ${key}`);
}
