import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, type EntityManager, type Repository } from 'typeorm';
import { xformChoicesRecord } from '../openrosa/xform-choices.js';
import { FormEntity, FormRoleEntity, FormVersionEntity } from './form.entity.js';

/** The newest definitions of a form that its data-out reads (docs/forms.md, "Form versions"). */
export const VERSIONS_READ = 100;

/** What replacing a definition changes on the form row. */
export type DefinitionChange = Pick<FormEntity, 'version' | 'title' | 'rootName' | 'xml' | 'jsonDefinition' | 'fields'>;

function versionRow(form: Pick<FormEntity, 'id'> & DefinitionChange): Partial<FormVersionEntity> {
  return { formId: form.id, version: form.version, title: form.title, rootName: form.rootName, xml: form.xml, jsonDefinition: form.jsonDefinition, fields: form.fields, choices: xformChoicesRecord(form.xml) };
}
import type { FormRole } from './roles.js';

/** Queries on `forms` and `form_roles`. Deleted forms (`deleted_at` set) are never returned. */
@Injectable()
export class FormsRepository {
  constructor(
    @InjectRepository(FormEntity) private readonly forms: Repository<FormEntity>,
    @InjectRepository(FormRoleEntity) private readonly roles: Repository<FormRoleEntity>,
    @InjectRepository(FormVersionEntity) private readonly versionRows: Repository<FormVersionEntity>,
  ) {}

  findLive(id: number): Promise<FormEntity | null> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return Promise.resolve(null);
    return this.forms.manager
      .query(`SELECT ${FORM_COLUMNS} FROM forms WHERE id = $1 AND deleted_at IS NULL`, [id])
      .then((rows: FormRow[]) => (rows[0] ? formFromRow(rows[0]) : null));
  }

  /** Plain rows (raw SQL, no entity hydration): the intake path reads these through FormCache. */
  async findLiveByIdString(idString: string): Promise<FormEntity[]> {
    const rows = (await this.forms.manager.query(`SELECT ${FORM_COLUMNS} FROM forms WHERE id_string = $1 AND deleted_at IS NULL ORDER BY id`, [idString])) as FormRow[];
    return rows.map(formFromRow);
  }

  findLiveByOwnerAndIdString(ownerId: number, idString: string): Promise<FormEntity | null> {
    return this.forms.findOneBy({ ownerId, idString, deletedAt: IsNull() });
  }

  /** The owner-scoped OpenRosa paths: the live form of the (active) user `username` with that id_string. */
  async findLiveByOwnerNameAndIdString(username: string, idString: string): Promise<FormEntity | null> {
    const rows = (await this.forms.manager.query(
      `SELECT ${FORM_COLUMNS} FROM forms
       WHERE owner_id = (SELECT id FROM users WHERE lower(username) = lower($1) AND is_active) AND id_string = $2 AND deleted_at IS NULL`,
      [username, idString],
    )) as FormRow[];
    return rows[0] ? formFromRow(rows[0]) : null;
  }

  /**
   * The form's dataset id (`_bamboo_dataset_id`); not an edit of the form: no new version,
   * `date_modified` unchanged. Written only when it changes.
   */
  async setBambooDatasetId(formId: number, datasetId: string): Promise<void> {
    await this.forms.manager.query(`UPDATE forms SET bamboo_dataset_id = $2 WHERE id = $1 AND bamboo_dataset_id IS DISTINCT FROM $2`, [formId, datasetId.slice(0, 100)]);
  }

  /** The id of an active user, by username (case-insensitive); null when there is none. */
  async activeUserId(username: string): Promise<number | null> {
    const rows: Array<{ id: number }> = await this.forms.manager.query(`SELECT id FROM users WHERE lower(username) = lower($1) AND is_active`, [username]);
    return rows[0]?.id ?? null;
  }

  /** When the user got each of their roles on these forms (forms without one are absent). */
  async rolesGrantedAt(userId: number, formIds: number[]): Promise<Map<number, Date>> {
    if (!formIds.length) return new Map();
    const rows = await this.roles.find({ where: { userId, formId: In(formIds) } });
    return new Map(rows.map((r) => [r.formId, r.grantedAt]));
  }

  async roleOf(formId: number, userId: number): Promise<FormRole | null> {
    const rows = (await this.roles.manager.query(`SELECT role FROM form_roles WHERE form_id = $1 AND user_id = $2`, [formId, userId])) as Array<{ role: FormRole }>;
    return rows[0]?.role ?? null;
  }

  /** Live forms the user has any role on, with that role, newest first. */
  async visibleTo(userId: number | 'all'): Promise<Array<{ form: FormEntity; role: FormRole | null }>> {
    const qb = this.forms.createQueryBuilder('f').where('f.deleted_at IS NULL').orderBy('f.id', 'ASC');
    if (userId === 'all') return (await qb.getMany()).map((form) => ({ form, role: null }));
    const rows = await qb
      .innerJoin(FormRoleEntity, 'r', 'r.form_id = f.id AND r.user_id = :userId', { userId })
      .addSelect('r.role', 'r_role')
      .getRawAndEntities();
    return rows.entities.map((form, i) => ({ form, role: (rows.raw[i] as { r_role: FormRole }).r_role }));
  }

  async visibleFormIds(userId: number | 'all'): Promise<number[]> {
    if (userId === 'all') {
      const rows = await this.forms.createQueryBuilder('f').select('f.id', 'id').where('f.deleted_at IS NULL').orderBy('f.id').getRawMany<{ id: number }>();
      return rows.map((r) => r.id);
    }
    const rows = await this.roles
      .createQueryBuilder('r')
      .innerJoin(FormEntity, 'f', 'f.id = r.form_id AND f.deleted_at IS NULL')
      .select('r.form_id', 'id')
      .where('r.user_id = :userId', { userId })
      .orderBy('r.form_id')
      .getRawMany<{ id: number }>();
    return rows.map((r) => r.id);
  }

  async rolesOf(formId: number): Promise<Array<{ userId: number; role: FormRole }>> {
    return (await this.roles.find({ where: { formId } })).map((r) => ({ userId: r.userId, role: r.role }));
  }

  /** Inserts the form, its owner role and its first version in one transaction. */
  async insertWithOwner(form: Partial<FormEntity>): Promise<FormEntity> {
    return this.forms.manager.transaction(async (m: EntityManager) => {
      const saved = await m.getRepository(FormEntity).save(m.getRepository(FormEntity).create(form));
      await m.getRepository(FormRoleEntity).insert({ formId: saved.id, userId: saved.ownerId, role: 'owner' });
      await m.getRepository(FormVersionEntity).save(m.getRepository(FormVersionEntity).create(versionRow(saved)));
      return saved;
    });
  }

  /**
   * Replaces the form's definition and records it as a new version, in one transaction that
   * holds the form row: `decide` sees the versions the form had and returns the new definition.
   */
  async replaceDefinition(formId: number, decide: (usedVersions: ReadonlySet<string>) => DefinitionChange): Promise<void> {
    await this.forms.manager.transaction(async (m: EntityManager) => {
      await m.getRepository(FormEntity).createQueryBuilder('f').setLock('pessimistic_write').where('f.id = :formId', { formId }).getOneOrFail();
      const used = await m.getRepository(FormVersionEntity).find({ where: { formId }, select: { version: true } });
      const change = decide(new Set(used.map((v) => v.version)));
      // jsonb columns: TypeORM's update type cannot express Record<string, unknown> values.
      await m.getRepository(FormEntity).update({ id: formId }, change as never);
      await m.getRepository(FormVersionEntity).save(m.getRepository(FormVersionEntity).create(versionRow({ id: formId, ...change })));
    });
  }

  /**
   * The definitions the form has had, newest first, at most VERSIONS_READ of them, with their
   * fields and stored choices but not their XForm text (docs/forms.md, "Form versions").
   */
  versions(formId: number): Promise<Array<Pick<FormVersionEntity, 'id' | 'version' | 'fields' | 'choices'>>> {
    return this.versionRows.find({ where: { formId }, order: { id: 'DESC' }, take: VERSIONS_READ, select: { id: true, version: true, fields: true, choices: true } });
  }

  async setRole(formId: number, userId: number, role: FormRole): Promise<void> {
    await this.roles.upsert({ formId, userId, role }, ['formId', 'userId']);
  }

  async removeRole(formId: number, userId: number): Promise<void> {
    await this.roles.delete({ formId, userId });
  }

  async softDelete(id: number): Promise<void> {
    await this.forms.update({ id }, { deletedAt: new Date() });
  }

  async update(id: number, changes: Partial<Pick<FormEntity, 'title' | 'acceptingSubmissions'>>): Promise<void> {
    await this.forms.update({ id }, changes);
  }

  /** Live submission count and latest submission time per form (forms without any are absent). */
  async submissionStats(formIds: number[]): Promise<Map<number, { count: number; last: Date | null }>> {
    if (!formIds.length) return new Map();
    const rows = (await this.forms.manager.query(
      `SELECT form_id, count(*)::int AS count, max(date_created) AS last FROM submissions
       WHERE form_id = ANY($1) AND deleted_at IS NULL GROUP BY form_id`,
      [formIds],
    )) as Array<{ form_id: number; count: number; last: Date | null }>;
    return new Map(rows.map((r) => [r.form_id, { count: r.count, last: r.last }]));
  }

  /** Which of these forms have form media files (`form_metadata`, the metadata/ feature's table). */
  async formsWithMedia(formIds: number[]): Promise<Set<number>> {
    if (!formIds.length) return new Set();
    const rows: Array<{ form_id: number }> = await this.forms.manager.query(`SELECT DISTINCT form_id FROM form_metadata WHERE form_id = ANY($1)`, [formIds]);
    return new Set(rows.map((r) => r.form_id));
  }

  async findOwners(ids: number[]): Promise<Map<number, string>> {
    if (!ids.length) return new Map();
    const rows = await this.forms.manager.query(`SELECT id, username FROM users WHERE id = ANY($1)`, [ids]);
    return new Map((rows as Array<{ id: number; username: string }>).map((r) => [r.id, r.username]));
  }
}

/** The columns of FormEntity, aliased to its property names (raw SQL reads). */
const FORM_COLUMNS = `id, uuid, id_string, title, owner_id, root_name, version, xml, json_definition, fields,
  accepting_submissions, bamboo_dataset_id, date_created, date_modified, deleted_at`;

interface FormRow {
  id: number;
  uuid: string;
  id_string: string;
  title: string;
  owner_id: number;
  root_name: string;
  version: string;
  xml: string;
  json_definition: Record<string, unknown> | null;
  fields: FormEntity['fields'];
  accepting_submissions: boolean;
  bamboo_dataset_id: string;
  date_created: Date;
  date_modified: Date;
  deleted_at: Date | null;
}

function formFromRow(r: FormRow): FormEntity {
  return {
    id: r.id, uuid: r.uuid, idString: r.id_string, title: r.title, ownerId: r.owner_id, rootName: r.root_name, version: r.version, xml: r.xml,
    jsonDefinition: r.json_definition, fields: r.fields, acceptingSubmissions: r.accepting_submissions, bambooDatasetId: r.bamboo_dataset_id,
    dateCreated: r.date_created, dateModified: r.date_modified, deletedAt: r.deleted_at,
  };
}
