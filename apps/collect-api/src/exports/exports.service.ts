import { Injectable, UnprocessableEntityException } from '@nestjs/common';
import type { Writable } from 'node:stream';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { DatasetsService } from '../datasets/datasets.service.js';
import { CollectConfig } from '../config/collect-config.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { FormsService } from '../forms/forms.service.js';
import { MIN_ROLE } from '../forms/roles.js';
import type { ReadLease } from '../database/read-pool.js';
import { SubmissionDataRepository, type SubmissionScope } from '../submissions/submission-data.repository.js';
import { writeCsv, writeXlsx, needsChoices, type ExportPlan, type Progress } from './data-export.js';
import { allRepeats, exportFields, mergeChoices, scopeTree, type Choice, type ExportOptions } from './export-columns.js';

export type ExportFormat = 'csv' | 'xlsx';
/** What an export covers, as its URL names it. */
export type ExportTarget = { kind: 'form' | 'merged' | 'dataview'; pk: string | number };

/** A checked export: its forms, the rows it covers and the fields it shows. */
export interface ExportSource {
  forms: FormEntity[];
  scope: SubmissionScope;
  /** Names the download: the form's id_string, `merged-<pk>`, `dataview-<pk>`. */
  name: string;
  /** A dataview's columns: only these questions (and their groups' and repeats' contents). */
  columns: string[] | null;
}

/** Named TypeORM parameters (`:dv_c0`) of a compiled dataview condition, made positional for one statement. */
function positional(sql: string, params: Record<string, string>, add: (v: unknown) => string): string {
  return sql.replace(/(?<!:):([A-Za-z_][A-Za-z0-9_]*)/g, (whole, name: string) => (Object.hasOwn(params, name) ? add(params[name]) : whole));
}

/**
 * CSV and XLSX exports of a form, a merged dataset or a dataview (docs/exports.md): the same
 * roles as the listing each mirrors (readonly or above on every form), rows read from
 * PostgreSQL through a cursor and written as they come.
 */
@Injectable()
export class ExportsService {
  constructor(
    private readonly data: SubmissionDataRepository,
    private readonly access: FormAccessService,
    private readonly datasets: DatasetsService,
    private readonly forms: FormsService,
    private readonly config: CollectConfig,
  ) {}

  /** What an export of a whole form covers (the caller was checked already). */
  formSource(form: FormEntity): ExportSource {
    return { forms: [form], scope: { formIds: [form.id], where: () => 'true' }, name: form.idString, columns: null };
  }

  /** Checks the caller's access (404/403 as the listing answers) and returns what to export. */
  async source(user: AuthenticatedUser | undefined, target: ExportTarget): Promise<ExportSource> {
    if (target.kind === 'form') {
      const { form } = await this.access.requireRole(user, String(target.pk), MIN_ROLE.view);
      return this.formSource(form);
    }
    if (target.kind === 'merged') {
      const forms = await this.datasets.mergedForms(user, target.pk);
      return { forms, scope: { formIds: forms.map((f) => f.id), where: () => 'true' }, name: `merged-${target.pk}`, columns: null };
    }
    const view = await this.datasets.dataviewExport(user, target.pk);
    return {
      forms: [view.form],
      scope: { formIds: [view.form.id], where: (p) => positional(view.where.sql, view.where.params, (v) => p.add(v)) },
      name: `dataview-${target.pk}`,
      columns: view.columns,
    };
  }

  /**
   * The fields, choices and repeat sizes of an export, and its row stream. The columns are the
   * fields of every version of each form (FormsService.fieldsOfAllVersions, docs/forms.md "Form
   * versions"), so answers given to an older definition keep their column; a merged dataset
   * adds each later form's fields the earlier ones lack.
   */
  async plan(source: ExportSource, o: ExportOptions, lease: ReadLease): Promise<ExportPlan> {
    const [first, ...rest] = await Promise.all(source.forms.map((f) => this.forms.fieldsOfAllVersions(f.id)));
    let fields = exportFields(first, rest);
    if (source.columns) {
      const keep = source.columns;
      fields = fields.filter((f) => keep.some((c) => f.xpath === c || f.xpath.startsWith(`${c}/`) || c.startsWith(`${f.xpath}/`)));
    }
    const tree = scopeTree(fields);
    const repeats = allRepeats(tree);
    // The scans of the plan run on the caller's read lease: bounded by its statement timeout and
    // cancelled when the client leaves (docs/security.md, "Streamed reads and heavy queries").
    const counts = await this.data.repeatCounts(source.scope, repeats.map((r) => r.jsonPath), lease.query);
    const total = await this.data.count(source.scope, lease.query);
    const split = needsChoices(fields, o);
    const declared = await this.forms.choicesOfAllVersions(split.length ? source.forms.map((f) => f.id) : []);
    const choices = new Map<string, Choice[]>();
    const scopeOf = new Map([tree, ...repeats].map((s) => [s.xpath, s]));
    const paths = split.map((f) => {
      const scope = scopeOf.get(f.repeat ?? '')!;
      return scope.xpath ? `${scope.jsonPath}[*].${JSON.stringify(f.xpath)}` : `$.${JSON.stringify(f.xpath)}`;
    });
    // One scan for every split question (docs/exports.md, "Split select-multiples").
    const seen = await this.data.distinctTokens(source.scope, paths, this.config.EXPORT_MAX_SPLIT_COLUMNS + 1, lease.query);
    let columns = 0;
    split.forEach((f, i) => {
      const merged = mergeChoices(declared.get(f.xpath), seen[i] ?? []);
      columns += merged.length;
      choices.set(f.xpath, merged);
    });
    if (columns > this.config.EXPORT_MAX_SPLIT_COLUMNS) {
      throw new UnprocessableEntityException({ detail: `split_select_multiples would make more than ${this.config.EXPORT_MAX_SPLIT_COLUMNS} choice columns (EXPORT_MAX_SPLIT_COLUMNS); export without it, or a dataview with fewer columns.` });
    }
    return {
      fields,
      choices,
      repeatCounts: new Map(repeats.map((r, i) => [r.xpath, counts[i] ?? 0])),
      total,
      rows: () => this.data.exportRows(source.scope, lease),
    };
  }

  /** Writes the export to `out` (a response or a stored file). */
  async write(source: ExportSource, format: ExportFormat, o: ExportOptions, out: Writable, lease: ReadLease, progress?: Progress): Promise<void> {
    await this.writePlan(await this.plan(source, o, lease), format, o, out, progress);
  }

  writePlan(plan: ExportPlan, format: ExportFormat, o: ExportOptions, out: Writable, progress?: Progress): Promise<void> {
    return format === 'csv' ? writeCsv(plan, o, out, progress) : writeXlsx(plan, o, out, progress);
  }
}
