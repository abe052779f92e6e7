// The model's instances (primary with repeat templates, secondary ones), binds and actions.
// The third layer of the XForm writer.
import { XlsFormProblem } from '../errors.js';
import { defaultIsDynamic, hasReference, parseReferences } from '../expression.js';
import { type ChoiceList, descendants, type FormNode, isSection, xpathOf } from '../model.js';
import { BINDING_CONVERSIONS, CONVERTIBLE_BIND_ATTRIBUTES, EXTERNAL_FILE_EXTENSIONS } from '../question-types.js';
import { el, XmlElement } from '../xml.js';
import { XFormText } from './itext.js';
import { type SecondaryInstance, LAST_SAVED, RE_PULLDATA, isSelect, extname } from './references.js';

export abstract class XFormModel extends XFormText {

  protected primaryInstance(): XmlElement {
    const s = this.survey;
    const root = this.sectionInstance(s.root);
    // pyxform's order: instance:: columns, attribute:: columns, id, xmlns, version, SMS prefix
    // and delimiter.
    for (const [k, v] of Object.entries(s.rootAttributes ?? {})) root.attr(k, v);
    root.attr('id', s.idString);
    if (s.instanceXmlns) root.attr('xmlns', s.instanceXmlns);
    if (s.version) root.attr('version', s.version);
    if (s.smsPrefix) root.attr('odk:prefix', s.smsPrefix);
    if (s.smsDelimiter) root.attr('odk:delimiter', s.smsDelimiter);
    return root;
  }

  // Repeats outside any repeat get a jr:template copy before their first instance; inside a
  // repeat's own instance they do not (pyxform's append_template flag).
  protected sectionInstance(node: FormNode, inRepeat = false): XmlElement {
    const out = el(node.name);
    this.instanceAttributes(node, out);
    for (const child of node.children) {
      if (child.kind === 'external') continue;
      if (child.kind === 'repeat' && !inRepeat) out.append(this.template(child));
      out.append(this.instanceOf(child, inRepeat || child.kind === 'repeat'));
    }
    return out;
  }

  protected instanceOf(node: FormNode, inRepeat = false): XmlElement {
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

  protected instanceAttributes(node: FormNode, out: XmlElement): XmlElement {
    for (const [k, v] of Object.entries(node.instanceAttrs ?? {})) out.attr(k, this.insertXpaths(v, node));
    return out;
  }

  protected template(node: FormNode): XmlElement {
    // pyxform writes a repeat's template without its instance:: attributes.
    const out = el(node.name, { 'jr:template': '' });
    for (const child of node.children) {
      if (child.kind === 'external') continue;
      out.append(child.kind === 'repeat' ? this.template(child) : this.instanceOf(child));
    }
    return out;
  }

  protected *secondaryInstances(): Generator<XmlElement> {
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

  protected pulldataUsages(node: FormNode): string[] {
    const out: string[] = [];
    for (const key of ['calculate', 'constraint', 'readonly', 'required', 'relevant']) {
      const v = node.bind?.[key];
      if (typeof v === 'string' && v.includes('pulldata(')) out.push(v);
    }
    if (node.choiceFilter?.includes('pulldata(')) out.push(node.choiceFilter);
    if (node.default?.includes('pulldata(')) out.push(node.default);
    return out;
  }

  protected usesLastSaved(node: FormNode): boolean {
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

  protected choiceInstance(list: ChoiceList): XmlElement {
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

  protected bindElement(node: FormNode): XmlElement | null {
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

  protected actions(node: FormNode, inRepeat: boolean): XmlElement[] {
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

}
