import { ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import type { ReadLease } from '../database/read-pool.js';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormAccessService, PERMISSION_DENIED } from '../forms/form-access.service.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { MIN_ROLE, roleAtLeast, type FormRole } from '../forms/roles.js';
import type { PageRequest } from '../submissions/submissions.service.js';
import { SubmissionsService } from '../submissions/submissions.service.js';
import { SubmissionDataService, type StreamedPage } from '../submissions/submission-data.service.js';
import type { SubmissionJson } from '../submissions/submission-json.js';
import type { DataviewEntity, MergedDatasetEntity } from './dataset.entities.js';
import { DatasetsRepository } from './datasets.repository.js';
import { compileDataviewQuery, type CompiledWhere } from './dataview-query.js';
import type { CreateDataviewDto, CreateMergedDatasetDto, DataviewBody, MergedDatasetBody, UpdateDataviewDto } from './dataset.dto.js';

function idOf(raw: string | number): number {
  const n = typeof raw === 'number' ? raw : /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n > 0 && n <= 2_147_483_647 ? n : NaN;
}

/**
 * Merged datasets (several forms seen as one) and dataviews (a form's submissions filtered by
 * a query). Visibility follows the forms: a merged dataset is visible when every one of its
 * forms is; a dataview when its form is. Changing a dataview needs editor on its form.
 */
@Injectable()
export class DatasetsService {
  constructor(
    private readonly repo: DatasetsRepository,
    private readonly forms: FormsRepository,
    private readonly access: FormAccessService,
    private readonly submissions: SubmissionsService,
    private readonly data: SubmissionDataService,
    private readonly config: CollectConfig,
  ) {}

  // ----- merged datasets ------------------------------------------------------------------

  async createMerged(user: AuthenticatedUser, body: CreateMergedDatasetDto) {
    const max = this.config.MERGED_DATASET_MAX_FORMS;
    // Every read of a merged dataset checks the caller's role on each form: the list is bounded.
    if (body.xforms.length > max) throw new FieldValidationError({ xforms: [`At most ${max} forms (MERGED_DATASET_MAX_FORMS).`] });
    const hidden: string[] = [];
    for (const id of body.xforms) if (!(await this.access.access(user, id))) hidden.push(`Form ${id} not found.`);
    if (hidden.length) throw new FieldValidationError({ xforms: hidden });
    const row = await this.repo.insertMerged({ name: body.name, project: body.project ?? null, ownerId: user.id, formIds: body.xforms });
    return this.presentMerged(row);
  }

  async listMerged(user: AuthenticatedUser) {
    const visible = new Set(await this.access.visibleFormIds(user));
    const rows = (await this.repo.allMerged()).filter((m) => m.formIds.every((id) => visible.has(id)));
    return Promise.all(rows.map((r) => this.presentMerged(r)));
  }

  async getMerged(user: AuthenticatedUser | undefined, pk: string) {
    return this.presentMerged((await this.visibleMerged(user, pk)).merged);
  }

  /** Form ids of a merged dataset the caller can see (404 otherwise). For media and data. */
  async mergedFormIds(user: AuthenticatedUser | undefined, pk: string | number): Promise<number[]> {
    return (await this.visibleMerged(user, pk)).merged.formIds;
  }

  async deleteMerged(user: AuthenticatedUser | undefined, pk: string): Promise<void> {
    const { merged, roles } = await this.visibleMerged(user, pk);
    const allowed = user!.isSuperuser || merged.ownerId === user!.id || roles.every((r) => roleAtLeast(r, MIN_ROLE.deleteForm));
    if (!allowed) throw new ForbiddenException({ detail: PERMISSION_DENIED });
    await this.repo.deleteMerged(merged.id);
  }

  /** The forms of a merged dataset (each visible to the caller, else 404), in the dataset's order. */
  async mergedForms(user: AuthenticatedUser | undefined, pk: string | number): Promise<FormEntity[]> {
    const ids = await this.mergedFormIds(user, pk);
    return (await Promise.all(ids.map((id) => this.access.requireRole(user, id, MIN_ROLE.view)))).map((a) => a.form);
  }

  /** One page over the submissions of every form of the merged dataset, in `_id` order (paged in PostgreSQL). */
  async mergedData(user: AuthenticatedUser | undefined, pk: string, page: PageRequest, lease?: ReadLease): Promise<StreamedPage> {
    const forms = await this.mergedForms(user, pk);
    return this.data.page(forms, { offset: (page.page - 1) * page.pageSize, limit: page.pageSize, page: page.page, lease });
  }

  private async visibleMerged(user: AuthenticatedUser | undefined, pk: string | number) {
    if (!user) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const id = idOf(pk);
    const merged = Number.isNaN(id) ? null : await this.repo.findMerged(id);
    if (!merged) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const roles: FormRole[] = [];
    for (const formId of merged.formIds) {
      const role = await this.access.roleOf(user, formId);
      if (!role) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
      roles.push(role);
    }
    return { merged, roles };
  }

  private async presentMerged(m: MergedDatasetEntity): Promise<MergedDatasetBody> {
    const forms = (await Promise.all(m.formIds.map((id) => this.forms.findLive(id)))).filter((f): f is FormEntity => !!f);
    return {
      id: m.id,
      url: `${this.config.PUBLIC_BASE_URL}/api/v1/merged-datasets/${m.id}`,
      name: m.name,
      project: m.project,
      xforms: forms.map((f) => ({ id: f.id, id_string: f.idString, title: f.title })),
      num_of_submissions: await this.repo.countLive(m.formIds),
      date_created: m.dateCreated.toISOString(),
    };
  }

  // ----- dataviews --------------------------------------------------------------------------

  async createView(user: AuthenticatedUser, body: CreateDataviewDto) {
    const { form } = await this.access.requireRole(user, body.xform, MIN_ROLE.editSubmissions);
    const row = await this.repo.insertView({ name: body.name, project: body.project ?? null, formId: form.id, ownerId: user.id, columns: [...new Set(body.columns)], query: body.query ?? [] });
    return this.presentView(row);
  }

  async listViews(user: AuthenticatedUser, formFilter?: string) {
    let ids = await this.access.visibleFormIds(user);
    if (formFilter !== undefined) ids = ids.filter((id) => String(id) === formFilter);
    return Promise.all((await this.repo.viewsOfForms(ids)).map((v) => this.presentView(v)));
  }

  async getView(user: AuthenticatedUser | undefined, pk: string) {
    return this.presentView((await this.visibleView(user, pk, MIN_ROLE.view)).view);
  }

  async updateView(user: AuthenticatedUser | undefined, pk: string, body: UpdateDataviewDto) {
    const { view } = await this.visibleView(user, pk, MIN_ROLE.editSubmissions);
    if (body.xform !== undefined && body.xform !== view.formId) throw new FieldValidationError({ xform: ['The form of a dataview cannot change.'] });
    const changes: Partial<Pick<DataviewEntity, 'name' | 'columns' | 'query' | 'project'>> = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.project !== undefined) changes.project = body.project;
    if (body.columns !== undefined) changes.columns = [...new Set(body.columns)];
    if (body.query !== undefined) changes.query = body.query;
    await this.repo.updateView(view.id, changes);
    return this.presentView((await this.repo.findView(view.id))!);
  }

  async deleteView(user: AuthenticatedUser | undefined, pk: string): Promise<void> {
    const { view } = await this.visibleView(user, pk, MIN_ROLE.editSubmissions);
    await this.repo.deleteView(view.id);
  }

  /** Submissions matching the view, projected to its columns plus `_id` and the metadata. */
  async viewData(user: AuthenticatedUser | undefined, pk: string, page: PageRequest): Promise<{ items: SubmissionJson[]; total: number }> {
    const { view, form } = await this.visibleView(user, pk, MIN_ROLE.view);
    const { rows, total } = await this.repo.filtered(form.id, compileDataviewQuery(view.query), (page.page - 1) * page.pageSize, page.pageSize);
    if (page.page > 1 && !rows.length) throw new NotFoundException({ detail: 'Invalid page.' });
    const full = await this.submissions.toJsonMany(form, rows);
    const keep = new Set(view.columns);
    const items = full.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => keep.has(k) || k.startsWith('_'))));
    return { items, total };
  }

  /**
   * The form of a dataview the caller can see and its compiled filter over the submissions
   * table aliased `alias` (404 when not visible). Media uses it to list a dataview's files.
   */
  async dataviewFilter(user: AuthenticatedUser | undefined, pk: string | number, alias = 's'): Promise<{ formId: number; where: CompiledWhere }> {
    const { view, form } = await this.visibleView(user, String(pk), MIN_ROLE.view);
    return { formId: form.id, where: compileDataviewQuery(view.query, `${alias}.json`) };
  }

  /** A dataview the caller can see (readonly or above on its form): its form, filter over `s.json` and columns. For exports. */
  async dataviewExport(user: AuthenticatedUser | undefined, pk: string | number): Promise<{ form: FormEntity; where: CompiledWhere; columns: string[] }> {
    const { view, form } = await this.visibleView(user, String(pk), MIN_ROLE.view);
    return { form, where: compileDataviewQuery(view.query, 's.json'), columns: view.columns };
  }

  private async visibleView(user: AuthenticatedUser | undefined, pk: string, minimum: typeof MIN_ROLE[keyof typeof MIN_ROLE]) {
    const id = idOf(pk);
    const view = Number.isNaN(id) ? null : await this.repo.findView(id);
    if (!view || !user) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const { form } = await this.access.requireRole(user, view.formId, minimum);
    return { view, form };
  }

  private async presentView(v: DataviewEntity): Promise<DataviewBody> {
    const total = (await this.repo.filtered(v.formId, compileDataviewQuery(v.query), 0, 1)).total;
    return {
      id: v.id,
      dataviewid: v.id,
      url: `${this.config.PUBLIC_BASE_URL}/api/v1/dataviews/${v.id}`,
      name: v.name,
      xform: v.formId,
      project: v.project,
      columns: v.columns,
      query: v.query,
      count: total,
      date_created: v.dateCreated.toISOString(),
      date_modified: v.dateModified.toISOString(),
    };
  }
}
