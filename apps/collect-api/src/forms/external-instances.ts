/** `src="jr://file-csv/<name>.csv"` of an external secondary instance (select_one_from_file, csv-external, pulldata). */
const CSV_INSTANCE_SRC = /\bsrc\s*=\s*(["'])jr:\/\/file-csv\/([^"'<>/\\]{1,255})\.csv\1/g;

/**
 * The base names of the CSV files an XForm's external secondary instances load, in document
 * order without repeats (`trees` for `<instance id="trees" src="jr://file-csv/trees.csv"/>`).
 * A scan of the text, linear in it: the form list and the manifest call it on every request, so
 * the XForm is not parsed (docs/entities.md, "Follow-up forms and their list attachment").
 */
export function externalCsvNames(xml: string): string[] {
  const names = new Set<string>();
  for (const m of xml.matchAll(CSV_INSTANCE_SRC)) names.add(m[2]);
  return [...names];
}
