import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { FormEntity } from '../../forms/form.entity.js';
import { parseXml, type XmlNode } from '../../openrosa/xml.js';
import { formEntities, type FormEntities } from '../declarations/form-entities.js';
import { EntityListsRepository, type EntityListRow } from '../lists/entity-lists.repository.js';
import { EntitiesRepository } from '../records/entities.repository.js';
import { EntityApplyService, IntakeChanges } from './entity-apply.service.js';
import { entityBlocks, recordTree } from './entity-blocks.js';
import { entityItemOf, EntityProblem, type RawEntityBlock } from './entity-item.js';
import { HeldUpdatesRepository } from './held-updates.repository.js';
import { EntityChanges } from '../changes/entity-changes.js';
import { statementEntityOf, type StatementEntity } from './entity-statement.js';

/** One entry of a submission's `_entity_errors`. */
export interface EntityError {
  list: string;
  uuid: string;
  error: string;
}

/** The stored submission intake hands over (the row just written, in the open transaction). */
export interface StoredSubmission {
  id: number;
  submittedById: number | null;
  /** Set once the submission was edited (the row replaced through `meta/deprecatedID`). */
  edited: boolean;
}

/** How often, per list and process, held updates are checked against the time bound. */
const EXPIRY_CHECK_MS = 60 * 60 * 1000;

/**
 * Entities from submissions (docs/entities.md "Submissions"): called by intake inside the
 * transaction that stores a new or edited submission, after its row is written. The form's
 * entity blocks are read from its stored XForm; each block of the submission creates or updates
 * an entity. A refused block never fails the submission: it lands in the submission's
 * `_entity_errors` (docs/entities.md "Errors").
 */
@Injectable()
export class EntityIntakeService {
  private readonly logger = new Logger(EntityIntakeService.name);
  /** The entity blocks of a form, by the form object the form cache hands out (a new definition is a new object). */
  private readonly declared = new WeakMap<Pick<FormEntity, 'xml' | 'fields'>, FormEntities | null>();
  /** When held updates were last checked against the time bound, per list (`owner/name`) and process. */
  private readonly expiryCheckedAt = new Map<string, number>();

  constructor(
    private readonly lists: EntityListsRepository,
    private readonly entities: EntitiesRepository,
    private readonly held: HeldUpdatesRepository,
    private readonly apply: EntityApplyService,
    private readonly changes: EntityChanges,
  ) {}

  /** The form's entity blocks (null: none), read once per form object. A form stored with blocks that no longer parse has none. */
  declarations(form: Pick<FormEntity, 'xml' | 'fields'>): FormEntities | null {
    if (this.declared.has(form)) return this.declared.get(form)!;
    let found: FormEntities | null = null;
    try {
      found = formEntities(form.xml, new Set(form.fields.filter((f) => f.type === 'repeat').map((f) => f.xpath)));
    } catch (err) {
      this.logger.warn({ err }, 'a stored form has entity blocks that do not parse');
    }
    this.declared.set(form, found);
    return found;
  }

  /** Whether submissions to the form make entity work (intake then takes its transactional path). */
  declares(form: Pick<FormEntity, 'xml' | 'fields'>): boolean {
    return this.declarations(form) !== null;
  }

  /**
   * The entity work of a new submission as intake's one statement can do it (docs/entities.md,
   * "Intake: one statement"), or null: the transactional path applies it (afterStore). Also null
   * when the list's held updates are due for their time check (that runs on the transactional
   * path) or when a sink of EntityChanges has no statement form. `instance`: the OpenRosa instance
   * as intake parsed it (or its XML); none for a JSON submission, whose record is read instead.
   */
  statementEntity(form: FormEntity, record: object, instance: XmlNode | string | undefined, submitterId: number | null): StatementEntity | null {
    const declared = this.declarations(form);
    if (!declared || !this.changes.inStatement) return null;
    let root: XmlNode;
    try {
      if (typeof instance === 'object') root = instance;
      else root = instance ? parseXml(instance) : recordTree(record as Parameters<typeof recordTree>[0]);
    } catch {
      return null;
    }
    const entity = statementEntityOf(declared, root, form.ownerId, submitterId);
    if (!entity || Date.now() - (this.expiryCheckedAt.get(`${form.ownerId}/${entity.list}`) ?? 0) >= EXPIRY_CHECK_MS) return null;
    return entity;
  }

  /** The outbox CTEs of entity changes for intake's one statement (EntityChanges sinks), reading `changed`. */
  statementRowsSql(changed: string): string[] {
    return this.changes.statementSql(changed) ?? [];
  }

  /**
   * An entity intake's one statement made or changed has updates held for it (a hold committed
   * while the statement ran): they are applied now, as the transactional path applies them after
   * a version, in a transaction of their own (docs/entities.md, "Intake: one statement").
   */
  async releaseHeldAfterStatement(listId: number, uuid: string): Promise<void> {
    await this.entities.transaction(async (m) => {
      const list = await this.lists.find(listId, m);
      if (!list) return;
      await this.entities.lock(m, listId, uuid);
      const entity = await this.entities.findByUuidForUpdate(m, listId, uuid);
      if (entity && !entity.deleted_at) await this.apply.releaseAfter(m, list, entity);
    });
  }

  /**
   * Applies the submission's entity blocks. `xml`: the instance as received (OpenRosa); a JSON
   * submission is read from its record. A submission acts on entities once: an edit of one
   * that made or updated an entity, or that is held, does nothing more (as ODK Central).
   */
  async afterStore(m: EntityManager, form: FormEntity, submission: StoredSubmission, record: object, xml: string | undefined): Promise<void> {
    const declared = this.declarations(form);
    if (!declared) return;
    // Only an edit can find entity work of its submission done before (a new row has none).
    if (submission.edited && ((await this.entities.submissionActed(m, submission.id)) || (await this.held.isHeld(m, submission.id)))) return;
    let root: XmlNode;
    try {
      root = xml ? parseXml(xml) : recordTree(record as Parameters<typeof recordTree>[0]);
    } catch {
      return; // intake parsed this instance already; nothing else can be read from it
    }
    const blocks = entityBlocks(root, declared.declarations);
    const errors: EntityError[] = [];
    if (blocks.length) {
      await m.query('SAVEPOINT entity_intake');
      try {
        const batch = new IntakeChanges();
        await this.applyBlocks(m, form.ownerId, blocks, declared, submission, errors, batch);
        await this.apply.flush(m, batch);
        await m.query('RELEASE SAVEPOINT entity_intake');
      } catch (err) {
        // Whatever went wrong, the submission stays: its entity work is undone and reported.
        await m.query('ROLLBACK TO SAVEPOINT entity_intake');
        this.logger.error({ err, submissionId: submission.id }, 'entity work of a submission failed');
        errors.splice(0, errors.length, ...blocks.map((b) => ({ list: b.dataset ?? '', uuid: b.id ?? '', error: 'The entity could not be stored.' })));
      }
    }
    // A new row has no `_entity_errors` yet; an edit's are replaced.
    if (errors.length || submission.edited) await this.held.setSubmissionErrors(m, submission.id, errors);
  }

  private async applyBlocks(
    m: EntityManager, ownerId: number, blocks: RawEntityBlock[], declared: FormEntities, submission: StoredSubmission, errors: EntityError[], batch: IntakeChanges,
  ): Promise<void> {
    const lists = new Map<string, EntityListRow | null>();
    for (const block of blocks) {
      const name = block.dataset ?? '';
      try {
        const item = entityItemOf(block, submission.submittedById);
        if (!name.trim()) throw new EntityProblem('The entity names no list (dataset).');
        if (!lists.has(name)) lists.set(name, await this.lists.findByName(ownerId, name, m));
        const list = lists.get(name);
        if (!list) throw new EntityProblem(`The form's owner has no entity list "${name}".`);
        const allowed = new Set(declared.declarations.filter((d) => d.list === name).flatMap((d) => d.actions));
        for (const action of ['create', 'update'] as const) {
          if (item[action] && !allowed.has(action)) throw new EntityProblem(`The form does not ${action} entities of list "${name}".`);
        }
        await this.expireIfDue(m, list, batch);
        await this.apply.apply(m, list, item, submission.id, batch);
      } catch (err) {
        if (!(err instanceof EntityProblem)) throw err;
        errors.push({ list: name, uuid: block.id ?? '', error: err.message });
      }
    }
  }

  private async expireIfDue(m: EntityManager, list: EntityListRow, batch: IntakeChanges): Promise<void> {
    const now = Date.now();
    const key = `${list.owner_id}/${list.name}`;
    if (now - (this.expiryCheckedAt.get(key) ?? 0) < EXPIRY_CHECK_MS) return;
    if (this.expiryCheckedAt.size > 10_000) this.expiryCheckedAt.clear();
    this.expiryCheckedAt.set(key, now);
    await this.apply.expireHeld(m, list, batch);
  }
}
