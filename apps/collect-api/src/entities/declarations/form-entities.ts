import { attr, child, parseXml, type XmlNode } from '../../openrosa/xml.js';

/** One `meta/entity` block of an XForm (docs/entities.md "Forms"). */
export interface EntityDeclaration {
  /** The list (`dataset`) it names. */
  list: string;
  /** Path of the `entity` element under the instance root: `meta/entity`, `people/meta/entity`. */
  path: string;
  /** The repeat the block sits in (its path), or null: one entity per submission. */
  repeat: string | null;
  /** `create` and/or `update`: the attributes the block declares. */
  actions: Array<'create' | 'update'>;
  /** Values the instance template gives the block's attributes (`create="1"`), used when a JSON submission leaves them out. */
  defaults: Record<string, string>;
  /** The `save_to` properties of the block and the questions (paths under the root) they come from. */
  properties: Array<{ name: string; question: string }>;
}

export interface FormEntities {
  version: string;
  declarations: EntityDeclaration[];
}

/** A form whose entity block breaks a rule pyxform also enforces: refused at publishing (400). */
export class FormEntitiesError extends Error {}

/** The entities specification versions pyxform writes and ODK clients read. */
const SUPPORTED_VERSIONS = /^(2022|2023|2024|2025)\.1\.\d+$/;
/** pyxform's rule for list and property names: an XML identifier. */
const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const RESERVED_PROPERTIES = new Set(['name', 'label']);
const ATTRIBUTES = ['dataset', 'id', 'create', 'update', 'baseVersion', 'trunkVersion', 'branchId'];

/** Rules of a list name (docs/entities.md "Lists"); the message, or null when it is fine. */
export function listNameProblem(name: string): string | null {
  if (!name.trim()) return 'The list name is empty.';
  if (name.length > 255) return 'The list name is longer than 255 characters.';
  if (name.includes('.')) return `The list name "${name}" contains a ".".`;
  if (name.startsWith('__')) return `The list name "${name}" starts with "__".`;
  if (!XML_NAME.test(name)) return `The list name "${name}" is not a valid XML name.`;
  return null;
}

/**
 * The entity blocks of an XForm, read from the document as stored (so any pyxform-made XForm
 * works), or null when it declares none. `repeats`: the paths of the form's repeats
 * (FormField xpaths). Throws FormEntitiesError for a block pyxform would refuse.
 */
export function formEntities(xml: string, repeats: ReadonlySet<string>): FormEntities | null {
  if (!xml.includes('entities-version')) return null;
  const html = parseXml(xml);
  const model = child(child(html, 'head'), 'model');
  if (!model) return null;
  const version = attr(model, 'entities-version');
  if (version === undefined) return null;
  if (!SUPPORTED_VERSIONS.test(version)) throw new FormEntitiesError(`The entities version "${version}" is not supported (2022.1 to 2025.1).`);
  const instance = model.children.find((c) => c.name === 'instance' && attr(c, 'id') === undefined);
  const root = instance?.children[0];
  if (!root) return null;
  const declarations: EntityDeclaration[] = [];
  const seen = new Set<string>();
  const walk = (node: XmlNode, prefix: string, repeat: string | null) => {
    for (const el of node.children) {
      const path = prefix ? `${prefix}/${el.name}` : el.name;
      // A repeat's template and its first instance are both in the instance: one is enough.
      if (seen.has(path)) continue;
      seen.add(path);
      if (el.name === 'entity' && node.name === 'meta') {
        declarations.push(declarationOf(el, path, repeat));
        continue;
      }
      walk(el, path, repeats.has(path) ? path : repeat);
    }
  };
  walk(root, '', null);
  if (!declarations.length) return null;
  const rootPrefix = `/${root.name}/`;
  for (const bind of model.children) {
    if (bind.name !== 'bind') continue;
    const saveTo = attr(bind, 'saveto');
    const nodeset = attr(bind, 'nodeset');
    if (saveTo === undefined || !nodeset) continue;
    if (!nodeset.startsWith(rootPrefix)) throw new FormEntitiesError(`The save_to bind "${nodeset}" is outside the instance.`);
    const question = nodeset.slice(rootPrefix.length);
    const owner = ownerOf(declarations, question);
    if (!owner) throw new FormEntitiesError(`The question "${question}" saves to "${saveTo}" but no entity block covers it.`);
    const problem = propertyNameProblem(saveTo);
    if (problem) throw new FormEntitiesError(problem);
    if (owner.properties.some((p) => p.name === saveTo)) throw new FormEntitiesError(`The property "${saveTo}" of list "${owner.list}" is saved more than once.`);
    owner.properties.push({ name: saveTo, question });
  }
  return { version, declarations };
}

function declarationOf(el: XmlNode, path: string, repeat: string | null): EntityDeclaration {
  const list = attr(el, 'dataset') ?? '';
  const problem = listNameProblem(list);
  if (problem) throw new FormEntitiesError(problem);
  const actions: Array<'create' | 'update'> = [];
  if (attr(el, 'create') !== undefined) actions.push('create');
  if (attr(el, 'update') !== undefined) actions.push('update');
  if (!actions.length) throw new FormEntitiesError(`The entity block of list "${list}" neither creates nor updates.`);
  const defaults: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const a of ATTRIBUTES) {
    const v = attr(el, a);
    if (v) defaults[a] = v;
  }
  return { list, path, repeat, actions, defaults, properties: [] };
}

/** The block whose container (the path above its `meta`) is the nearest ancestor of the question. */
function ownerOf(declarations: EntityDeclaration[], question: string): EntityDeclaration | null {
  let best: EntityDeclaration | null = null;
  let bestLength = -1;
  for (const d of declarations) {
    const container = d.path.slice(0, -'meta/entity'.length).replace(/\/$/, '');
    if (container && !question.startsWith(`${container}/`)) continue;
    if (container.length > bestLength) {
      best = d;
      bestLength = container.length;
    }
  }
  return best;
}

export function propertyNameProblem(name: string): string | null {
  if (RESERVED_PROPERTIES.has(name.toLowerCase())) return `"${name}" cannot be a property name (it is reserved).`;
  if (name.startsWith('__')) return `The property name "${name}" starts with "__".`;
  if (!XML_NAME.test(name) || name.length > 255) return `The property name "${name}" is not a valid XML name.`;
  return null;
}
