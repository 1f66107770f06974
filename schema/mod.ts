// Loads every type module; the order does not matter to Pothos.
import { builder } from "./builder.ts";
import "./link.ts";
import "./metrics.ts";
import "./feed.ts";
import "./live.ts";
import "./analytics.ts";
import "./environment.ts";
import "./funnel.ts";
import "./management.ts";

export const schema = builder.toSchema();
