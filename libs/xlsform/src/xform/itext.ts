// itext: the translations of labels, hints, messages and choice labels, with media forms
// (pyxform's _setup_translations and _setup_media). The second layer of the XForm writer.
import { XlsFormProblem } from '../errors.js';
import { hasReference } from '../expression.js';
import { descendants, type FormNode, type Translatable, xpathOf } from '../model.js';
import { EXTERNAL_FILE_EXTENSIONS, SUPPORTED_MEDIA } from '../question-types.js';
import { el, XmlElement } from '../xml.js';
import { XFormReferences, type TranslationEntry, RE_SEARCH, isSelect, extname } from './references.js';

export abstract class XFormText extends XFormReferences {

  protected translation(lang: string): Map<string, TranslationEntry> {
    let t = this.translations.get(lang);
    if (!t) this.translations.set(lang, (t = new Map()));
    return t;
  }

  protected entry(lang: string, path: string): TranslationEntry {
    const t = this.translation(lang);
    let e = t.get(path);
    if (!e) t.set(path, (e = new Map()));
    return e;
  }

  protected setupTranslations(): void {
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

  protected redirectSearch(node: FormNode): boolean {
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

  protected *elementTranslations(node: FormNode): Generator<{ path: string; lang: string; text: string }> {
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

  protected needsItextRef(node: FormNode): boolean {
    return (node.label !== undefined && typeof node.label !== 'string') || (node.media !== undefined && Object.keys(node.media).length > 0);
  }

  protected setupMedia(): void {
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

  protected addEmptyTranslations(): void {
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

  protected itext(): XmlElement {
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

}
