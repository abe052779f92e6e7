// Places each entity declaration's meta/entity block in one container (survey, group or
// repeat), at most one per container, as pyxform 4.5 places them, and sets the entities spec
// version the form needs (docs/xlsform.md, "Entities").
import { XlsFormProblem } from '../errors.js';
import { type FormNode, newNode, type Survey } from '../model.js';
import { type EntityDeclaration, entityElement } from './declarations.js';
import { ENTITY_MESSAGES as M } from './messages.js';
import { type AllocationRequest, allocationRequest, type ContainerPath, type EntityReferences, pathKey, pathText, repeatDepth, SURVEY_PATH } from './scope.js';

/** Version 2024.1.0 is one entity at the survey level; anything more needs 2025.1.0. */
const VERSION_SINGLE = '2024.1.0';
const VERSION_MULTIPLE = '2025.1.0';

function allocate(declarations: Map<string, EntityDeclaration>, byDataset: Map<string, EntityReferences>): Map<string, { path: ContainerPath; dataset: string }> {
  const scopes = new Map<string, { path: ContainerPath; requests: AllocationRequest[] }>();
  const request = (req: AllocationRequest) => {
    const key = pathKey(req.scope);
    const entry = scopes.get(key) ?? { path: req.scope, requests: [] };
    entry.requests.push(req);
    scopes.set(key, entry);
  };
  for (const refs of byDataset.values()) request(allocationRequest(refs));
  for (const [dataset, decl] of declarations) {
    if (!byDataset.has(dataset)) request({ scope: SURVEY_PATH, dataset, requested: SURVEY_PATH, row: decl.row, lineages: [] });
  }
  const allocations = new Map<string, { path: ContainerPath; dataset: string }>();
  const surveyKey = pathKey(SURVEY_PATH);
  if (scopes.size === 1) {
    const only = scopes.get(surveyKey);
    if (only && only.requests.length === 1) {
      allocations.set(surveyKey, { path: SURVEY_PATH, dataset: only.requests[0].dataset });
      return allocations;
    }
  }
  const reserved = new Map<string, string>();
  for (const { path: scope, requests } of scopes.values()) {
    const limit = scope.length - 1;
    for (const req of [...requests].sort((a, b) => a.row - b.row)) {
      let conflict: string | undefined;
      // As low as possible, going up no further than the scope's own container.
      for (let depth = req.requested.length; depth > limit; depth--) {
        const current = req.requested.slice(0, depth);
        const key = pathKey(current);
        conflict = allocations.get(key)?.dataset ?? reserved.get(key);
        if (conflict !== undefined) {
          const bySaveto = req.lineages.length > 0 ? reserved.get(pathKey(req.lineages[0])) : undefined;
          if (bySaveto) {
            conflict = bySaveto;
            break;
          }
          continue;
        }
        allocations.set(key, { path: current, dataset: req.dataset });
        reserved.set(key, req.dataset);
        for (const lineage of req.lineages) {
          for (let i = lineage.length; i >= current.length; i--) reserved.set(pathKey(lineage.slice(0, i)), req.dataset);
        }
        break;
      }
      if (conflict !== undefined) throw new XlsFormProblem(M.noContainer(req.row, pathText(scope), declarations.get(conflict)!.row));
    }
  }
  return allocations;
}

function metaGroup(entity: FormNode): FormNode {
  const meta = newNode('group', 'meta', 'group');
  meta.bodyless = true;
  meta.children.push(entity);
  entity.parent = meta;
  return meta;
}

/** Adds the meta/entity blocks to the survey tree and sets `survey.entityVersion`. */
export function applyEntities(survey: Survey, declarations: Map<string, EntityDeclaration>, byDataset: Map<string, EntityReferences>): void {
  const allocations = allocate(declarations, byDataset);
  const prefixes = new Set<string>();
  for (const { path } of allocations.values()) for (let i = 1; i <= path.length; i++) prefixes.add(pathKey(path.slice(0, i)));
  const placed = new Set<string>();
  const inject = (node: FormNode, path: ContainerPath, repeatAbove: boolean) => {
    const dataset = allocations.get(pathKey(path))?.dataset;
    if (dataset && !placed.has(dataset)) {
      const entity = entityElement(declarations.get(dataset)!);
      const id = entity.children.find((c) => c.name === '@id')!;
      if (repeatAbove && id.actions.length === 1) id.actions.push({ ...id.actions[0], event: 'odk-new-repeat' });
      const meta = metaGroup(entity);
      node.children.push(meta);
      meta.parent = node;
      placed.add(dataset);
    }
    // As pyxform, a repeat seen among the children counts as "above" for the later siblings too.
    let above = repeatAbove;
    for (const child of node.children) {
      if (child.kind !== 'group' && child.kind !== 'repeat') continue;
      const childPath = [...path, { name: child.name, type: child.kind }];
      if (!above && child.kind === 'repeat') above = true;
      if (prefixes.has(pathKey(childPath))) inject(child, childPath, above);
    }
  };
  inject(survey.root, SURVEY_PATH, false);
  const nested = [...allocations.values()].some(({ path }) => repeatDepth(path) > 0);
  survey.entityVersion = declarations.size > 1 || nested ? VERSION_MULTIPLE : VERSION_SINGLE;
}
