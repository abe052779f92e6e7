// `begin loop over LIST` ... `end loop`: the loop becomes a group holding one group per choice of
// LIST (named and labelled as the choice, `none` left out), each with a copy of the loop's rows in
// which `%(name)s`, `%(label)s` and the choice's other columns are filled in, as pyxform's
// builder does it (docs/xlsform.md, "What is supported").
import { type Choice, type FormNode, newNode, type Survey, type Translatable } from '../model.js';

type Columns = Record<string, string | Record<string, string>>;

/** Python's `text % mapping` for the forms loops use: `%(key)s` and `%%`. */
function fill(text: string, columns: Columns): string {
  if (!text.includes('%')) return text;
  return text.replace(/%(?:\(([^)]*)\)s|%)/g, (whole, key: string | undefined) => {
    if (key === undefined) return '%';
    const v = columns[key];
    if (v === undefined) return whole;
    return typeof v === 'string' ? v : pythonDict(v);
  });
}

function pythonDict(v: Record<string, string>): string {
  return `{${Object.entries(v).map(([k, x]) => `'${k}': '${x}'`).join(', ')}}`;
}

function fillTranslatable(value: Translatable, columns: Columns, choice: Choice): Translatable {
  if (typeof value === 'string') return fill(value, columns);
  const out: Record<string, string> = {};
  for (const [lang, text] of Object.entries(value)) {
    // A translated choice label fills each language of a translated text with its own label.
    const byLang = choice.label !== undefined && typeof choice.label !== 'string' && lang in choice.label ? { name: choice.name, label: choice.label[lang] } : columns;
    out[lang] = fill(text, byLang);
  }
  return out;
}

function clone(node: FormNode, parent: FormNode): FormNode {
  const copy: FormNode = {
    ...node,
    parent,
    xpath: undefined,
    bind: node.bind ? { ...node.bind } : undefined,
    control: node.control ? { ...node.control } : undefined,
    media: node.media ? { ...node.media } : undefined,
    actions: node.actions.map((a) => ({ ...a })),
    parameters: { ...node.parameters },
    children: [],
  };
  copy.children = node.children.map((c) => clone(c, copy));
  return copy;
}

/** The loop row's direct children get the choice's columns filled in (not their own children, as pyxform). */
function substitute(node: FormNode, columns: Columns, choice: Choice): void {
  if (node.label !== undefined) node.label = fillTranslatable(node.label, columns, choice);
  if (node.hint !== undefined) node.hint = fillTranslatable(node.hint, columns, choice);
  if (node.guidanceHint !== undefined) node.guidanceHint = fillTranslatable(node.guidanceHint, columns, choice);
  if (node.default !== undefined) node.default = fill(node.default, columns);
  if (node.choiceFilter !== undefined) node.choiceFilter = fill(node.choiceFilter, columns);
  for (const [k, v] of Object.entries(node.bind ?? {})) node.bind![k] = fillTranslatable(v, columns, choice);
  for (const [k, v] of Object.entries(node.control ?? {})) node.control![k] = fill(v, columns);
}

function expand(loop: FormNode, survey: Survey): void {
  const list = survey.choices.get(loop.listName!);
  const template = loop.children;
  loop.children = [];
  for (const choice of list?.choices ?? []) {
    if (choice.name === 'none') continue;
    const columns: Columns = { name: choice.name, ...(choice.label !== undefined ? { label: choice.label } : {}) };
    for (const [k, v] of choice.extra) columns[k] = v;
    const group = newNode('group', choice.name, 'group');
    group.label = choice.label;
    if (choice.media && Object.keys(choice.media).length > 0) group.media = { ...choice.media };
    group.parent = loop;
    for (const child of template) {
      const copy = clone(child, group);
      substitute(copy, columns, choice);
      group.children.push(copy);
    }
    loop.children.push(group);
  }
  loop.type = 'group';
  delete loop.listName;
}

/** Expands every loop of the tree, outer loops first. */
export function expandLoops(node: FormNode, survey: Survey): void {
  if (node.type === 'loop' && node.listName !== undefined) expand(node, survey);
  for (const child of node.children) expandLoops(child, survey);
}
