// The project's QR logo (PUT /api/v1/admin/projects/:hashid/qr_logo): stored with the project,
// drawn in the middle of its links' QR codes when they ask for `logo=1` (./qr.ts).
import type { Db, Sql } from "../../db/connect.ts";
import { type AuditContext, recordAudit } from "../access/audit.ts";
import { ApiError, notFound } from "../errors.ts";
import { checkLogo, type QrLogo } from "./qr.ts";

/** Stores (after checkLogo) the logo of the project `hashid`; audited as `project.qr_logo`. */
export async function setQrLogo(
  sql: Sql,
  hashid: string,
  bytes: Uint8Array,
  contentType: string,
  audit: AuditContext,
): Promise<{ type: QrLogo["type"]; bytes: number }> {
  if (!/^[A-Za-z0-9]{1,64}$/.test(hashid)) throw notFound("project");
  const type = checkLogo(bytes, contentType);
  return await sql.begin(async (tx) => {
    const [row] = await tx<{ id: number }[]>`
      update projects set qr_logo = ${bytes}, qr_logo_type = ${type}
      where hashid = ${hashid} returning id
    `;
    if (!row) throw notFound("project");
    await recordAudit(tx, audit, {
      action: "project.qr_logo",
      project: { hashid },
      target: { type: "project", id: hashid },
      detail: { bytes: bytes.length },
    });
    return { type, bytes: bytes.length };
  });
}

/** The logo of the project of environment `environmentId`, or a 400 when it has none. */
export async function getQrLogoOrThrow(db: Db, environmentId: number): Promise<QrLogo> {
  const [row] = await db<{ qr_logo: Uint8Array | null; qr_logo_type: QrLogo["type"] | null }[]>`
    select p.qr_logo, p.qr_logo_type
    from environments e join projects p on p.id = e.project_id where e.id = ${environmentId}
  `;
  if (!row?.qr_logo || !row.qr_logo_type) {
    throw new ApiError(
      "invalid_field",
      "logo: the project has no QR logo; upload one with PUT /api/v1/admin/projects/:hashid/qr_logo",
      { field: "logo" },
    );
  }
  return { bytes: row.qr_logo, type: row.qr_logo_type };
}

/** Whether the project of environment `environmentId` has a QR logo. */
export async function hasQrLogo(db: Db, environmentId: number): Promise<boolean> {
  const [row] = await db<{ has: boolean }[]>`
    select p.qr_logo is not null as has
    from environments e join projects p on p.id = e.project_id where e.id = ${environmentId}
  `;
  return row?.has ?? false;
}
