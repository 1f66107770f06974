// An attributed install written as ingestion stores it (services/events/record.ts): its row in
// attributed_installs with its bucket, and queued for its day (services/attribution/install_days.ts),
// for tests that set the funnel's figures without sending the events.
import type { Sql } from "../../db/connect.ts";
import { bucketSql } from "../../services/attribution/install_days.ts";

export async function insertInstall(
  sql: Sql,
  environmentId: number,
  occurredAt: Date | string,
  linkId: number,
  seconds: number | null,
): Promise<void> {
  const at = new Date(occurredAt);
  await sql.unsafe(
    `with t as (select $1::int as env, $2::timestamptz as at, $3::int as link, $4::bigint as seconds),
    installed as (
      insert into attributed_installs (environment_id, occurred_at, link_id, seconds, bucket)
      select env, at, link, seconds, ${bucketSql("t.seconds")} from t
      returning environment_id, occurred_at, bucket
    )
    insert into attributed_install_queue (environment_id, occurred_at, bucket)
    select * from installed`,
    [environmentId, at.toISOString(), linkId, seconds],
  );
}
