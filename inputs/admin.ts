// Request bodies of the instance admin routes (rest/admin.ts); rest/openapi_schemas.ts
// describes them from these same schemas.
import { z } from "zod";
import { text } from "./common.ts";
import { projectSettings } from "./project_settings.ts";

const name = text(200).trim().min(1);
export const createProjectBody = z.object({ name, enterprise: z.boolean().default(false) });
export const updateProjectBody = projectSettings.extend({
  name: name.optional(),
  enterprise: z.boolean().optional(),
}).refine((b) => Object.values(b).some((v) => v !== undefined), {
  message: "give name, enterprise, link_domain, apps, sdk_limits, reporting_currency, " +
    "attribution_window_days or attribution_model",
});
export const createTokenBody = z.object({ name });
