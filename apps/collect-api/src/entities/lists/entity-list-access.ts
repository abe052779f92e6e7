import { ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../../auth/authenticated-user.js';
import { PERMISSION_DENIED } from '../../forms/form-access.service.js';
import { roleAtLeast } from '../../forms/roles.js';
import { EntityListsRepository, type EntityListRow } from './entity-lists.repository.js';

/**
 * Who may do what with a list (docs/entities.md "Permissions"): its owner and the managers of a
 * form that uses it write; anyone with a role on such a form reads; others get 404 as for an
 * unseen form, and a reader who tries to write 403.
 */
@Injectable()
export class EntityListAccess {
  constructor(private readonly lists: EntityListsRepository) {}

  /** The list by its pk (path text), if `user` may read it; else 404. */
  async readable(user: AuthenticatedUser | undefined, pk: string): Promise<EntityListRow> {
    return (await this.resolve(user, pk)).list;
  }

  /** The list by its pk, if `user` may change it or its entities; 404 unseen, 403 read-only. */
  async writable(user: AuthenticatedUser | undefined, pk: string): Promise<EntityListRow> {
    const { list, canWrite } = await this.resolve(user, pk);
    if (!canWrite) throw new ForbiddenException({ detail: PERMISSION_DENIED });
    return list;
  }

  private async resolve(user: AuthenticatedUser | undefined, pk: string): Promise<{ list: EntityListRow; canWrite: boolean }> {
    const id = /^\d{1,10}$/.test(pk) ? Number(pk) : NaN;
    const list = user && Number.isSafeInteger(id) ? await this.lists.find(id) : null;
    if (!list || !user) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    if (user.isSuperuser || list.owner_id === user.id) return { list, canWrite: true };
    const role = await this.lists.bestFormRole(list.id, user.id);
    if (!role) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return { list, canWrite: roleAtLeast(role, 'manager') };
  }
}
