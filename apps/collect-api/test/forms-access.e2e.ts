import { randomUUID } from 'node:crypto';
import { HttpException } from '@nestjs/common';
import type { AuthenticatedUser } from '../src/auth/authenticated-user.js';
import { FormAccessService } from '../src/forms/form-access.service.js';
import { FormsRepository } from '../src/forms/forms.repository.js';
import { FORM_ROLES, type FormRole } from '../src/forms/roles.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

function asCaller(u: TestUser, isSuperuser = false): AuthenticatedUser {
  return { id: u.id, username: u.username, isSuperuser, scheme: 'token' };
}

async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    if (err instanceof HttpException) return err.getStatus();
    throw err;
  }
}

describe('FormAccessService (real database)', () => {
  let sut: TestCollectApp;
  let access: FormAccessService;
  let formId: number;
  const users: Partial<Record<FormRole | 'stranger' | 'admin', TestUser>> = {};

  beforeAll(async () => {
    sut = await startTestCollectApp();
    access = sut.app.get(FormAccessService);
    const repo = sut.app.get(FormsRepository);
    for (const r of [...FORM_ROLES, 'stranger', 'admin'] as const) users[r] = await createTestUser(sut.app, { superuser: r === 'admin' });
    const form = await repo.insertWithOwner({
      uuid: randomUUID(), idString: 'access_test', title: 'Access', ownerId: users.owner!.id, rootName: 'data', xml: '<x/>', jsonDefinition: null, fields: [],
    });
    formId = form.id;
    for (const r of FORM_ROLES.filter((x) => x !== 'owner')) await repo.setRole(formId, users[r]!.id, r);
  });
  afterAll(() => sut.close());

  it('answers each role × minimum with 200 / 403, strangers and unknown forms with 404, anonymous 401', async () => {
    const table: Record<string, number[]> = {};
    for (const who of [...FORM_ROLES, 'stranger'] as const) {
      table[who] = [];
      for (const minimum of FORM_ROLES) table[who].push(await statusOf(access.requireRole(asCaller(users[who]!), formId, minimum)));
    }
    // Columns: minimum owner, manager, editor, dataentry, readonly.
    expect(table).toEqual({
      owner: [200, 200, 200, 200, 200],
      manager: [403, 200, 200, 200, 200],
      editor: [403, 403, 200, 200, 200],
      dataentry: [403, 403, 403, 200, 200],
      readonly: [403, 403, 403, 403, 200],
      stranger: [404, 404, 404, 404, 404],
    });
    expect(await statusOf(access.requireRole(asCaller(users.admin!, true), formId, 'owner'))).toBe(200);
    expect(await statusOf(access.requireRole(undefined, formId, 'readonly'))).toBe(401);
    expect(await statusOf(access.requireRole(asCaller(users.owner!), formId + 1000, 'readonly'))).toBe(404);
    expect(await statusOf(access.requireRole(asCaller(users.owner!), 'abc', 'readonly'))).toBe(404);
    expect(await access.visibleFormIds(asCaller(users.readonly!))).toEqual([formId]);
    expect(await access.visibleFormIds(asCaller(users.stranger!))).toEqual([]);
  });

  it('hides a soft-deleted form from everyone (404)', async () => {
    const repo = sut.app.get(FormsRepository);
    const other = await repo.insertWithOwner({
      uuid: randomUUID(), idString: 'gone', title: 'Gone', ownerId: users.owner!.id, rootName: 'data', xml: '<x/>', jsonDefinition: null, fields: [],
    });
    await repo.softDelete(other.id);
    expect(await statusOf(access.requireRole(asCaller(users.owner!), other.id, 'readonly'))).toBe(404);
  });
});
