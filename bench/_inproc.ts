import process from "node:process";
import { resolveConfig } from "../config.ts";
import { createApp } from "../app.ts";
import { systemClock } from "../services/clock.ts";
import { createLogger } from "../services/log.ts";
import { hashSecret } from "../services/secrets.ts";
import { ViewRecorder } from "../services/view_recorder.ts";
import { ADMIN_TOKEN, benchDatabase, CURSOR_SECRET, seedFeedPage } from "./lib.ts";
const db = await benchDatabase();
const { sdk, links } = await seedFeedPage(db.sql);
const config = resolveConfig({
  DATABASE_URL: "postgres://bench",
  ADMIN_TOKEN,
  LINK_BASE_URL: "https://lnk.example.test",
});
const logger = createLogger("info", () => {});
const app = createApp({
  sql: db.sql,
  config,
  clock: systemClock,
  logger,
  adminTokenHash: hashSecret(ADMIN_TOKEN),
  cursorSecret: CURSOR_SECRET,
  views: new ViewRecorder(db.sql, { clock: systemClock, linkBaseUrl: config.linkBaseUrl, logger }),
});
const path = links[0]!.path;
const LINK_FIELDS = `id title subtitle path accessPath updatedAt generatedFromPlatform data
  sdkGenerated tags active trackingCampaign trackingSource trackingMedium showPreview image
  iosCustomRedirect { url openAppIfInstalled } androidCustomRedirect { url openAppIfInstalled }
  desktopCustomRedirect { url }`;
const body = JSON.stringify({ query: `{ link(path: "${path}") { ${LINK_FIELDS} } }` });
const bare = async (req: Request) => {
  const url = new URL(req.url);
  const [row] = await db.sql`select * from links where path = ${url.pathname.slice(6)}`;
  return Response.json({ link: row });
};
const reqs = {
  bare: () => new Request(`http://x/link/${path}`),
  rest: () => new Request(`http://x/api/v1/sdk/link/${path}`, { headers: sdk }),
  graphql: () =>
    new Request(`http://x/graphql`, {
      method: "POST",
      headers: {
        ...sdk,
        "Content-Type": "application/json",
        "Content-Length": String(body.length),
      },
      body,
    }),
};
async function batch(make: () => Request, n: number) {
  for (let i = 0; i < n; i += 32) {
    await Promise.all(Array.from({ length: 32 }, async () => {
      const q = make();
      const r =
        await (q.url.includes("/link/") && !q.url.includes("/sdk/") ? bare(q) : app.fetch(q));
      await r.arrayBuffer();
    }));
  }
}
for (let round = 0; round < 3; round++) {
  for (
    const [name, make] of Object.entries(reqs).filter(([n]) => n === (Deno.env.get("ONLY") ?? n))
  ) {
    await batch(make, 3200);
    const before = process.cpuUsage();
    const t = performance.now();
    await batch(make, 16000);
    const d = process.cpuUsage(before);
    console.log(
      name,
      "cpu µs/req",
      ((d.user + d.system) / 16000).toFixed(1),
      "wall µs/req",
      ((performance.now() - t) * 1000 / 16000).toFixed(1),
    );
  }
}
await db.close();
