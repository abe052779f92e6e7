import { BadRequestException, ConflictException, ForbiddenException, NotFoundException } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { FieldValidationError } from '@collect/contracts';
import { mockOf } from '@collect/testing';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { loadCollectConfig } from '../config/collect-config.js';
import type { FormAccess, FormAccessService } from '../forms/form-access.service.js';
import type { FormCache } from '../forms/form-cache.js';
import type { FormEntity } from '../forms/form.entity.js';
import type { FormsRepository } from '../forms/forms.repository.js';
import type { FormRole } from '../forms/roles.js';
import type { FileStorage } from '../storage/file-storage.js';
import { contentHash } from './submission-canonical.js';
import { SubmissionEvents, type SubmissionEvent } from './submission-events.js';
import type { SubmissionOutbox } from './submission-outbox.js';
import type { SubmissionEntity } from './submission.entity.js';
import { SubmissionsRepository } from './submissions.repository.js';
import { SubmissionAttachmentStore } from './submission-attachments.js';
import { SubmissionFormResolver } from './submission-form-resolver.js';
import { SubmissionsService } from './submissions.service.js';
import type { EntityIntakeService } from '../entities/intake/entity-intake.service.js';

const config = loadCollectConfig({});
const alice: AuthenticatedUser = { id: 2, username: 'alice', isSuperuser: false, scheme: 'token' };
const manager = {} as EntityManager;

function formOf(id: number, ownerId: number, extra: Partial<FormEntity> = {}): FormEntity {
  return { id, ownerId, idString: 'survey', uuid: `0000000${id}-0000-4000-8000-000000000000`, version: '1', acceptingSubmissions: true, fields: [{ name: 'q', type: 'text' }], ...extra } as FormEntity;
}

function stored(form: FormEntity, uuid: string, json: Record<string, unknown>, extra: Partial<SubmissionEntity> = {}): SubmissionEntity {
  return { id: 40, formId: form.id, uuid, json, contentHash: contentHash(json), submittedById: alice.id, deletedAt: null, dateCreated: new Date(0), dateModified: new Date(0), ...extra } as SubmissionEntity;
}

/** The service with its repositories mocked: only the calls a test allows may happen. */
function makeSut(deps: { repo?: SubmissionsRepository; cache?: FormCache; events?: SubmissionEvents; outbox?: SubmissionOutbox }) {
  const events = deps.events ?? new SubmissionEvents();
  const outbox = deps.outbox ?? mockOf<SubmissionOutbox>({ committed: () => undefined, createdRowsSql: () => '', createdRowsWritten: () => undefined });
  const repo = deps.repo ?? mockOf<SubmissionsRepository>();
  const storage = mockOf<FileStorage>();
  return new SubmissionsService(
    repo, mockOf<FormAccessService>(), deps.cache ?? mockOf<FormCache>(), events, outbox, storage, config,
    new SubmissionAttachmentStore(repo, storage),
    // These forms have no entity blocks (entities/intake/entity-intake.service.ts).
    mockOf<EntityIntakeService>({ declares: () => false, afterStore: () => Promise.resolve() }),
  );
}

/** Which form a submission goes to, with the repositories and FormCache mocked. */
function makeResolver(deps: { repo?: SubmissionsRepository; forms?: FormsRepository; cache?: FormCache }) {
  return new SubmissionFormResolver(deps.repo ?? mockOf<SubmissionsRepository>(), deps.forms ?? mockOf<FormsRepository>(), deps.cache ?? mockOf<FormCache>());
}

/** Intake as the controllers call it: `resolve` answers the form and role (recording whether it was asked to read afresh). */
function intake(sut: SubmissionsService, access: FormAccess, record: Record<string, unknown>, asked: boolean[] = []) {
  return sut.receive(alice, async (fresh) => (asked.push(fresh), access), () => ({ record: record as never, files: [] }));
}

/** A repository whose transaction runs its callback at once with a stand-in manager. */
function repoWith(methods: Parameters<typeof mockOf<SubmissionsRepository>>[0]) {
  return mockOf<SubmissionsRepository>({ transaction: (async (work: (m: EntityManager) => Promise<unknown>) => work(manager)) as never, ...methods });
}

describe('SubmissionFormResolver: which form a submission goes to (repositories mocked)', () => {
  // FormCache answers the candidates and roles; the grant dates come from the forms repository.
  const forms = (candidates: FormEntity[], roles: Record<number, FormRole>, granted = new Map<number, Date>()) => ({
    cache: mockOf<FormCache>({ liveByIdString: async () => candidates, roleOf: async (formId) => roles[formId] ?? null }),
    forms: mockOf<FormsRepository>({ rolesGrantedAt: async () => granted }),
  });

  it('needs an id_string (400 on the id field)', async () => {
    const sut = makeResolver({});
    await expect(sut.formAndRoleForSubmission(alice, undefined)).rejects.toBeInstanceOf(FieldValidationError);
  });

  it('answers 404 when no form with the id_string is visible and 403 when only readonly ones are', async () => {
    await expect(makeResolver({ ...forms([formOf(1, 9)], {}) }).formAndRoleForSubmission(alice, 'survey')).rejects.toBeInstanceOf(NotFoundException);
    await expect(makeResolver({ ...forms([formOf(1, 9)], { 1: 'readonly' }) }).formAndRoleForSubmission(alice, 'survey')).rejects.toBeInstanceOf(ForbiddenException);
  });

  it('among several forms it may submit to, takes the one formhub/uuid names, then the caller\'s own', async () => {
    const mine = formOf(1, alice.id);
    const shared = formOf(2, 9);
    const sut = makeResolver({ ...forms([mine, shared], { 1: 'owner', 2: 'dataentry' }) });
    await expect(sut.formAndRoleForSubmission(alice, 'survey', `uuid:${shared.uuid}`)).resolves.toMatchObject({ form: shared, role: 'dataentry' });
    await expect(sut.formAndRoleForSubmission(alice, 'survey')).resolves.toMatchObject({ form: mine, role: 'owner' });
  });

  it('then the form submitted to last, then the earliest grant; a tie is a 400 naming the owner-scoped path', async () => {
    const a = formOf(1, 8);
    const b = formOf(2, 9);
    const lastTo = (formId: number | null) => mockOf<SubmissionsRepository>({ lastFormSubmittedTo: async () => formId });
    await expect(makeResolver({ repo: lastTo(2), ...forms([a, b], { 1: 'editor', 2: 'editor' }) }).formAndRoleForSubmission(alice, 'survey')).resolves.toMatchObject({ form: b });
    const earlier = new Map([[1, new Date(1000)], [2, new Date(2000)]]);
    await expect(makeResolver({ repo: lastTo(null), ...forms([a, b], { 1: 'editor', 2: 'editor' }, earlier) }).formAndRoleForSubmission(alice, 'survey')).resolves.toMatchObject({ form: a });
    const same = new Map([[1, new Date(1000)], [2, new Date(1000)]]);
    const tie = makeResolver({ repo: lastTo(null), ...forms([a, b], { 1: 'editor', 2: 'editor' }, same) }).formAndRoleForSubmission(alice, 'survey');
    await expect(tie).rejects.toBeInstanceOf(BadRequestException);
    await expect(tie).rejects.toMatchObject({ response: { detail: expect.stringMatching(/submit to \/<owner username>\/submission/) } });
  });
});

describe('SubmissionsService: intake rules (repositories mocked)', () => {
  const form = formOf(1, alice.id);

  it('refuses a form that does not accept submissions, after reading it afresh, before touching the database', async () => {
    const repo = repoWith({});
    const asked: boolean[] = [];
    await expect(intake(makeSut({ repo }), { form: { ...form, acceptingSubmissions: false }, role: 'owner' }, { q: 'a' }, asked)).rejects.toBeInstanceOf(ForbiddenException);
    expect(asked).toEqual([false, true]);
    expect(repo.mock.calls).toEqual([]);
  });

  it('stores nothing when the checked insert finds the cached form or role stale: resolves afresh and stores against that; stale three times is 409', async () => {
    const answers = [{ allowed: false, created: null, queued: 0 }, { allowed: true, created: stored(form, 'i-1', { q: 'a' }), queued: 0 }];
    const repo = repoWith({ insertCheckedAlone: async () => answers.shift()! });
    const asked: boolean[] = [];
    await expect(intake(makeSut({ repo }), { form, role: 'dataentry' }, { q: 'a', 'meta/instanceID': 'uuid:i-1' }, asked))
      .resolves.toMatchObject({ outcome: 'created' });
    expect(asked).toEqual([false, true]);
    const never = repoWith({ insertCheckedAlone: async () => ({ allowed: false, created: null, queued: 0 }) });
    await expect(intake(makeSut({ repo: never }), { form, role: 'dataentry' }, { q: 'a' })).rejects.toBeInstanceOf(ConflictException);
    expect(never.mock.callsOf('insertCheckedAlone')).toHaveLength(3);
  });

  it('stores a new instance and its outbox rows in ONE statement (no transaction), then tells the outbox and the listeners', async () => {
    const seen: string[] = [];
    const events = new SubmissionEvents();
    const outbox = mockOf<SubmissionOutbox>({
      createdRowsSql: (inserted) => `outbox rows of ${inserted}`,
      createdRowsWritten: (count) => void seen.push(`outbox wrote ${count}`),
    });
    events.onCommitted((event: SubmissionEvent) => void seen.push(`committed ${event.type}`));
    const repo = repoWith({ insertCheckedAlone: async (row, _check, outboxSql) => ({ allowed: true, created: stored(form, row.uuid, row.json), queued: outboxSql('inserted') === 'outbox rows of inserted' ? 2 : -1 }) });
    const result = await intake(makeSut({ repo, events, outbox }), { form, role: 'dataentry' }, { q: 'a', 'meta/instanceID': 'uuid:i-1' });
    expect(result.outcome).toBe('created');
    const [[row, check]] = repo.mock.callsOf('insertCheckedAlone') as Array<[Partial<SubmissionEntity>, { version: string; superuser: boolean; roles: string[] }]>;
    // The meta keys are not answers: they leave the stored record.
    expect(row).toMatchObject({ formId: 1, uuid: 'i-1', json: { q: 'a' }, submittedById: alice.id, version: '1' });
    // The insert itself checks the form's version and a role that may submit.
    expect(check).toMatchObject({ version: '1', superuser: false });
    expect([...check.roles].sort()).toEqual(['dataentry', 'editor', 'manager', 'owner']);
    expect(repo.mock.callsOf('transaction')).toEqual([]);
    await new Promise((r) => setImmediate(r));
    // The outbox hears of the rows the statement wrote (its NOTIFY goes after it) before the listeners do.
    expect(seen).toEqual(['outbox wrote 2', 'committed submission.created']);
  });

  it('answers the same instanceID with the same content as a duplicate (no event), and with other content 409', async () => {
    const outbox = mockOf<SubmissionOutbox>({ committed: () => undefined, createdRowsSql: () => '' });
    const existing = stored(form, 'i-1', { q: 'a' });
    const repo = repoWith({
      insertCheckedAlone: async () => ({ allowed: true, created: null, queued: 0 }),
      insertChecked: async () => ({ allowed: true, created: null, queued: 0 }),
      findByUuidForUpdate: async () => existing,
    });
    const sut = makeSut({ repo, outbox });
    await expect(intake(sut, { form, role: 'dataentry' }, { q: 'a', 'meta/instanceID': 'uuid:i-1' })).resolves.toMatchObject({ outcome: 'duplicate', submission: existing });
    await expect(intake(sut, { form, role: 'dataentry' }, { q: 'b', 'meta/instanceID': 'uuid:i-1' })).rejects.toBeInstanceOf(ConflictException);
    expect(outbox.mock.callsOf('record')).toEqual([]);
    expect(outbox.mock.callsOf('createdRowsWritten')).toEqual([]);
  });

  it('stores an edit (meta/deprecatedID) in a transaction that records submission.updated in the outbox, then tells listeners after commit', async () => {
    const seen: string[] = [];
    const events = new SubmissionEvents();
    const outbox = mockOf<SubmissionOutbox>({ record: async (m, event) => void seen.push(`in-tx ${event.type} ${m === manager}`), committed: (m) => void seen.push(`outbox committed ${m === manager}`) });
    events.onCommitted((event: SubmissionEvent) => void seen.push(`committed ${event.type}`));
    const old = stored(form, 'i-1', { q: 'a' });
    const repo = repoWith({
      findByUuidForUpdate: async (_m, _f, uuid) => (uuid === 'i-1' ? old : null),
      replaceContent: async (_m, id, changes) => ({ ...old, ...changes, id }),
      liveAttachmentsOf: async () => [],
      hideAttachments: async () => undefined,
    });
    const edit = { q: 'b', 'meta/instanceID': 'uuid:i-2', 'meta/deprecatedID': 'uuid:i-1' };
    await expect(intake(makeSut({ repo, events, outbox }), { form, role: 'editor' }, edit)).resolves.toMatchObject({ outcome: 'updated' });
    expect(repo.mock.callsOf('insertCheckedAlone')).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['in-tx submission.updated true', 'outbox committed true', 'committed submission.updated']);
  });

  it('lets only an editor replace a stored instance through meta/deprecatedID', async () => {
    const old = stored(form, 'i-1', { q: 'a' });
    const repo = repoWith({ findByUuidForUpdate: async (_m, _f, uuid) => (uuid === 'i-1' ? old : null) });
    const edit = { q: 'b', 'meta/instanceID': 'uuid:i-2', 'meta/deprecatedID': 'uuid:i-1' };
    await expect(intake(makeSut({ repo }), { form, role: 'dataentry' }, edit)).rejects.toBeInstanceOf(ForbiddenException);
    expect(repo.mock.callsOf('replaceContent')).toEqual([]);
    expect(repo.mock.callsOf('insertChecked')).toEqual([]);
  });
});
