import { FieldValidationError } from '@collect/contracts';
import { attr, child, childrenNamed, DEFAULT_INPUT_LIMITS, escapeXml, inputTooLarge, parseXml, XmlInputError, type InputLimits, type XmlNode } from '../openrosa/xml.js';
import type { FormField } from './form.entity.js';

/** What a form upload turns into, whichever format it came in. */
export interface ParsedForm {
  idString: string;
  title: string;
  rootName: string;
  version: string;
  fields: FormField[];
  xml: string;
  jsonDefinition: Record<string, unknown> | null;
}

/** XML element names (NCName without `:`), which is also what xpath segments are. */
export const NAME_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/;

// Maps, not object literals: a bind type or JSON type is user input, and `constructor` or
// `toString` must not find Object.prototype's members (docs/security.md "Parsers of user input").
const XSD_TYPES = new Map<string, string>(Object.entries({
  string: 'text', int: 'integer', integer: 'integer', decimal: 'decimal', date: 'date', time: 'time', dateTime: 'datetime',
  geopoint: 'geopoint', geotrace: 'geotrace', geoshape: 'geoshape', barcode: 'barcode', boolean: 'acknowledge',
}));

const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'file']);

/**
 * Parses an XForm (ODK XForms spec) into the field list in instance (form) order, in time
 * linear in the document: every lookup is a Map or Set (a 529 KB form once held the event loop
 * 2.4 s through a list scan per element). More than `maxFields` fields: 413.
 */
export function parseXForm(xml: string, limits: InputLimits = DEFAULT_INPUT_LIMITS): ParsedForm {
  const html = parseXml(xml, limits);
  if (html.name !== 'html') throw new XmlInputError('Not an XForm: the root element must be h:html.');
  const head = child(html, 'head');
  const model = child(head, 'model');
  const instance = childrenNamed(model, 'instance').find((i) => !i.attrs.id) ?? childrenNamed(model, 'instance')[0];
  const root = instance?.children[0];
  if (!root) throw new XmlInputError('Not an XForm: no primary instance in h:head/model/instance.');
  const idString = root.attrs.id ?? '';
  if (!NAME_RE.test(idString)) throw new XmlInputError('The primary instance needs an id attribute (the form id_string), a valid XML name.');
  const title = child(head, 'title')?.text || idString;

  const binds = new Map<string, XmlNode>();
  for (const bind of childrenNamed(model, 'bind')) if (bind.attrs.nodeset) binds.set(bind.attrs.nodeset, bind);
  const controls = new Map<string, XmlNode>();
  const repeats = new Set<string>();
  const itext = itextLabels(model);
  const walkBody = (node: XmlNode) => {
    for (const c of node.children) {
      if (c.name === 'repeat' && c.attrs.nodeset) repeats.add(c.attrs.nodeset);
      const ref = c.attrs.ref ?? c.attrs.nodeset;
      if (ref && !controls.has(ref)) controls.set(ref, c);
      walkBody(c);
    }
  };
  const body = child(html, 'body');
  if (body) walkBody(body);

  const fields: FormField[] = [];
  const seen = new Set<string>();
  const walk = (node: XmlNode, path: string, repeat: string | undefined) => {
    for (const el of node.children) {
      // meta/* (instanceID, deprecatedID) are metadata columns of the record, not questions.
      if (!path && el.name === 'meta') continue;
      const xpath = path ? `${path}/${el.name}` : el.name;
      if (seen.has(xpath)) continue; // repeat templates + instances share a path
      seen.add(xpath);
      if (fields.length >= limits.maxFields) throw inputTooLarge('form', limits.maxFields, 'FORM_MAX_FIELDS');
      const abs = `/${root.name}/${xpath}`;
      const control = controls.get(abs);
      const label = labelOf(control, itext);
      if (el.children.length) {
        const isRepeat = repeats.has(abs) || attr(el, 'template') !== undefined;
        fields.push({ name: el.name, xpath, type: isRepeat ? 'repeat' : 'group', label, ...(repeat ? { repeat } : {}) });
        walk(el, xpath, isRepeat ? xpath : repeat);
        continue;
      }
      fields.push({ name: el.name, xpath, type: questionType(binds.get(abs), control), label, ...(repeat ? { repeat } : {}) });
    }
  };
  walk(root, '', undefined);
  return { idString, title, rootName: root.name, version: root.attrs.version ?? '', fields, xml, jsonDefinition: null };
}

function questionType(bind: XmlNode | undefined, control: XmlNode | undefined): string {
  const raw = (bind?.attrs.type ?? 'string').replace(/^[a-z]+:/, '');
  if (raw === 'binary') {
    const mediatype = control?.attrs.mediatype ?? '';
    const family = mediatype.split('/')[0];
    return MEDIA_TYPES.has(family) ? family : 'file';
  }
  if (control?.name === 'select1') return 'select one';
  if (control?.name === 'select') return 'select all that apply';
  if (control?.name === 'trigger') return 'acknowledge';
  if (!control && bind?.attrs.calculate !== undefined) return 'calculate';
  return XSD_TYPES.get(raw) ?? raw;
}

function itextLabels(model: XmlNode | undefined): Map<string, string> {
  const labels = new Map<string, string>();
  const translation = child(child(model, 'itext'), 'translation');
  for (const text of childrenNamed(translation, 'text')) {
    const value = child(text, 'value');
    if (text.attrs.id && value) labels.set(text.attrs.id, value.text);
  }
  return labels;
}

function labelOf(control: XmlNode | undefined, itext: Map<string, string>): string | null {
  const label = child(control, 'label');
  if (!label) return null;
  const ref = label.attrs.ref?.match(/jr:itext\(\s*'([^']+)'\s*\)/)?.[1];
  if (ref) return itext.get(ref) ?? null;
  return label.text || null;
}

// ---------------------------------------------------------------------------------------------
// JSON form definitions: {"id_string", "title", "version"?, "fields": [{name, type, label, children?}]}

interface JsonField {
  name: string;
  type: string;
  label?: string;
  children?: JsonField[];
}

const JSON_TYPES = new Map<string, { bind: string; control: string; mediatype?: string }>(Object.entries({
  text: { bind: 'string', control: 'input' },
  integer: { bind: 'int', control: 'input' },
  decimal: { bind: 'decimal', control: 'input' },
  date: { bind: 'date', control: 'input' },
  time: { bind: 'time', control: 'input' },
  datetime: { bind: 'dateTime', control: 'input' },
  geopoint: { bind: 'geopoint', control: 'input' },
  geotrace: { bind: 'geotrace', control: 'input' },
  geoshape: { bind: 'geoshape', control: 'input' },
  barcode: { bind: 'barcode', control: 'input' },
  note: { bind: 'string', control: 'input' },
  'select one': { bind: 'string', control: 'select1' },
  'select all that apply': { bind: 'string', control: 'select' },
  calculate: { bind: 'string', control: '' },
  image: { bind: 'binary', control: 'upload', mediatype: 'image/*' },
  audio: { bind: 'binary', control: 'upload', mediatype: 'audio/*' },
  video: { bind: 'binary', control: 'upload', mediatype: 'video/*' },
  file: { bind: 'binary', control: 'upload', mediatype: 'application/*' },
}));
const TYPE_ALIASES = new Map<string, string>(Object.entries({ string: 'text', int: 'integer', select_one: 'select one', select_multiple: 'select all that apply', photo: 'image' }));
const jsonType = (type: string): string => TYPE_ALIASES.get(type) ?? type;

/**
 * Validates a JSON form definition and renders the equivalent XForm (stored like an upload).
 * Linear in the definition; nested deeper than `maxDepth`: 400; more than `maxFields`: 413.
 */
export function parseJsonForm(body: unknown, limits: InputLimits = DEFAULT_INPUT_LIMITS): ParsedForm {
  const errors: Record<string, string[]> = {};
  const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const idString = b.id_string;
  if (typeof idString !== 'string' || !NAME_RE.test(idString)) {
    errors.id_string = ['This field is required: a name of letters, digits, _ . - starting with a letter or _ (at most 100).'];
  }
  const title = b.title === undefined ? idString : b.title;
  if (typeof title !== 'string' || !title.trim() || title.length > 255) errors.title = ['A non-empty string of at most 255 characters.'];
  const version = b.version === undefined ? '' : b.version;
  if (typeof version !== 'string' || version.length > 100) errors.version = ['A string of at most 100 characters.'];
  const fields: FormField[] = [];
  if (!Array.isArray(b.fields) || b.fields.length === 0) {
    errors.fields = ['A non-empty list of fields ({name, type, label, children?}).'];
  } else {
    const problems: string[] = [];
    collectJsonFields(b.fields, '', undefined, fields, problems, limits, 1);
    if (problems.length) errors.fields = problems;
  }
  if (Object.keys(errors).length) throw new FieldValidationError(errors);
  const def = { id_string: idString as string, title: (title as string).trim(), version: version as string };
  const xml = renderXForm(def.id_string, def.title, def.version, b.fields as JsonField[]);
  return { idString: def.id_string, title: def.title, rootName: 'data', version: def.version, fields, xml, jsonDefinition: b };
}

function collectJsonFields(items: unknown[], path: string, repeat: string | undefined, out: FormField[], problems: string[], limits: InputLimits, depth: number): void {
  if (depth > limits.maxDepth) {
    problems.push(`${path}: groups and repeats are nested more than ${limits.maxDepth} deep (INPUT_MAX_DEPTH).`);
    return;
  }
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (out.length >= limits.maxFields) throw inputTooLarge('form', limits.maxFields, 'FORM_MAX_FIELDS');
    const f = item as Partial<JsonField> | null;
    const where = path ? `${path}[${i}]` : `fields[${i}]`;
    if (!f || typeof f !== 'object' || typeof f.name !== 'string' || !NAME_RE.test(f.name) || f.name === 'meta') {
      problems.push(`${where}: name must be an XML name (letters, digits, _ . -), not "meta".`);
      continue;
    }
    if (seen.has(f.name)) problems.push(`${where}: duplicate name "${f.name}".`);
    seen.add(f.name);
    const type = typeof f.type === 'string' ? jsonType(f.type) : '';
    if (f.label !== undefined && typeof f.label !== 'string') problems.push(`${where}: label must be a string.`);
    const xpath = path ? `${path}/${f.name}` : f.name;
    if (type === 'group' || type === 'repeat') {
      if (!Array.isArray(f.children) || !f.children.length) {
        problems.push(`${where}: a ${type} needs a non-empty children list.`);
        continue;
      }
      out.push({ name: f.name, xpath, type, label: f.label ?? null, ...(repeat ? { repeat } : {}) });
      collectJsonFields(f.children, xpath, type === 'repeat' ? xpath : repeat, out, problems, limits, depth + 1);
      continue;
    }
    if (!JSON_TYPES.has(type)) {
      problems.push(`${where}: unknown type "${String(f.type)}" (one of ${[...JSON_TYPES.keys(), 'group', 'repeat'].join(', ')}).`);
      continue;
    }
    out.push({ name: f.name, xpath, type, label: f.label ?? null, ...(repeat ? { repeat } : {}) });
  }
}

function renderXForm(idString: string, title: string, version: string, fields: JsonField[]): string {
  const instance: string[] = [];
  const binds: string[] = [];
  const body: string[] = [];
  const walk = (items: JsonField[], path: string, indent: string) => {
    for (const f of items) {
      const type = jsonType(f.type);
      const abs = `${path}/${f.name}`;
      const label = f.label ? `<label>${escapeXml(f.label)}</label>` : '';
      if (type === 'group' || type === 'repeat') {
        // Opening and closing pieces around the children, joined once at the end: no nested
        // joins, so the work stays linear whatever the nesting.
        instance.push(`${indent}<${f.name}${type === 'repeat' ? ' jr:template=""' : ''}>`);
        body.push(`<group ref="${abs}">${label}${type === 'repeat' ? `<repeat nodeset="${abs}">` : ''}`);
        walk(f.children ?? [], abs, `${indent}  `);
        body.push(type === 'repeat' ? '</repeat></group>' : '</group>');
        instance.push(`${indent}</${f.name}>`);
        continue;
      }
      const spec = JSON_TYPES.get(type)!;
      instance.push(`${indent}<${f.name}/>`);
      binds.push(`<bind nodeset="${abs}" type="${spec.bind}"/>`);
      if (spec.control) body.push(`<${spec.control} ref="${abs}"${spec.mediatype ? ` mediatype="${spec.mediatype}"` : ''}>${label}</${spec.control}>`);
    }
  };
  walk(fields, '/data', '        ');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" xmlns:odk="http://www.opendatakit.org/xforms">',
    '  <h:head>',
    `    <h:title>${escapeXml(title)}</h:title>`,
    '    <model>',
    '      <instance>',
    `        <data id="${escapeXml(idString)}"${version ? ` version="${escapeXml(version)}"` : ''}>`,
    ...instance,
    '          <meta><instanceID/></meta>',
    '        </data>',
    '      </instance>',
    ...binds.map((b) => `      ${b}`),
    '      <bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>',
    '    </model>',
    '  </h:head>',
    `  <h:body>${body.join('')}</h:body>`,
    '</h:html>',
    '',
  ].join('\n');
}
