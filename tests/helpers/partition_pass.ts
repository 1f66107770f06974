// One ensurePartitions pass in a process of its own, as an instance runs it, for tests that kill
// the instance mid-way: deno run -A tests/helpers/partition_pass.ts <url> <now> <behindDays>
import { connect } from "../../db/connect.ts";
import { ensurePartitions } from "../../services/maintenance/partitions.ts";

const [url, now, behindDays] = Deno.args;
const sql = connect(url!, 1);
const result = await ensurePartitions(sql, "analytics_events", new Date(now!), {
  behindDays: Number(behindDays),
  lockTimeoutMs: 600_000,
});
Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(result) + "\n"));
await sql.end();
