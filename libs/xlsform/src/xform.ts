// The form tree to XForm XML in pyxform's layout: <h:head> with the title and the model
// (submission, itext, primary instance, secondary instances, binds and model actions, in that
// order), then <h:body> with the controls in sheet order. `${name}` references become absolute
// paths, or relative ones (`../x`, `current()/../x`) between questions of the same repeat.
import { XlsFormProblem, rowPrefix } from './errors.js';
import { hasReference } from './expression.js';
import { descendants, type FormNode, xpathOf } from './model.js';
import { EXTERNAL_FILE_EXTENSIONS } from './question-types.js';
import { el, serializeDocument, XmlElement } from './xml.js';
import { XFormModel } from './xform/model.js';
import { ENTITIES_NS, extname, isSelect, itemsetElement, nearestRepeat } from './xform/references.js';

const NSMAP: Array<[string, string]> = [
  ['xmlns', 'http://www.w3.org/2002/xforms'],
  ['xmlns:h', 'http://www.w3.org/1999/xhtml'],
  ['xmlns:ev', 'http://www.w3.org/2001/xml-events'],
  ['xmlns:xsd', 'http://www.w3.org/2001/XMLSchema'],
  ['xmlns:jr', 'http://openrosa.org/javarosa'],
  ['xmlns:orx', 'http://openrosa.org/xforms'],
  ['xmlns:odk', 'http://www.opendatakit.org/xforms'],
];

export class XFormWriter extends XFormModel {

  write(): string {
    const s = this.survey;
    this.setupTranslations();
    this.setupMedia();
    this.addEmptyTranslations();
    const model = el('model', { 'odk:xforms-version': '1.0.0', 'entities:entities-version': s.entityVersion });
    if (s.submissionUrl || s.publicKey || s.autoSend || s.autoDelete || s.clientEditable) {
      model.append(
        el('submission', {
          action: s.submissionUrl || undefined,
          method: s.submissionUrl ? 'post' : undefined,
          base64RsaPublicKey: s.publicKey || undefined,
          'orx:auto-send': s.autoSend || undefined,
          'orx:auto-delete': s.autoDelete || undefined,
          'odk:client-editable': s.clientEditable ? 'true' : undefined,
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
    const walk = (e: XmlElement) => {
      for (let i = 0; i < e.attrs.length; i++) {
        const k = e.attrs[i][0];
        const colon = k.indexOf(':');
        if (colon <= 0 || declared.has(k.slice(0, colon))) continue;
        const path = e.getAttr('nodeset') ?? e.getAttr('ref') ?? '';
        const row = descendants(this.survey.root).reverse().find((n) => xpathOf(n) === path)?.row;
        throw new XlsFormProblem(
          `${rowPrefix(row)} The attribute '${k}' uses the namespace prefix '${k.slice(0, colon)}', which the form does not declare. Declare it in the 'namespaces' column of the settings sheet (e.g. ${k.slice(0, colon)}="https://example.org/${k.slice(0, colon)}"), or remove the column.`,
        );
      }
      for (let i = 0; i < e.children.length; i++) {
        const c = e.children[i];
        if (typeof c !== 'string') walk(c);
      }
    };
    walk(html);
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
    const hasMedia = (node.media !== undefined && Object.keys(node.media).length > 0) || node.bareMedia === true;
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
