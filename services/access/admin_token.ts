import type { Db } from "../../db/connect.ts";
import { hashSecret, randomToken } from "../../infra/secrets.ts";
import { getOrCreateSetting } from "../../infra/settings.ts";

const SETTING = "admin_token_sha256";

/**
 * The digest the admin token is checked against. A configured ADMIN_TOKEN wins; otherwise (the
 * embedded default) a token is generated on first start and only its digest kept: `generated`
 * carries it back that one time so the caller can show it.
 */
export async function resolveAdminToken(
  db: Db,
  configured: string | null,
): Promise<{ hash: string; generated: string | null }> {
  if (configured) return { hash: hashSecret(configured), generated: null };
  const token = "adm_" + randomToken(32);
  const { value, created } = await getOrCreateSetting(db, SETTING, () => hashSecret(token));
  return { hash: value, generated: created ? token : null };
}
