// The form tree to XForm XML in pyxform's layout: <h:head> with the title and the model
// (submission, itext, primary instance, secondary instances, binds and model actions, in that
// order), then <h:body> with the controls in sheet order. `${name}` references become absolute
// paths, or relative ones (`../x`, `current()/../x`) between questions of the same repeat.
import { XlsFormProblem, rowPrefix } from './errors.js';
import { defaultIsDynamic, hasReference, parseReferences, RE_REF } from './expression.js';
import { type ChoiceList, descendants, type FormNode, isSection, type Survey, type Translatable, xpathOf, xpathRelativeTo } from './model.js';
import { BINDING_CONVERSIONS, CONVERTIBLE_BIND_ATTRIBUTES, EXTERNAL_FILE_EXTENSIONS, SUPPORTED_MEDIA } from './question-types.js';
import { el, serializeDocument, type XmlChild, XmlElement } from './xml.js';

const NSMAP: Array<[string, string]> = [
  ['xmlns', 'http://www.w3.org/2002/xforms'],
  ['xmlns:h', 'http://www.w3.org/1999/xhtml'],
  ['xmlns:ev', 'http://www.w3.org/2001/xml-events'],
  ['xmlns:xsd', 'http://www.w3.org/2001/XMLSchema'],
  ['xmlns:jr', 'http://openrosa.org/javarosa'],
  ['xmlns:orx', 'http://openrosa.org/xforms'],
  ['xmlns:odk', 'http://www.opendatakit.org/xforms'],
];

const LAST_SAVED = '__last-saved';
const ENTITIES_NS = 'http://www.opendatakit.org/xforms/entities';
const RE_INDEXED_REPEAT = /indexed-repeat\([^)]+\)/g;
const RE_INSTANCE = /instance\([^)]+.+/;
const RE_BRACKET = /\[([^\]]+)\]/g;
const RE_PULLDATA = /(pulldata\s*\(\s*)(.*?),/g;
const RE_SEARCH = /search\(.*?\)/;

type TextForm = { text: string; context?: FormNode } | string;
type TranslationEntry = Map<string, TextForm>;

interface SecondaryInstance {
  name: string;
  src?: string;
  type: string;
  context: string;
  element: XmlElement;
}

export class XFormWriter {
  private readonly byName = new Map<string, FormNode | null>();
  private readonly translations = new Map<string, Map<string, TranslationEntry>>();

  constructor(private readonly survey: Survey) {
    for (const node of descendants(survey.root)) {
      if (node.kind === 'external' || node.kind === 'entity' || node.kind === 'attribute' || node.parent?.kind === 'entity') continue;
      this.byName.set(node.name, this.byName.has(node.name) ? null : node);
    }
  }

  write(): string {
    const s = this.survey;
    this.setupTranslations();
    this.setupMedia();
    this.addEmptyTranslations();
    const model = el('model', { 'odk:xforms-version': '1.0.0', 'entities:entities-version': s.entityVersion });
    if (s.submissionUrl || s.publicKey || s.autoSend || s.autoDelete) {
      model.append(
        el('submission', {
          action: s.submissionUrl || undefined,
          method: s.submissionUrl ? 'post' : undefined,
          base64RsaPublicKey: s.publicKey || undefined,
          'orx:auto-send': s.autoSend || undefined,
          'orx:auto-delete': s.autoDelete || undefined,
        }),
      );
    }
    if (this.translations.size > 0) model.append(this.itext());
    model.append(el('instance', {}, this.primaryInstance()));
    for (const inst of this.secondaryInstances()) model.append(inst);
    for (const node of descendants(s.root)) {
      if (node.kind === 'external') continue;
      const bind = this.bindElement(node);
      if (bind) model.append(bind);
      if (node.kind === 'question' || node.kind === 'attribute') for (const a of this.actions(node, false)) model.append(a);
    }
    const html = new XmlElement('h:html');
    for (const [k, v] of this.namespaces()) html.attr(k, v);
    html.append(el('h:head', {}, el('h:title', {}, s.title), model));
    const body = el('h:body', { class: s.style || undefined });
    for (const c of s.root.children) body.append(this.control(c));
    html.append(body);
    this.checkPrefixes(html);
    return serializeDocument(html);
  }

  private namespaces(): Array<[string, string]> {
    const out = [...NSMAP];
    if (this.survey.namespaces) {
      for (const ns of this.survey.namespaces.split(/\s+/)) {
        const parts = ns.split('=');
        if (parts.length !== 2 || parts[0] === '') continue;
        const key = `xmlns:${parts[0]}`;
        if (!out.some(([k]) => k === key)) out.push([key, parts[1].replace(/["']/g, '')]);
      }
    }
    if (this.survey.entityVersion && !out.some(([k]) => k === 'xmlns:entities')) out.push(['xmlns:entities', ENTITIES_NS]);
    return out;
  }

  // A column such as `bind::esri:fieldLength` writes an attribute with a namespace prefix; pyxform
  // writes it even when no `namespaces` setting declares the prefix, which gives XML no parser
  // reads. Such a form is refused here, naming the row and the setting that fixes it.
  private checkPrefixes(html: XmlElement): void {
    const declared = new Set(['xml', 'xmlns', ...html.attrs.map(([k]) => k).filter((k) => k.startsWith('xmlns:')).map((k) => k.slice(6))]);
    const rows = new Map<string, number | undefined>();
    for (const n of descendants(this.survey.root)) rows.set(xpathOf(n), n.row);
    const walk = (e: XmlElement) => {
      for (const [k] of e.attrs) {
        const colon = k.indexOf(':');
        if (colon <= 0 || declared.has(k.slice(0, colon))) continue;
        const row = rows.get(e.getAttr('nodeset') ?? e.getAttr('ref') ?? '');
        throw new XlsFormProblem(
          `${rowPrefix(row)} The attribute '${k}' uses the namespace prefix '${k.slice(0, colon)}', which the form does not declare. Declare it in the 'namespaces' column of the settings sheet (e.g. ${k.slice(0, colon)}="https://example.org/${k.slice(0, colon)}"), or remove the column.`,
        );
      }
      for (const c of e.children) if (typeof c !== 'string') walk(c);
    };
    walk(html);
  }

  // ---------- references ----------

  private elementByName(name: string, ref: string): FormNode {
    const found = this.byName.get(name);
    const intro = `There has been a problem trying to replace ${ref} with the XPath to the survey element named '${name}'.`;
    if (found === undefined) throw new XlsFormProblem(`${intro} There is no survey element named '${name}'.`);
    if (found === null) throw new XlsFormProblem(`${intro} There are multiple survey elements named '${name}'.`);
    return found;
  }

  /** pyxform's _var_repl_function for one match of `${name}` in `text`. */
  private replaceRef(text: string, start: number, end: number, name: string, lastSaved: boolean, context: FormNode | undefined, useCurrent: boolean, referenceParent: boolean): string {
    const target = this.elementByName(name, text.slice(start, end));
    const targetPath = xpathOf(target);
    if (!lastSaved && context && this.relativeAllowed(text, start, end, name)) {
      let current = useCurrent;
      if (!current && RE_INSTANCE.test(text)) {
        for (const b of text.matchAll(RE_BRACKET)) {
          if (start >= b.index! && end <= b.index! + b[0].length) current = true;
        }
      }
      const lcar = lowestCommonAncestor(context, target, true);
      if (lcar) {
        const [steps, refPath0] = pathRelativeToLcar(target, context, lcar.steps, lcar.node, referenceParent);
        if (steps) {
          const refPath = refPath0.endsWith(name) ? refPath0 : `/${name}`;
          const prefix = current ? ' current()/' : ' ';
          return `${prefix}${Array.from({ length: steps }, () => '..').join('/')}${refPath} `;
        }
      }
    }
    return ` ${lastSaved ? `instance('${LAST_SAVED}')` : ''}${targetPath} `;
  }

  // A reference inside indexed-repeat() stays absolute when it is the repeat-path arguments (pyxform).
  private relativeAllowed(text: string, start: number, end: number, name: string): boolean {
    if (!text.includes('indexed-repeat(')) return true;
    for (const m of text.matchAll(RE_INDEXED_REPEAT)) {
      const s = m.index!;
      const e = s + m[0].length;
      if (end < s || start > e) continue;
      const args = m[0].slice('indexed-repeat('.length, -1).split(',');
      let idx: number | undefined;
      args.forEach((a, i) => {
        if (a.trim().includes(`\${${name}}`)) idx = i;
      });
      return idx !== undefined && ![0, 1, 3, 5].includes(idx);
    }
    return true;
  }

  insertXpaths(text: string, context: FormNode | undefined, useCurrent = false, referenceParent = false): string {
    if (text.length <= 2 || !text.includes('${')) return text;
    return text.replace(RE_REF, (match, last: string | undefined, name: string, offset: number) =>
      this.replaceRef(text, offset, offset + match.length, name, last !== undefined, context, useCurrent, referenceParent),
    );
  }

  /** Text with `${name}` turned into <output value="..."/> elements (labels, hints, itext values). */
  private outputs(text: string, context: FormNode | undefined): XmlChild[] {
    if (text === '-' || text.length <= 2 || !text.includes('${')) return [text];
    const parts: XmlChild[] = [];
    let last = 0;
    for (const m of text.matchAll(RE_REF)) {
      const start = m.index!;
      parts.push(text.slice(last, start));
      parts.push(el('output', { value: this.replaceRef(text, start, start + m[0].length, m[2], m[1] !== undefined, context, false, false) }));
      last = start + m[0].length;
    }
    parts.push(text.slice(last));
    return parts.filter((p) => p !== '');
  }

  // ---------- itext ----------

  private translation(lang: string): Map<string, TranslationEntry> {
    let t = this.translations.get(lang);
    if (!t) this.translations.set(lang, (t = new Map()));
    return t;
  }

  private entry(lang: string, path: string): TranslationEntry {
    const t = this.translation(lang);
    let e = t.get(path);
    if (!e) t.set(path, (e = new Map()));
    return e;
  }

  private setupTranslations(): void {
    const dl = this.survey.defaultLanguage;
    for (const [name, list] of this.survey.choices) {
      if (!list.requiresItext) continue;
      list.choices.forEach((choice, idx) => {
        const id = `${name}-${idx}`;
        if (choice.label !== undefined && choice.label !== '') {
          if (typeof choice.label === 'string') this.entry(dl, id).set('long', choice.label);
          else for (const [lang, v] of Object.entries(choice.label)) this.entry(lang, id).set('long', v);
        }
        for (const [media, v] of Object.entries(choice.media ?? {})) {
          if (typeof v === 'string') this.entry(dl, id).set(media, v);
          else for (const [lang, m] of Object.entries(v)) this.entry(lang, id).set(media, m);
        }
      });
    }
    const searchLists: Array<[string, string]> = [];
    const nonSearch: Array<[string, string]> = [];
    for (const node of descendants(this.survey.root)) {
      if (node.kind === 'external') continue;
      if (node.kind === 'question' && node.listName !== undefined && isSelect(node)) {
        if (this.redirectSearch(node)) searchLists.push([node.name, node.listName]);
        else nonSearch.push([node.name, node.listName]);
      }
      for (const t of this.elementTranslations(node)) {
        let path = t.path;
        let form = 'long';
        if (path.endsWith(':guidance_hint')) {
          path = path.replace('guidance_hint', 'hint');
          form = 'guidance';
        }
        this.entry(t.lang, path).set(form, { text: t.text, context: node });
      }
    }
    for (const [q, list] of searchLists) {
      const others = nonSearch.filter(([, l]) => l === list).map(([n]) => `'${n}'`);
      if (others.length > 0) {
        throw new XlsFormProblem(
          `Question '${q}' uses 'search()', and its select type references the choice list name '${list}'. This choice list name is referenced by at least one other question that is not using 'search()', which will not work: ${others.join(', ')}. Either 1) use 'search()' for all questions using this choice list name, or 2) use a different choice list name for the question using 'search()'.`,
        );
      }
    }
  }

  private redirectSearch(node: FormNode): boolean {
    const appearance = node.control?.appearance;
    if (!appearance || appearance.length <= 7 || !RE_SEARCH.test(appearance)) return false;
    const itemset = node.itemset ?? '';
    if (EXTERNAL_FILE_EXTENSIONS.has(extname(itemset))) {
      throw new XlsFormProblem(`Question '${node.name}' is a select from file type, using 'search()'. This combination is not supported. Remove the 'search()' usage, or change the select type.`);
    }
    const list = this.survey.choices.get(itemset);
    node.itemset = '';
    if (list && !list.usedBySearch) {
      list.usedBySearch = true;
      list.choices.forEach((c, i) => (c.itextRef = `jr:itext('${list.name}-${i}')`));
    }
    return true;
  }

  private *elementTranslations(node: FormNode): Generator<{ path: string; lang: string; text: string }> {
    const dl = this.survey.defaultLanguage;
    const path = (what: string) => `${xpathOf(node)}:${what}`;
    for (const key of ['jr:constraintMsg', 'jr:requiredMsg', 'jr:noAppErrorString']) {
      const v = node.bind?.[key];
      if (v === undefined) continue;
      if (typeof v !== 'string') for (const [lang, text] of Object.entries(v)) yield { path: path(key), lang, text };
      else if (key !== 'jr:noAppErrorString' && hasReference(v)) yield { path: path(key), lang: dl, text: v };
    }
    const needsItext = this.needsItextRef(node);
    for (const what of ['label', 'hint', 'guidance_hint'] as const) {
      let value: Translatable | undefined = what === 'label' ? node.label : what === 'hint' ? node.hint : node.guidanceHint;
      if (what === 'label' && needsItext && typeof value === 'string' && value) value = { [dl]: value };
      if (what === 'guidance_hint' && typeof value === 'string' && value.length > 0) value = { [dl]: value };
      if (what === 'hint' && typeof value === 'string' && value.length > 0 && node.guidanceHint) value = { [dl]: value };
      if (value !== undefined && typeof value !== 'string') for (const [lang, text] of Object.entries(value)) yield { path: path(what), lang, text };
    }
  }

  private needsItextRef(node: FormNode): boolean {
    return (node.label !== undefined && typeof node.label !== 'string') || (node.media !== undefined && Object.keys(node.media).length > 0);
  }

  private setupMedia(): void {
    for (const node of descendants(this.survey.root)) {
      if (node.kind === 'external' || !node.media || Object.keys(node.media).length === 0) continue;
      let media = node.media;
      const dflt = media.default as unknown;
      if (dflt && typeof dflt === 'object') media = dflt as Record<string, Translatable>;
      const key = `${xpathOf(node)}:label`;
      for (const [type, value] of Object.entries(media)) {
        if (!SUPPORTED_MEDIA.has(type)) throw new XlsFormProblem(`Media type: ${type} not supported`);
        const localized = typeof value === 'string' ? { [this.survey.defaultLanguage]: value } : value;
        for (const [lang, m] of Object.entries(localized)) this.entry(lang, key).set(type, m);
      }
    }
  }

  private addEmptyTranslations(): void {
    const paths = new Map<string, Set<string>>();
    for (const t of this.translations.values()) {
      for (const [path, content] of t) {
        const set = paths.get(path) ?? new Set<string>();
        for (const k of content.keys()) set.add(k);
        paths.set(path, set);
      }
    }
    for (const t of this.translations.values()) {
      for (const [path, forms] of paths) {
        let e = t.get(path);
        if (!e) t.set(path, (e = new Map()));
        for (const f of forms) if (!e.has(f)) e.set(f, '-');
      }
    }
  }

  private itext(): XmlElement {
    const itext = el('itext');
    for (const [lang, t] of this.translations) {
      const tr = el('translation', { lang, default: lang === this.survey.defaultLanguage ? 'true()' : undefined });
      for (const [id, forms] of t) {
        const labelType = id.includes(':') ? id.slice(id.indexOf(':') + 1) : '';
        const text = el('text', { id });
        for (const [form, value] of forms) {
          const content = typeof value === 'string' ? this.outputs(value, undefined) : this.outputs(value.text, value.context);
          const plain = typeof value === 'string' ? value : value.text;
          if (labelType === 'hint') {
            text.append(el('value', { form: form === 'guidance' ? 'guidance' : undefined }, ...content));
          } else if (form === 'long') {
            text.append(el('value', {}, ...content));
          } else if (plain !== '-') {
            const prefix = form === 'image' || form === 'big-image' ? 'images' : form;
            const ctx = typeof value === 'string' ? undefined : value.context;
            text.append(el('value', { form }, ...this.outputs(`jr://${prefix}/${plain}`, ctx)));
          }
        }
        tr.append(text);
      }
      itext.append(tr);
    }
    return itext;
  }

  // ---------- instances ----------

  private primaryInstance(): XmlElement {
    const s = this.survey;
    const root = this.sectionInstance(s.root);
    root.attr('id', s.idString);
    if (s.version) root.attr('version', s.version);
    return root;
  }

  // Repeats outside any repeat get a jr:template copy before their first instance; inside a
  // repeat's own instance they do not (pyxform's append_template flag).
  private sectionInstance(node: FormNode, inRepeat = false): XmlElement {
    const out = el(node.name);
    this.instanceAttributes(node, out);
    for (const child of node.children) {
      if (child.kind === 'external') continue;
      if (child.kind === 'repeat' && !inRepeat) out.append(this.template(child));
      out.append(this.instanceOf(child, inRepeat || child.kind === 'repeat'));
    }
    return out;
  }

  private instanceOf(node: FormNode, inRepeat = false): XmlElement {
    if (node.kind === 'entity') {
      const entity = el(node.name);
      for (const c of node.children) {
        if (c.kind === 'attribute') entity.attr(c.name.slice(1), c.value ?? '');
        else entity.append(this.instanceOf(c));
      }
      return entity;
    }
    if (isSection(node)) return this.sectionInstance(node, inRepeat);
    const out = node.default && !defaultIsDynamic(node.default, node.type) ? el(node.name, {}, node.default) : el(node.name);
    return this.instanceAttributes(node, out);
  }

  private instanceAttributes(node: FormNode, out: XmlElement): XmlElement {
    for (const [k, v] of Object.entries(node.instanceAttrs ?? {})) out.attr(k, this.insertXpaths(v, node));
    return out;
  }

  private template(node: FormNode): XmlElement {
    // pyxform writes a repeat's template without its instance:: attributes.
    const out = el(node.name, { 'jr:template': '' });
    for (const child of node.children) {
      if (child.kind === 'external') continue;
      out.append(child.kind === 'repeat' ? this.template(child) : this.instanceOf(child));
    }
    return out;
  }

  private *secondaryInstances(): Generator<XmlElement> {
    const found: SecondaryInstance[] = [];
    let lastSaved = false;
    const contextOf = (n: FormNode) => `[type: ${n.parent?.type ?? 'survey'}, name: ${n.parent?.name ?? ''}]`;
    for (const node of descendants(this.survey.root)) {
      if (node.kind === 'external') {
        const ext = node.type.split('-')[0];
        const src = `jr://${ext === 'csv' ? 'file-csv' : 'file'}/${node.name}.${ext}`;
        found.push({ name: node.name, src, type: 'external', context: contextOf(node), element: el('instance', { id: node.name, src }) });
        continue;
      }
      for (const usage of this.pulldataUsages(node)) {
        for (const m of usage.matchAll(RE_PULLDATA)) {
          const id = m[2].replace(/['"]/g, '').trim();
          const src = `jr://file-csv/${id}.csv`;
          found.push({ name: id, src, type: 'pulldata', context: contextOf(node), element: el('instance', { id, src }) });
        }
      }
      if (node.kind !== 'question') continue;
      if (isSelect(node) && node.itemset) {
        const ext = extname(node.itemset);
        if (EXTERNAL_FILE_EXTENSIONS.has(ext)) {
          const id = node.itemset.slice(0, -ext.length);
          const src = `jr://${ext === '.xml' || ext === '.geojson' ? 'file' : `file-${ext.slice(1)}`}/${node.itemset}`;
          found.push({ name: id, src, type: 'file', context: contextOf(node), element: el('instance', { id, src }) });
        }
      }
      if (!lastSaved) lastSaved = this.usesLastSaved(node);
    }
    if (lastSaved) found.push({ name: LAST_SAVED, src: 'jr://instance/last-saved', type: 'instance', context: '', element: el('instance', { id: LAST_SAVED, src: 'jr://instance/last-saved' }) });
    for (const [name, list] of this.survey.choices) {
      if (!list.usedBySearch) found.push({ name, type: 'choice', context: 'survey', element: this.choiceInstance(list) });
    }
    const externals = new Map<string, SecondaryInstance[]>();
    for (const f of found.filter((f) => f.type === 'external')) externals.set(f.name, [...(externals.get(f.name) ?? []), f]);
    const dupes = [...externals].filter(([, v]) => v.length > 1);
    if (dupes.length > 0) {
      throw new XlsFormProblem(
        dupes
          .map(([name, copies]) => `Instance names must be unique within a form. The name '${name}' was found ${copies.length} time(s), under these contexts: ${copies.map((c) => `${c.context}(${c.type})`).join(', ')}`)
          .join('\n'),
      );
    }
    const seen = new Map<string, SecondaryInstance>();
    for (const f of found) {
      const prior = seen.get(f.name);
      if (prior) {
        if (prior.src !== f.src) {
          throw new XlsFormProblem(
            `The same instance id will be generated for different external instance source URIs. Please check the form. Instance name: '${f.name}', Existing type: '${prior.type}', Existing URI: '${prior.src ?? 'None'}', Duplicate type: '${f.type}', Duplicate URI: '${f.src ?? 'None'}', Duplicate context: '${f.context}'.`,
          );
        }
        continue;
      }
      seen.set(f.name, f);
      yield f.element;
    }
  }

  private pulldataUsages(node: FormNode): string[] {
    const out: string[] = [];
    for (const key of ['calculate', 'constraint', 'readonly', 'required', 'relevant']) {
      const v = node.bind?.[key];
      if (typeof v === 'string' && v.includes('pulldata(')) out.push(v);
    }
    if (node.choiceFilter?.includes('pulldata(')) out.push(node.choiceFilter);
    if (node.default?.includes('pulldata(')) out.push(node.default);
    return out;
  }

  private usesLastSaved(node: FormNode): boolean {
    const has = (v: string | undefined) => {
      if (!v || v.length <= 14 || !v.includes('last-saved#')) return false;
      try {
        return parseReferences(v).some((r) => r.lastSaved);
      } catch {
        return false;
      }
    };
    if (has(node.default) || has(node.choiceFilter)) return true;
    for (const key of ['calculate', 'constraint', 'readonly', 'required', 'relevant']) {
      const v = node.bind?.[key];
      if (typeof v === 'string' && has(v)) return true;
    }
    return false;
  }

  private choiceInstance(list: ChoiceList): XmlElement {
    const root = el('root');
    list.choices.forEach((c, idx) => {
      const item = el('item');
      if (list.requiresItext) item.append(el('itextId', {}, `${list.name}-${idx}`));
      item.append(el('name', {}, c.name));
      if (!list.requiresItext && typeof c.label === 'string') item.append(el('label', {}, c.label));
      for (const [k, v] of c.extra) item.append(el(k, {}, v));
      root.append(item);
    });
    return el('instance', { id: list.name }, root);
  }

  // ---------- binds and actions ----------

  private bindElement(node: FormNode): XmlElement | null {
    if (!node.bind) return null;
    const bind = el('bind', { nodeset: xpathOf(node) });
    for (const [k, raw] of Object.entries(node.bind)) {
      if (node.trigger && k === 'calculate') continue;
      let v: string;
      if (typeof raw !== 'string') {
        v = `jr:itext('${xpathOf(node)}:${k}')`;
      } else if (CONVERTIBLE_BIND_ATTRIBUTES.has(k) && raw in BINDING_CONVERSIONS) {
        v = BINDING_CONVERSIONS[raw];
      } else if ((k === 'jr:constraintMsg' || k === 'jr:requiredMsg') && hasReference(raw)) {
        v = `jr:itext('${xpathOf(node)}:${k}')`;
      } else v = raw;
      bind.attr(k, this.insertXpaths(v, node));
    }
    return bind;
  }

  private actions(node: FormNode, inRepeat: boolean): XmlElement[] {
    const out: XmlElement[] = [];
    for (const a of node.actions) {
      if ((!inRepeat && a.event === 'odk-new-repeat') || (inRepeat && a.event !== 'odk-new-repeat')) continue;
      let value: string | undefined;
      if (a.value !== undefined) value = a.value;
      else if (node.dynamicDefault || (node.default && defaultIsDynamic(node.default, node.type))) value = this.insertXpaths(node.default!, node);
      else if (node.default) value = node.default;
      const action = el(a.name, { ref: xpathOf(node), event: a.event });
      if (a.name === 'setvalue' && value) action.attr('value', value);
      if (a.name === 'odk:recordaudio' && a.quality) action.attr('odk:quality', a.quality);
      out.push(action);
    }
    return out;
  }

  // ---------- body ----------

  private control(node: FormNode): XmlElement | null {
    switch (node.kind) {
      case 'group':
        return this.groupControl(node);
      case 'repeat':
        return this.repeatControl(node);
      case 'question':
        return this.questionControl(node);
      default:
        return null;
    }
  }

  private groupControl(node: FormNode): XmlElement | null {
    if (node.bodyless) return null;
    const group = el('group');
    for (const [k, v] of Object.entries(node.control ?? {})) group.attr(k, k === 'appearance' ? v : this.insertXpaths(v, node));
    group.attr('ref', xpathOf(node));
    if (node.label) group.append(this.label(node));
    for (const c of node.children) group.append(this.control(c));
    return group;
  }

  private repeatControl(node: FormNode): XmlElement {
    const repeat = el('repeat', { nodeset: xpathOf(node) });
    for (const [k, v] of Object.entries(node.control ?? {})) repeat.attr(k, this.insertXpaths(v, node));
    for (const c of node.children) repeat.append(this.control(c));
    for (const d of descendants(node)) {
      if (d === node || (d.kind !== 'question' && d.kind !== 'attribute')) continue;
      if (nearestRepeat(d) !== node) continue;
      for (const a of this.actions(d, true)) repeat.append(a);
    }
    // pyxform 4.5 always gives the wrapping group a label, empty when the repeat has none, so the
    // repeat's attributes stay on the repeat.
    return el('group', { ref: xpathOf(node) }, this.label(node), repeat);
  }

  private label(node: FormNode): XmlElement {
    if (this.needsItextRef(node)) return el('label', { ref: `jr:itext('${xpathOf(node)}:label')` });
    if (typeof node.label === 'string' && node.label) return el('label', {}, ...this.outputs(node.label, node));
    return el('label');
  }

  private hint(node: FormNode): XmlElement {
    if ((node.hint !== undefined && typeof node.hint !== 'string') || node.guidanceHint) return el('hint', { ref: `jr:itext('${xpathOf(node)}:hint')` });
    if (typeof node.hint === 'string' && node.hint) return el('hint', {}, ...this.outputs(node.hint, node));
    return el('hint');
  }

  private labelAndHint(node: FormNode): XmlElement[] {
    const out: XmlElement[] = [];
    const hasMedia = node.media !== undefined && Object.keys(node.media).length > 0;
    if (node.label || hasMedia) out.push(this.label(node));
    if (node.hint || node.guidanceHint) {
      if (out.length === 0) out.push(this.label(node));
      out.push(this.hint(node));
    }
    if (out.length === 0) throw new XlsFormProblem(`${rowPrefix(node.row)} The survey element named '${node.name}' has no label or hint.`);
    if (!node.label && !hasMedia && !node.hint && node.guidanceHint) {
      throw new XlsFormProblem(`${rowPrefix(node.row)} The survey element named '${node.name}' has no label or hint.`);
    }
    if (node.media && !('image' in node.media) && 'big-image' in node.media) {
      throw new XlsFormProblem(`To use big-image, you must also specify an image for the survey element named ${node.name}.`);
    }
    return out;
  }

  private questionControl(node: FormNode): XmlElement | null {
    const s = this.survey;
    if (node.type === 'calculate' || ((node.bind?.calculate !== undefined || node.trigger) && !(node.label || node.hint))) {
      const nested = s.setvaluesByTrigger.get(node.name);
      if (nested && nested.length > 0) {
        throw new XlsFormProblem(`The question \${${node.name}} is not user-visible so it can't be used as a calculation trigger for question \${${nested[0][0]}}.`);
      }
      return null;
    }
    const tag = node.control?.tag;
    if (!tag || tag === 'action') return null;
    const result = el(tag, {}, ...this.labelAndHint(node));
    result.attr('ref', xpathOf(node));
    // pyxform writes ref first, then the control attributes.
    result.attrs.unshift(result.attrs.pop()!);
    for (const [k, v] of Object.entries(node.control ?? {})) if (k !== 'tag') result.attr(k, this.insertXpaths(v, node));
    if (tag === 'input' && node.query) {
      const pred = node.choiceFilter ? this.insertXpaths(node.choiceFilter, node, true) : undefined;
      result.attr('query', pred ? `instance('${node.query}')/root/item[${pred}]` : `instance('${node.query}')/root/item`);
    }
    if (isSelect(node)) this.selectItems(node, result);
    for (const tag of node.tags ?? []) result.append(el('tag', { key: tag.name }, tag.label ? el('label', {}, tag.label) : el('label')));
    if (tag === 'range' && node.itemset) {
      const list = s.choices.get(node.itemset);
      result.append(itemsetElement(`instance('${node.itemset}')/root/item`, 'name', list?.requiresItext ? 'jr:itext(itextId)' : 'label'));
    }
    if (['geopoint', 'geoshape', 'geotrace'].includes(node.type) && node.itemset) result.append(this.itemset(node, true));
    for (const [target, value] of s.setvaluesByTrigger.get(node.name) ?? []) {
      const action = el('setvalue', { ref: xpathOf(this.elementByName(target, `\${${target}}`)), event: 'xforms-value-changed' });
      const v = this.insertXpaths(value, node);
      if (v) action.attr('value', v);
      result.append(action);
    }
    for (const [target] of s.setgeopointByTrigger.get(node.name) ?? []) {
      result.append(el('odk:setgeopoint', { ref: xpathOf(this.elementByName(target, `\${${target}}`)), event: 'xforms-value-changed' }));
    }
    return result;
  }

  private selectItems(node: FormNode, result: XmlElement): void {
    if (node.itemset) {
      result.append(this.itemset(node, false));
      return;
    }
    const list = node.listName ? this.survey.choices.get(node.listName) : undefined;
    if (!list || !list.usedBySearch) return;
    for (const c of list.choices) {
      let label: XmlElement;
      if (list.requiresItext) label = el('label', { ref: c.itextRef });
      else if (node.label && typeof c.label === 'string') label = el('label', {}, ...this.outputs(c.label, undefined));
      else label = el('label');
      result.append(el('item', {}, label, el('value', {}, c.name)));
    }
  }

  private itemset(node: FormNode, geo: boolean): XmlElement {
    const itemset = node.itemset!;
    const ext = extname(itemset);
    let nodeset: string;
    let valueRef: string;
    let labelRef: string;
    let filter: string | undefined;
    const hasRef = hasReference(itemset);
    if (EXTERNAL_FILE_EXTENSIONS.has(ext)) {
      valueRef = ext === '.geojson' ? 'id' : 'name';
      labelRef = ext === '.geojson' ? 'title' : 'label';
      valueRef = node.parameters.value ?? valueRef;
      labelRef = node.parameters.label ?? labelRef;
      nodeset = `instance('${itemset.slice(0, -ext.length)}')/root/item`;
    } else if (hasRef && geo) {
      nodeset = this.insertXpaths(itemset, node, false, true).trim();
      valueRef = labelRef = 'geometry';
      filter = "./geometry != ''";
    } else if (hasRef) {
      const path = this.insertXpaths(itemset, node, false, true).trim().split('/');
      valueRef = labelRef = path[path.length - 1];
      nodeset = path.slice(0, -1).join('/');
      filter = `./${valueRef} != ''`;
    } else {
      const list = this.survey.choices.get(itemset);
      valueRef = 'name';
      labelRef = list?.requiresItext ? 'jr:itext(itextId)' : 'label';
      nodeset = `instance('${itemset}')/root/item`;
    }
    if (node.choiceFilter) {
      let cf = this.insertXpaths(node.choiceFilter, node, true, hasRef);
      if (hasRef) cf = cf.split(`current()/${nodeset}`).join('.').split(nodeset).join('.');
      filter = cf;
    }
    if (filter) nodeset += `[${filter}]`;
    if (node.parameters.randomize === 'true') {
      nodeset = node.parameters.seed !== undefined ? `randomize(${nodeset}, ${this.insertXpaths(node.parameters.seed, node).trim()})` : `randomize(${nodeset})`;
    }
    return itemsetElement(nodeset, valueRef, labelRef);
  }
}

function itemsetElement(nodeset: string, valueRef: string, labelRef: string): XmlElement {
  return el('itemset', { nodeset }, el('value', { ref: valueRef }), el('label', { ref: labelRef }));
}

function isSelect(node: FormNode): boolean {
  return node.type === 'select one' || node.type === 'select all that apply' || node.type === 'rank';
}

function extname(name: string): string {
  const slash = name.lastIndexOf('/');
  const dot = name.lastIndexOf('.');
  return dot > slash + 1 ? name.slice(dot) : '';
}

function nearestRepeat(node: FormNode): FormNode | undefined {
  for (let p = node.parent; p; p = p.parent) if (p.kind === 'repeat') return p;
  return undefined;
}

/** The nearest ancestor shared by both (a repeat when `repeatOnly`), with its distance from `a`. */
function lowestCommonAncestor(a: FormNode, b: FormNode, repeatOnly: boolean): { node: FormNode; steps: number } | undefined {
  const bAncestors = new Set<FormNode>();
  for (let p = b.parent; p; p = p.parent) bAncestors.add(p);
  let steps = 1;
  for (let p = a.parent; p; p = p.parent, steps++) {
    const typeOk = repeatOnly ? p.kind === 'repeat' : p.kind === 'repeat' || p.kind === 'group';
    if (typeOk && bAncestors.has(p)) return { node: p, steps };
  }
  return undefined;
}

function pathRelativeToLcar(target: FormNode, source: FormNode, lcarSteps: number, lcar: FormNode, referenceParent: boolean): [number, string] {
  if (referenceParent) {
    const sourceCar = nearestRepeat(source);
    const targetCar = nearestRepeat(target);
    const lcarNotInRepeat = nearestRepeat(lcar) === undefined;
    if (lcar === targetCar && (lcarNotInRepeat || sourceCar !== lcar) && lcar.parent) {
      return [lcarSteps + 1, xpathRelativeTo(target, lcar.parent)];
    }
  }
  const lca = lowestCommonAncestor(source, target, false);
  if (!lca) return [0, xpathOf(target)];
  return [lca.steps, xpathRelativeTo(target, lca.node)];
}
