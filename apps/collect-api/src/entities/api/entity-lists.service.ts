import { Injectable } from '@nestjs/common';
import { FieldValidationError } from '@collect/contracts';
import type { AuthenticatedUser } from '../../auth/authenticated-user.js';
import { CollectConfig } from '../../config/collect-config.js';
import { listNameProblem } from '../declarations/form-entities.js';
import { EntityListAccess } from '../lists/entity-list-access.js';
import { EntityListsRepository, type EntityListRow } from '../lists/entity-lists.repository.js';
import { pageWindow, type EntityListBody, type EntityListDetailBody, type EntityPageQueryDto } from './entity-api.dto.js';
import { entityListJson } from './entity-json.js';

/** `/api/v2/entity-lists` (docs/entities.md "API"). */
@Injectable()
export class EntityListsService {
  constructor(
    private readonly lists: EntityListsRepository,
    private readonly access: EntityListAccess,
    private readonly config: CollectConfig,
  ) {}

  async create(user: AuthenticatedUser, name: string): Promise<EntityListDetailBody> {
    const problem = listNameProblem(name);
    if (problem) throw new FieldValidationError({ name: [problem] });
    const id = await this.lists.insert(user.id, name);
    if (id === null) throw new FieldValidationError({ name: [`You already have an entity list named "${name}".`] });
    // The caller owns it: answered without the read check (a personal token narrowed to forms creates lists no form uses yet).
    return this.present((await this.lists.find(id))!);
  }

  async list(user: AuthenticatedUser, query: EntityPageQueryDto): Promise<{ body: EntityListBody[]; total: number; page: number; pageSize: number }> {
    const { page, pageSize, offset } = pageWindow(query);
    const { rows, total } = await this.lists.visible(user.isSuperuser ? 'all' : user.id, offset, pageSize);
    return { body: rows.map((r) => entityListJson(this.config.PUBLIC_BASE_URL, r, r)), total, page, pageSize };
  }

  async detail(user: AuthenticatedUser | undefined, pk: string): Promise<EntityListDetailBody> {
    return this.present(await this.access.readable(user, pk));
  }

  private async present(list: EntityListRow): Promise<EntityListDetailBody> {
    const [counts, forms] = await Promise.all([this.lists.counts(list.id), this.lists.formsOf(list.id)]);
    const base = this.config.PUBLIC_BASE_URL;
    const ref = (f: (typeof forms)[number]) => ({ title: f.title, xform: `${base}/api/v1/forms/${f.form_id}`, id_string: f.id_string });
    return {
      ...entityListJson(base, list, counts),
      properties: list.properties,
      registration_forms: forms.filter((f) => f.actions.includes('create')).map((f) => ({ ...ref(f), save_to: f.save_to })),
      follow_up_forms: forms.filter((f) => !f.actions.includes('create')).map(ref),
    };
  }

  async delete(user: AuthenticatedUser | undefined, pk: string): Promise<void> {
    const list = await this.access.writable(user, pk);
    await this.lists.delete(list.id);
  }
}
