// The one way the service writes CSV, for every file it hands out (the links export of the admin
// API and of the dashboard, the analytics download): each text cell is made safe to open in a
// spreadsheet, which would run a cell starting with = + - @, a tab or a carriage return as a
// formula (OWASP, "CSV Injection"). Such a cell gets a leading apostrophe, the spreadsheets' mark
// for "text", and the links import takes that apostrophe off again, so an import reads back
// exactly what an export wrote (a title that really starts with "=" or "'" included).
import { stringify } from "csv-stringify/sync";

/**
 * A text that needs the apostrophe: one a spreadsheet would take for a formula, after any
 * apostrophes of its own (so that an apostrophe the text really starts with survives the way
 * back, `cellText` taking off only the one added here).
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;
/** A plain number (a negative counter or share): a spreadsheet reads it as that number. */
const PLAIN_NUMBER = /^-?[0-9]+(\.[0-9]+)?$/;

/** The cell a text is written as. */
export function safeCell(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

/** The text a cell written by `safeCell` holds: its inverse, for every text. */
export function cellText(cell: string): string {
  return cell.startsWith("'") && FORMULA_START.test(cell) ? cell.slice(1) : cell;
}

/** Rows as CSV text, every string cell through `safeCell` (numbers and booleans as they are). */
export function csvText(rows: readonly (readonly unknown[])[]): string {
  return stringify(rows.map((row) => row.map((v) => typeof v === "string" ? safeCell(v) : v)));
}
