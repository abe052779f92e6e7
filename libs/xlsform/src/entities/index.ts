// Entities, kept apart from the survey rows as pyxform keeps them: the entities sheet's
// declarations, the save_to column and `${}` references that tie questions to them, and the
// meta/entity blocks they become (docs/xlsform.md, "Entities").
import type { Survey } from '../model.js';
import type { WorkbookData } from '../workbook.js';
import { applyEntities } from './allocate.js';
import { type EntityDeclaration, readEntityDeclarations } from './declarations.js';
import { collectRowReferences, type ContainerPath, type EntityReferences, type RowContext, variableReferences } from './scope.js';

export type { ContainerPath, RowContext };

export class EntityCollector {
  private readonly byDataset = new Map<string, EntityReferences>();
  private readonly variableRefs: Map<string, string[]>;

  private constructor(private readonly declarations: Map<string, EntityDeclaration> | undefined) {
    this.variableRefs = declarations ? variableReferences(declarations) : new Map();
  }

  /** Reads the entities sheet (if any); throws XlsFormProblem on the first bad declaration. */
  static read(workbook: WorkbookData): EntityCollector {
    const sheet = workbook.sheets.entities;
    return new EntityCollector(sheet && sheet.rows.length > 0 ? readEntityDeclarations(sheet) : undefined);
  }

  /** Whether the entities sheet declares this list (a secondary instance name, for reference-geometry). */
  hasList(name: string): boolean {
    return this.declarations?.has(name) ?? false;
  }

  /** Whether a row can matter: it has a save_to, or entities are declared. */
  concerns(bind: Record<string, unknown> | undefined): boolean {
    return this.declarations !== undefined || bind?.['entities:saveto'] !== undefined;
  }

  /** One survey row: its save_to and the entity references to its question. */
  row(ctx: RowContext): void {
    collectRowReferences(ctx, this.declarations, this.variableRefs, this.byDataset);
  }

  /** After the survey rows: places the meta/entity blocks in the tree. */
  apply(survey: Survey): void {
    if (this.declarations && this.declarations.size > 0) applyEntities(survey, this.declarations, this.byDataset);
  }
}
