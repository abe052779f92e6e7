import type { XmlNode } from '../../openrosa/xml.js';
import type { EntityDeclaration } from '../declarations/form-entities.js';
import type { RawEntityBlock } from './entity-item.js';

/** A flattened submission record (submissions' SubmissionRecord, by shape). */
type FlatRecord = { [xpath: string]: string | FlatRecord[] };

const ATTRIBUTES = ['dataset', 'id', 'create', 'update', 'baseVersion', 'trunkVersion', 'branchId'] as const;

function node(name: string): XmlNode {
  return { name, qname: name, attrs: Object.create(null) as Record<string, string>, children: [], text: '' };
}

function childAt(parent: XmlNode, name: string, create: boolean): XmlNode | undefined {
  let c = parent.children.find((x) => x.name === name);
  if (!c && create) parent.children.push((c = node(name)));
  return c;
}

/**
 * A JSON submission's record as an element tree, so one reader serves both intake paths: keys
 * are xpaths (`g/q`), lists are repeats whose items carry full xpaths (`rep/q`). JSON has no
 * attributes: the entity block's attributes come as its child values (docs/entities.md "Submissions").
 */
export function recordTree(record: FlatRecord, prefix = '', root: XmlNode = node('data')): XmlNode {
  for (const [key, value] of Object.entries(record)) {
    const rel = prefix && key.startsWith(`${prefix}/`) ? key.slice(prefix.length + 1) : key;
    const steps = rel.split('/');
    let at = root;
    for (const step of steps.slice(0, -1)) at = childAt(at, step, true)!;
    const last = steps[steps.length - 1]!;
    if (Array.isArray(value)) {
      for (const item of value) {
        const el = node(last);
        at.children.push(el);
        recordTree(item, prefix ? `${prefix}/${rel}` : rel, el);
      }
    } else {
      const el = childAt(at, last, true)!;
      el.text = value;
    }
  }
  return root;
}

function at(root: XmlNode, path: string): XmlNode | undefined {
  let n: XmlNode | undefined = root;
  for (const step of path.split('/')) {
    n = n.children.find((c) => c.name === step);
    if (!n) return undefined;
  }
  return n;
}

function all(root: XmlNode, path: string): XmlNode[] {
  const steps = path.split('/');
  let level = [root];
  for (const step of steps) level = level.flatMap((n) => n.children.filter((c) => c.name === step));
  return level;
}

/** The value of an attribute of the block, else of a child of that name (JSON), else the form's template value. */
function valueOf(entity: XmlNode, name: string, defaults: Record<string, string>): string | undefined {
  const attrs = entity.attrs;
  for (const k in attrs) if (k === name || k.endsWith(`:${name}`)) return attrs[k];
  const c = entity.children.find((x) => x.name === name);
  if (c) return c.text;
  return defaults[name];
}

function blockOf(entity: XmlNode, scope: XmlNode, declaration: EntityDeclaration, scopePrefix: string): RawEntityBlock {
  const block: RawEntityBlock = { data: Object.create(null) as Record<string, string> };
  for (const a of ATTRIBUTES) {
    const v = valueOf(entity, a, declaration.defaults);
    if (v !== undefined) block[a] = v;
  }
  const label = entity.children.find((c) => c.name === 'label');
  if (label) block.label = label.text;
  for (const p of declaration.properties) {
    const rel = scopePrefix ? p.question.slice(scopePrefix.length + 1) : p.question;
    const q = at(scope, rel);
    if (q && !q.children.length) block.data[p.name] = q.text;
  }
  return block;
}

/**
 * The entity blocks a submission holds, in document order per declaration: one per block
 * outside repeats, one per repeat item for a block in a repeat. A block absent from the
 * submission is no action.
 */
export function entityBlocks(root: XmlNode, declarations: EntityDeclaration[]): RawEntityBlock[] {
  const out: RawEntityBlock[] = [];
  for (const d of declarations) {
    if (!d.repeat) {
      const entity = at(root, d.path);
      if (entity) out.push(blockOf(entity, root, d, ''));
      continue;
    }
    for (const item of all(root, d.repeat)) {
      const entity = at(item, d.path.slice(d.repeat.length + 1));
      if (entity) out.push(blockOf(entity, item, d, d.repeat));
    }
  }
  return out;
}
