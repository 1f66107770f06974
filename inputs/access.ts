// Request bodies of the access routes (API keys, accounts, members); rest/openapi_schemas.ts describes them from
// these same schemas.
import { z } from "zod";
import { ROLES, SCOPES } from "../services/access/permissions.ts";
import { text } from "./common.ts";

export const createApiKeyBody = z.object({
  name: text(200).trim().min(1),
  scopes: z.array(z.enum(SCOPES)).min(1, "give at least one scope").max(SCOPES.length)
    .refine((s) => new Set(s).size === s.length, "must not repeat a scope"),
  expires_at: z.iso.datetime({ offset: true }).nullable().default(null),
});
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;

export const createAccountBody = z.object({
  email: z.email("must be an email address").max(320, "must be at most 320 characters"),
  name: text(200).trim().min(1),
});

export const putMemberBody = z.object({ role: z.enum(ROLES) });
