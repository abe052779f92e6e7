// pyxform's warning when one language lacks a translatable column another language has, and
// which languages a sheet uses.
// Translatable columns per sheet, under the names pyxform's missing-translation warning uses.
export const SURVEY_TRANSLATABLE: Readonly<Record<string, string>> = {
  label: 'label', hint: 'hint', guidance_hint: 'guidance_hint', image: 'image', 'big-image': 'big-image', audio: 'audio', video: 'video',
  'jr:constraintMsg': 'constraint_message', 'jr:requiredMsg': 'required_message',
};
export const CHOICES_TRANSLATABLE: Readonly<Record<string, string>> = { label: 'label', image: 'image', 'big-image': 'big-image', audio: 'audio', video: 'video' };

/** Language -> translatable columns present for it ('default' for columns without a language). */
export function seenTranslations(headers: string[][], translatable: Readonly<Record<string, string>>): Map<string, Set<string>> {
  const seen = new Map<string, Set<string>>();
  for (const header of headers) {
    const head = header.length > 1 && (header[0] === 'media' || header[0] === 'bind') ? header.slice(1) : header;
    const name = translatable[head[0]];
    if (name === undefined || head.length > 2) continue;
    const lang = head.length === 1 ? 'default' : head[1];
    if (!seen.has(lang)) seen.set(lang, new Set());
    seen.get(lang)!.add(name);
  }
  return seen;
}

export function defaultOnly(seen: Map<string, Set<string>>): boolean {
  return seen.size === 0 || (seen.size === 1 && seen.has('default'));
}

// pyxform's warning when a language lacks a translatable column that another language has.
export function missingTranslationsMessage(sheets: Record<'survey' | 'choices', Map<string, Set<string>>>): string | undefined {
  const lines: string[] = [];
  for (const sheet of ['survey', 'choices'] as const) {
    const seen = sheets[sheet];
    if (defaultOnly(seen)) continue;
    const all = new Set([...seen.values()].flatMap((s) => [...s]));
    for (const lang of [...seen.keys()].sort()) {
      const cols = [...all].filter((c) => !seen.get(lang)!.has(c)).sort();
      if (cols.length === 1) lines.push(`Language '${lang}' is missing the ${sheet} ${cols[0]} column.`);
      if (cols.length > 1) lines.push(`Language '${lang}' is missing the ${sheet} columns ${cols.join(', ')}.`);
    }
  }
  return lines.length > 0 ? lines.join('\n') : undefined;
}
