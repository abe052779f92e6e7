import { ForbiddenException, NotFoundException } from '@nestjs/common';
import { UnauthorizedError } from '@collect/contracts';
import { mockOf } from '@collect/testing';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { FormAccessService, PERMISSION_DENIED } from './form-access.service.js';
import type { FormEntity } from './form.entity.js';
import type { FormsRepository } from './forms.repository.js';
import { FORM_ROLES, MIN_ROLE, roleAtLeast, type FormRole } from './roles.js';

const form = { id: 7, idString: 'survey', ownerId: 1 } as FormEntity;
const user = (id: number, isSuperuser = false): AuthenticatedUser => ({ id, username: `u${id}`, isSuperuser, scheme: 'token' });

/** A repository holding form 7 (live) and the given roles on it. */
function formsWith(roles: Record<number, FormRole>) {
  return mockOf<FormsRepository>({
    findLive: async (id) => (id === form.id ? form : null),
    roleOf: async (formId, userId) => (formId === form.id ? (roles[userId] ?? null) : null),
    visibleFormIds: async (who) => (who === 'all' ? [7, 8] : roles[who] ? [7] : []),
  });
}

describe('FormAccessService (role rules, repository mocked)', () => {
  it('answers 401 to an anonymous caller before reading anything', async () => {
    const forms = formsWith({});
    const sut = new FormAccessService(forms);
    await expect(sut.requireRole(undefined, 7, 'readonly')).rejects.toBeInstanceOf(UnauthorizedError);
    expect(forms.mock.calls).toEqual([]);
  });

  it('answers 404 for an id that is not a small positive integer, without a query', async () => {
    const forms = formsWith({ 2: 'owner' });
    const sut = new FormAccessService(forms);
    for (const id of ['7a', '1e3', '-7', '', '99999999999', ' 7']) {
      await expect(sut.requireRole(user(2), id, 'readonly')).rejects.toBeInstanceOf(NotFoundException);
    }
    expect(forms.mock.calls).toEqual([]);
  });

  it('answers 404, not 403, for a form the caller has no role on (existence is not revealed)', async () => {
    const sut = new FormAccessService(formsWith({ 2: 'owner' }));
    await expect(sut.requireRole(user(3), 7, 'readonly')).rejects.toBeInstanceOf(NotFoundException);
    await expect(sut.requireRole(user(2), 8, 'readonly')).rejects.toBeInstanceOf(NotFoundException);
  });

  it('answers 403 to a visible form with a role below the minimum, and the form and role otherwise', async () => {
    const sut = new FormAccessService(formsWith({ 2: 'dataentry' }));
    await expect(sut.requireRole(user(2), '7', MIN_ROLE.editSubmissions)).rejects.toThrow(new ForbiddenException({ detail: PERMISSION_DENIED }));
    await expect(sut.requireRole(user(2), '7', MIN_ROLE.submit)).resolves.toEqual({ form, role: 'dataentry' });
  });

  it('treats a platform admin as the owner of every form without reading roles', async () => {
    const forms = formsWith({});
    const sut = new FormAccessService(forms);
    await expect(sut.requireRole(user(9, true), 7, MIN_ROLE.deleteForm)).resolves.toEqual({ form, role: 'owner' });
    expect(forms.mock.callsOf('roleOf')).toEqual([]);
    await expect(sut.visibleFormIds(user(9, true))).resolves.toEqual([7, 8]);
    await expect(sut.visibleFormIds(undefined)).resolves.toEqual([]);
  });

  it('ranks the roles as docs/api-conventions.md §Roles and permissions tables them', () => {
    const least = (action: keyof typeof MIN_ROLE) => FORM_ROLES.filter((r) => roleAtLeast(r, MIN_ROLE[action]));
    expect(least('view')).toEqual(['owner', 'manager', 'editor', 'dataentry', 'readonly']);
    expect(least('submit')).toEqual(['owner', 'manager', 'editor', 'dataentry']);
    expect(least('editSubmissions')).toEqual(['owner', 'manager', 'editor']);
    expect(least('manageRestServices')).toEqual(['owner', 'manager', 'editor']);
    expect(least('deleteForm')).toEqual(['owner', 'manager']);
    expect(least('share')).toEqual(['owner', 'manager']);
    expect(roleAtLeast(null, 'readonly')).toBe(false);
  });
});
