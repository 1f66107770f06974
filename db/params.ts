// Helpers for statement parameters.

/**
 * A batch's column as one JSON array parameter, read back with json_array_elements_text: the
 * driver's escaping of text[] parameters, element by element in JavaScript, cost an eighth of a
 * link-host hit's time; JSON.stringify is native.
 */
export function jsonColumn(values: readonly (string | number | null)[]): string {
  return JSON.stringify(values);
}
