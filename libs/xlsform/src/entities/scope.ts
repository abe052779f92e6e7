// Where the survey refers to each entity list: `save_to` cells and `${question}` references in
// the entities sheet, each with the path of containers (survey, groups, repeats) it sits in.
// From them, the container each entity's meta/entity block asks for and the scope checks
// pyxform makes (docs/xlsform.md, "Entities").
import { isXmlTag } from '../expression.js';
import { XlsFormProblem } from '../errors.js';
import { RESERVED_PREFIX, type EntityDeclaration } from './declarations.js';
import { ENTITY_MESSAGES as M } from './messages.js';

export type ContainerType = 'survey' | 'group' | 'repeat' | 'loop';
export interface ContainerNode {
  name: string;
  type: ContainerType;
}
/** Containers from the survey root down; the root is named `survey`. */
export type ContainerPath = readonly ContainerNode[];

export const SURVEY_PATH: ContainerPath = [{ name: 'survey', type: 'survey' }];
export const pathKey = (p: ContainerPath): string => p.map((n) => `${n.type}:${n.name}`).join('/');
export const pathText = (p: ContainerPath): string => `/${p.map((n) => n.name).join('/')}`;
const samePath = (a: ContainerPath, b: ContainerPath) => pathKey(a) === pathKey(b);

/** The path up to the nearest repeat (or the survey) holding the last container. */
export function scopeBoundary(p: ContainerPath): ContainerPath {
  for (let i = p.length - 1; i >= 0; i--) if (p[i].type === 'repeat' || p[i].type === 'survey') return p.slice(0, i + 1);
  return SURVEY_PATH;
}

/** How many repeats the path passes through. */
export function repeatDepth(p: ContainerPath): number {
  let n = 0;
  for (let i = p.length - 1; i > 0; i--) if (p[i].type === 'repeat') n++;
  return n;
}

/** How many groups lie between the last container and its nearest repeat (or the survey). */
function groupsBelowBoundary(p: ContainerPath): number {
  let n = 0;
  for (let i = p.length - 1; i >= 0; i--) {
    if (p[i].type === 'repeat' || p[i].type === 'survey') break;
    n++;
  }
  return n;
}

export interface ReferenceSource {
  path: ContainerPath;
  row: number;
  propertyName?: string;
  questionName?: string;
}

export interface EntityReferences {
  dataset: string;
  row: number;
  references: ReferenceSource[];
}

export interface AllocationRequest {
  scope: ContainerPath;
  dataset: string;
  requested: ContainerPath;
  row: number;
  /** Paths of the save_to references, first seen first. */
  lineages: ContainerPath[];
}

/** What the survey row reader tells the entities code about one row. */
export interface RowContext {
  path: ContainerPath;
  row: number;
  questionName: string | undefined;
  containerRow: boolean;
  bind: Record<string, unknown> | undefined;
}

/**
 * Records the save_to of one survey row (its `list#` prefix taken off the bind) and the entity
 * references to the row's question; throws on the first rule the row breaks.
 */
export function collectRowReferences(
  ctx: RowContext,
  declarations: Map<string, EntityDeclaration> | undefined,
  variableRefs: Map<string, string[]>,
  byDataset: Map<string, EntityReferences>,
): void {
  const refsOf = (dataset: string) => {
    let r = byDataset.get(dataset);
    if (!r) byDataset.set(dataset, (r = { dataset, row: declarations!.get(dataset)!.row, references: [] }));
    return r;
  };
  const raw = ctx.bind?.['entities:saveto'];
  let saveto = typeof raw === 'string' ? raw : undefined;
  if (saveto) {
    if (!declarations || declarations.size === 0) throw new XlsFormProblem(M.saveToWithoutEntities(ctx.row));
    const delimiters = saveto.split('#').length - 1;
    let dataset: string;
    if (delimiters === 1) {
      [dataset, saveto] = saveto.split('#');
      ctx.bind!['entities:saveto'] = saveto;
    } else if (delimiters > 1) {
      throw new XlsFormProblem(M.manyDelimiters(ctx.row));
    } else {
      if (declarations.size > 1) throw new XlsFormProblem(M.missingListPrefix(ctx.row));
      dataset = declarations.keys().next().value!;
    }
    if (!declarations.has(dataset)) throw new XlsFormProblem(M.unknownList(ctx.row, dataset));
    const refs = refsOf(dataset);
    validateSaveTo(saveto, ctx, refs);
    refs.references.push({ path: ctx.path, row: ctx.row, propertyName: saveto });
  }
  if (ctx.questionName !== undefined) {
    for (const dataset of variableRefs.get(ctx.questionName) ?? []) {
      refsOf(dataset).references.push({ path: ctx.path, row: ctx.row, questionName: ctx.questionName });
    }
  }
}

function validateSaveTo(saveto: string, ctx: RowContext, refs: EntityReferences): void {
  if (!saveto) throw new XlsFormProblem(M.notXmlName('survey', ctx.row, 'save_to'));
  if (ctx.containerRow) throw new XlsFormProblem(M.saveToOnContainer(ctx.row));
  if (['name', 'label'].includes(saveto.toLowerCase())) throw new XlsFormProblem(M.reservedWord('survey', ctx.row, 'save_to'));
  if (saveto.startsWith(RESERVED_PREFIX)) throw new XlsFormProblem(M.reservedPrefix('survey', ctx.row, 'save_to'));
  if (!isXmlTag(saveto)) throw new XlsFormProblem(M.notXmlName('survey', ctx.row, 'save_to'));
  const prior = refs.references.find((r) => r.propertyName === saveto);
  if (prior) throw new XlsFormProblem(M.duplicateProperty(ctx.row, saveto, prior.row));
}

/** Question name -> the entity lists whose expressions refer to it. */
export function variableReferences(declarations: Map<string, EntityDeclaration>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [dataset, decl] of declarations) {
    for (const q of decl.references) out.set(q, [...(out.get(q) ?? []), dataset]);
  }
  return out;
}

/**
 * The container an entity asks for: the deepest one holding its save_to references (they must
 * share one scope), else the deepest one holding a referenced question; every reference must lie
 * on the line from the survey to the deepest repeat scope.
 */
export function allocationRequest(e: EntityReferences): AllocationRequest {
  let deepestScopeRef: ReferenceSource | undefined;
  let deepestBoundary: ContainerPath | undefined;
  let deepestBoundaryCount = 0;
  let deepestContainer: ReferenceSource | undefined;
  let deepestContainerSub = 0;
  let deepestSaveto: ReferenceSource | undefined;
  let deepestSavetoSub = 0;
  const lineages = new Map<string, ContainerPath>();
  const boundaries: Array<[ReferenceSource, ContainerPath]> = [];
  for (const ref of e.references) {
    const sub = groupsBelowBoundary(ref.path);
    const boundary = scopeBoundary(ref.path);
    const count = repeatDepth(boundary);
    if (deepestBoundary === undefined || count > deepestBoundaryCount) {
      if (deepestBoundary === undefined || !samePath(boundary, deepestBoundary)) {
        deepestContainer = ref;
        deepestContainerSub = sub;
        if (ref.propertyName !== undefined) {
          deepestSaveto = ref;
          deepestSavetoSub = sub;
        }
      }
      deepestBoundary = boundary;
      deepestBoundaryCount = count;
      deepestScopeRef = ref;
    }
    boundaries.push([ref, boundary]);
    if (deepestContainer === undefined || (samePath(boundary, deepestBoundary) && sub > deepestContainerSub)) {
      deepestContainer = ref;
      deepestContainerSub = sub;
    }
    if (ref.propertyName !== undefined) {
      if (!lineages.has(pathKey(ref.path))) lineages.set(pathKey(ref.path), ref.path);
      if (deepestSaveto === undefined || (samePath(boundary, deepestBoundary) && sub > deepestSavetoSub)) {
        deepestSaveto = ref;
        deepestSavetoSub = sub;
      }
    }
  }
  let requested = deepestSaveto ? deepestSaveto.path : deepestContainer!.path;
  const paths = [...lineages.values()];
  if (paths.length > 0) {
    const minLen = Math.min(...paths.map((p) => p.length));
    const any = paths[0];
    let common = any.slice(0, minLen);
    if (paths.length > 1) {
      // As pyxform: the shared part is cut at the last level where the lineages part.
      for (let i = 0; i < minLen; i++) {
        const target = any[i];
        if (paths.some((p) => p[i].name !== target.name || p[i].type !== target.type)) common = any.slice(0, i);
      }
      const candidates = [scopeBoundary(deepestSaveto!.path), common];
      const rank = (p: ContainerPath) => [repeatDepth(p), groupsBelowBoundary(p)];
      const [a, b] = candidates.map(rank);
      requested = b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]) ? common : candidates[0];
    } else {
      requested = common;
    }
  }
  const requestedBoundary = scopeBoundary(requested);
  for (const [ref, boundary] of boundaries) {
    if (!samePath(deepestBoundary!.slice(0, boundary.length), boundary)) {
      if (ref.propertyName !== undefined) throw new XlsFormProblem(M.saveToScope(ref.row, e.dataset, pathText(deepestScopeRef!.path), pathText(ref.path)));
      throw new XlsFormProblem(M.variableScope(e.row, e.dataset, pathText(deepestScopeRef!.path), ref.questionName!, pathText(ref.path)));
    }
    if (ref.propertyName !== undefined && !samePath(requestedBoundary, boundary)) {
      throw new XlsFormProblem(M.saveToScope(ref.row, e.dataset, pathText(requested), pathText(ref.path)));
    }
  }
  return { scope: deepestBoundary!, dataset: e.dataset, requested, row: e.row, lineages: paths };
}
