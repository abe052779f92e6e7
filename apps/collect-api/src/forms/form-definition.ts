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
      // meta/* (instanceID, deprecatedID) and formhub/uuid are metadata of the record, not questions.
      if (!path && (el.name === 'meta' || el.name === 'formhub')) continue;
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

/**
 * The fields of every version of a form, for data-out (docs/forms.md, "Form versions"): the
 * newest version's fields in its order, then each field only older versions had (newest of them
 * first), after the fields of its group where that group still exists.
 */
export function fieldsOfAllVersions(newestFirst: ReadonlyArray<readonly FormField[]>): FormField[] {
  const out: FormField[] = [...(newestFirst[0] ?? [])];
  const seen = new Set(out.map((f) => f.xpath));
  for (const fields of newestFirst.slice(1)) {
    for (const field of fields) {
      if (seen.has(field.xpath)) continue;
      seen.add(field.xpath);
      const parent = field.xpath.includes('/') ? field.xpath.slice(0, field.xpath.lastIndexOf('/')) : '';
      // After the last field of the same group (or at the end when the group is gone too).
      let at = out.length;
      if (parent) {
        const last = out.map((f) => f.xpath === parent || f.xpath.startsWith(`${parent}/`)).lastIndexOf(true);
        if (last !== -1) at = last + 1;
      }
      out.splice(at, 0, field);
    }
  }
  return out;
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
/** The question types of a JSON definition, and the pyxform spellings accepted for some. */
export const JSON_FIELD_TYPES = [...JSON_TYPES.keys()];
// Without prototype: a type named `constructor` or `toString` must find no alias.
export const JSON_TYPE_ALIASES: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, {
  string: 'text', int: 'integer', select_one: 'select one', select_multiple: 'select all that apply', photo: 'image',
});

/** A JSON form definition as JsonFormDefinitionDto checked it (types already resolved from their aliases). */
export interface JsonFormDefinition {
  id_string: string;
  title?: string;
  version?: string;
  fields: JsonField[];
}

/**
 * Renders a (validated) JSON form definition as the equivalent XForm, stored like an upload.
 * Linear in the definition; groups nested deeper than `maxDepth`: 400; more than `maxFields`
 * fields: 413 (the DTO bounds neither: INPUT_MAX_DEPTH and FORM_MAX_FIELDS are configuration).
 */
export function parseJsonForm(def: JsonFormDefinition, limits: InputLimits = DEFAULT_INPUT_LIMITS): ParsedForm {
  const title = def.title ?? def.id_string;
  const version = def.version ?? '';
  const fields: FormField[] = [];
  collectJsonFields(def.fields, '', undefined, fields, limits, 1);
  const xml = renderXForm(def.id_string, title, version, def.fields);
  return { idString: def.id_string, title, rootName: 'data', version, fields, xml, jsonDefinition: { ...def } };
}

function collectJsonFields(items: JsonField[], path: string, repeat: string | undefined, out: FormField[], limits: InputLimits, depth: number): void {
  if (depth > limits.maxDepth) {
    throw new FieldValidationError({ fields: [`${path}: groups and repeats are nested more than ${limits.maxDepth} deep (INPUT_MAX_DEPTH).`] });
  }
  for (const f of items) {
    if (out.length >= limits.maxFields) throw inputTooLarge('form', limits.maxFields, 'FORM_MAX_FIELDS');
    const xpath = path ? `${path}/${f.name}` : f.name;
    out.push({ name: f.name, xpath, type: f.type, label: f.label ?? null, ...(repeat ? { repeat } : {}) });
    if (f.type === 'group' || f.type === 'repeat') collectJsonFields(f.children ?? [], xpath, f.type === 'repeat' ? xpath : repeat, out, limits, depth + 1);
  }
}

function renderXForm(idString: string, title: string, version: string, fields: JsonField[]): string {
  const instance: string[] = [];
  const binds: string[] = [];
  const body: string[] = [];
  const walk = (items: JsonField[], path: string, indent: string) => {
    for (const f of items) {
      const type = f.type;
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
