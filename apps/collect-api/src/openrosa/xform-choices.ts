import { child, childrenNamed, parseXml, type XmlNode } from './xml.js';

export interface Choice {
  value: string;
  label: string | null;
}

/**
 * The choices of the form's select questions from its XForm (`<item>` value and label, by
 * question xpath without the root), for the split select-multiple columns. Forms whose lists
 * come from elsewhere (itemsets, JSON definitions) have none here; the export adds the values
 * the answers use (docs/exports.md). Read once, when a definition is stored: each form version
 * keeps the result (`form_versions.choices`), so that no export parses an XForm.
 */
export function xformChoices(xml: string): Map<string, Choice[]> {
  const out = new Map<string, Choice[]>();
  let html: XmlNode;
  try {
    html = parseXml(xml);
  } catch {
    return out;
  }
  const itext = new Map<string, string>();
  const translation = child(child(child(child(html, 'head'), 'model'), 'itext'), 'translation');
  for (const text of childrenNamed(translation, 'text')) {
    const value = child(text, 'value');
    if (text.attrs.id && value) itext.set(text.attrs.id, value.text);
  }
  const labelOf = (node: XmlNode): string | null => {
    const label = child(node, 'label');
    if (!label) return null;
    const ref = label.attrs.ref?.match(/jr:itext\(\s*'([^']+)'\s*\)/)?.[1];
    return ref ? (itext.get(ref) ?? null) : label.text || null;
  };
  const walk = (node: XmlNode, depth: number) => {
    if (depth > 64) return;
    for (const c of node.children) {
      if ((c.name === 'select' || c.name === 'select1') && c.attrs.ref) {
        const xpath = c.attrs.ref.replace(/^\/[^/]+\//, '');
        const items = childrenNamed(c, 'item').map((item) => ({ value: child(item, 'value')?.text ?? '', label: labelOf(item) })).filter((i) => i.value !== '');
        if (items.length) out.set(xpath, items);
      }
      walk(c, depth + 1);
    }
  };
  const body = child(html, 'body');
  if (body) walk(body, 0);
  return out;
}


/** `xformChoices` as the JSON object a form version stores (question xpath → choices). */
export function xformChoicesRecord(xml: string): Record<string, Choice[]> {
  return Object.fromEntries(xformChoices(xml));
}
