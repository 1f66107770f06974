// The text of a links CSV, read and written for every way in and out (the admin API's import and
// export, the dashboard's upload and download): csv-parse reads the CSV, infra/csv_cells.ts
// writes it (every text cell safe to open in a spreadsheet) and undoes that on the way back in,
// importRow (links.ts) validates each row with generate_link's own schemas, and
// services/links/csv.ts stores and reads the links.
import { pipeline, Readable } from "node:stream";
import { CsvError, parse } from "csv-parse";
import type { Sql } from "../db/connect.ts";
import { IMPORT_COLUMNS, type ImportRow, importRow } from "./links.ts";
import { cellText, csvText } from "../infra/csv_cells.ts";
import { ApiError } from "../services/errors.ts";
import {
  EXPORT_COUNTERS,
  exportLinks,
  type ExportRow,
  type ImportError,
  type ImportInput,
  ImportRefused,
  MAX_IMPORT_ROWS,
} from "../services/links/csv.ts";
import type { ManagedNewLink } from "../services/links/links.ts";
import { linkState } from "../services/links/manage.ts";

/** An import's body may be this large (the 1 MiB limit of other bodies does not apply). */
export const MAX_IMPORT_BYTES = 64 * 1024 * 1024;

/** Columns an export adds; an import of an export ignores them. */
const EXPORT_ONLY = ["id", "created_at", "updated_at", "state", ...EXPORT_COUNTERS] as const;
const EXPORT_COLUMNS = [...IMPORT_COLUMNS, ...EXPORT_ONLY];

/** How many rows an export writes per chunk of its body. */
const EXPORT_CHUNK_ROWS = 200;

export function importTooLarge(what = "64 MiB"): ApiError {
  return new ApiError("payload_too_large", `the import is larger than ${what}`);
}

/** Passes the body on, failing once it exceeds MAX_IMPORT_BYTES. */
function byteLimit(): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > MAX_IMPORT_BYTES) controller.error(importTooLarge());
      else controller.enqueue(chunk);
    },
  });
}

/** A validated row as the service takes it: the redirects folded back into their objects. */
function toNewLink(row: ImportRow): ManagedNewLink {
  const redirect = (url: string | undefined, open: boolean | undefined) =>
    url === undefined && open === undefined ? undefined : {
      ...(url === undefined ? {} : { url }),
      ...(open === undefined ? {} : { open_app_if_installed: open }),
    };
  return {
    path: row.path,
    title: row.title,
    subtitle: row.subtitle,
    image: row.image,
    data: row.data as Record<string, unknown> | undefined,
    tags: row.tags,
    ios_custom_redirect: redirect(row.ios_url, row.ios_open_app),
    android_custom_redirect: redirect(row.android_url, row.android_open_app),
    desktop_custom_redirect: redirect(row.desktop_url, undefined),
    show_preview_ios: row.show_preview_ios,
    show_preview_android: row.show_preview_android,
    tracking_campaign: row.tracking_campaign,
    tracking_source: row.tracking_source,
    tracking_medium: row.tracking_medium,
    expires_at: row.expires_at,
    max_views: row.max_views,
    expired_url: row.expired_url,
    rules: row.rules,
    split: row.split,
    forward_query: row.forward_query,
    append_utm: row.append_utm,
    pass_click_id: row.pass_click_id,
  };
}

/**
 * A CSV body's rows, parsed and validated one by one as they arrive, for importLinks. A header
 * problem or a CSV syntax error is reported as a row error (0: the header), so the answer names
 * it; a body over MAX_IMPORT_BYTES or MAX_IMPORT_ROWS fails with payload_too_large.
 */
export async function* readImportRows(
  body: ReadableStream<Uint8Array> | null,
): AsyncGenerator<ImportInput> {
  if (!body) throw new ImportRefused([{ row: 0, field: "file", message: "the file is empty" }]);
  // csv-parse's Node stream, not its web TransformStream: that one queues up to 1,024 body
  // chunks and 1,024 records, so a fast sender filled memory with most of a 64 MiB file. Node's
  // streams hold 16 KiB of input and 16 records: the body is read as fast as rows are stored.
  const records = parse({ bom: true, relax_column_count: true, skip_empty_lines: true });
  pipeline(Readable.fromWeb(body.pipeThrough(byteLimit()) as never), records, (err) => {
    if (err) records.destroy(err);
  });
  let header: (string | null)[] | undefined;
  let n = 0;
  try {
    for await (const record of records as AsyncIterable<string[]>) {
      if (!header) {
        const errors: ImportError[] = [];
        const seen = new Set<string>();
        header = record.map((raw) => {
          const name = raw.trim();
          if (seen.has(name)) {
            errors.push({ row: 0, field: name, message: "appears twice in the header" });
          }
          seen.add(name);
          if ((IMPORT_COLUMNS as string[]).includes(name)) return name;
          if ((EXPORT_ONLY as readonly string[]).includes(name)) return null;
          errors.push({ row: 0, field: name, message: "is not a column of the import" });
          return null;
        });
        if (errors.length > 0) throw new ImportRefused(errors);
        continue;
      }
      n++;
      if (n > MAX_IMPORT_ROWS) throw importTooLarge(`${MAX_IMPORT_ROWS} rows`);
      if (record.length !== header.length) {
        yield {
          row: n,
          errors: [{
            row: n,
            field: "row",
            message: `has ${record.length} cells where the header has ${header.length}`,
          }],
        };
        continue;
      }
      const cells: Record<string, string> = {};
      for (let i = 0; i < header.length; i++) {
        const name = header[i];
        // A cell an export made safe for spreadsheets holds its text again.
        if (name && record[i] !== "") cells[name] = cellText(record[i]!);
      }
      const parsed = importRow.safeParse(cells);
      if (parsed.success) {
        yield { row: n, link: toNewLink(parsed.data) };
      } else {
        yield {
          row: n,
          errors: parsed.error.issues.map((issue) => ({
            row: n,
            field: String(issue.path[0] ?? "row"),
            message: issue.message,
          })),
        };
      }
    }
  } catch (err) {
    if (err instanceof CsvError) {
      throw new ImportRefused([{
        row: n + (header ? 1 : 0),
        field: "file",
        message: `is not valid CSV here: ${err.message}`,
      }]);
    }
    throw err;
  } finally {
    records.destroy();
  }
  if (!header) {
    throw new ImportRefused([{ row: 0, field: "file", message: "the file is empty" }]);
  }
}

function exportCells(row: ExportRow, now: Date): unknown[] {
  const ios = row.ios_custom_redirect;
  const android = row.android_custom_redirect;
  const cells: Record<string, unknown> = {
    path: row.path,
    title: row.title,
    subtitle: row.subtitle,
    image: row.image,
    data: JSON.stringify(row.data),
    tags: JSON.stringify(row.tags),
    ios_url: ios.url,
    ios_open_app: ios.open_app_if_installed,
    android_url: android.url,
    android_open_app: android.open_app_if_installed,
    desktop_url: row.desktop_custom_redirect.url,
    show_preview_ios: row.show_preview_ios,
    show_preview_android: row.show_preview_android,
    tracking_campaign: row.tracking_campaign,
    tracking_source: row.tracking_source,
    tracking_medium: row.tracking_medium,
    expires_at: row.expires_at?.toISOString(),
    max_views: row.max_views,
    expired_url: row.expired_url,
    rules: row.rules?.length ? JSON.stringify(row.rules) : "",
    split: row.split ? JSON.stringify(row.split) : "",
    forward_query: row.forward_query,
    append_utm: row.append_utm,
    pass_click_id: row.pass_click_id,
    id: row.id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    state: linkState({ ...row, limited_views: row.limited_views }, now),
  };
  for (const counter of EXPORT_COUNTERS) cells[counter] = row[counter];
  return EXPORT_COLUMNS.map((c) => cells[c] ?? "");
}

/**
 * The environment's links as CSV (exportLinks says which), read from the database as the client reads the body.
 * Resolves once the first rows are read, so an unknown project answers 404 before a byte is
 * sent; a failure later can only cut the body short, and is passed to `onError` first.
 */
export async function linkExportBody(
  sql: Sql,
  projectId: string | number,
  options: { now: Date; withSdkLinks: boolean; onError: (err: unknown) => void },
): Promise<ReadableStream<Uint8Array>> {
  const rows = exportLinks(sql, projectId, options);
  const first = await rows.next();
  const encoder = new TextEncoder();
  let pending: IteratorResult<ExportRow> | undefined = first;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(csvText([EXPORT_COLUMNS])));
    },
    async pull(controller) {
      try {
        const batch: unknown[][] = [];
        while (batch.length < EXPORT_CHUNK_ROWS) {
          const next = pending ?? await rows.next();
          pending = undefined;
          if (next.done) break;
          batch.push(exportCells(next.value, options.now));
        }
        if (batch.length > 0) controller.enqueue(encoder.encode(csvText(batch)));
        if (batch.length < EXPORT_CHUNK_ROWS) controller.close();
      } catch (err) {
        options.onError(err);
        controller.error(err);
      }
    },
    async cancel() {
      await rows.return(undefined);
    },
  }, { highWaterMark: 1 });
}
