import { ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND_DETAIL, UnauthorizedError } from '@collect/contracts';
import { tokenAllowsForm, type AuthenticatedUser } from '../auth/authenticated-user.js';
import { WWW_AUTHENTICATE } from '../auth/auth-header.js';
import type { FormEntity } from './form.entity.js';
import { FormsRepository } from './forms.repository.js';
import { roleAtLeast, type FormRole } from './roles.js';

export interface FormAccess {
  form: FormEntity;
  role: FormRole;
}

/** What a role check reads of the caller (a signed-in page's user has no Authorization scheme). */
export type FormCaller = Pick<AuthenticatedUser, 'id' | 'isSuperuser' | 'personalToken'>;

export const PERMISSION_DENIED = 'You do not have permission to perform this action.';

/**
 * The one role check every module uses (forms, data, datasets, rest services, media):
 * a form the caller cannot see answers 404, a visible form with too low a role answers 403
 * (docs/api-conventions.md §Roles and permissions). Platform admins (is_superuser) act as owners.
 * A personal access token narrowed to forms sees only those: another form its user can see is
 * 403 in requireRole, access and roleOf, and left out of visibleFormIds (docs/auth.md, "Personal
 * access tokens").
 */
@Injectable()
export class FormAccessService {
  constructor(private readonly forms: FormsRepository) {}

  /** The caller's role on a live form, or null (no form, deleted, or no role). */
  async roleOf(user: AuthenticatedUser | undefined, formId: number): Promise<FormRole | null> {
    return (await this.access(user, formId))?.role ?? null;
  }

  /**
   * The form and the caller's role, or null when the caller cannot see it. A form the user can
   * see outside the personal token's forms: 403 (thrown), so that no route takes it for one it may use.
   */
  async access(user: FormCaller | undefined, formId: number): Promise<FormAccess | null> {
    const found = await this.roleAccess(user, formId);
    if (found && !tokenAllowsForm(user, formId)) throw new ForbiddenException({ detail: PERMISSION_DENIED });
    return found;
  }

  /** The form and the user's role, whatever forms a personal token is narrowed to. */
  private async roleAccess(user: FormCaller | undefined, formId: number): Promise<FormAccess | null> {
    if (!user) return null;
    const form = await this.forms.findLive(formId);
    if (!form) return null;
    if (user.isSuperuser) return { form, role: 'owner' };
    const role = await this.forms.roleOf(form.id, user.id);
    return role ? { form, role } : null;
  }

  /**
   * Throws 401 (anonymous), 404 (not visible) or 403 (role below `minimum`); returns the form
   * and role otherwise. `formId` may be any value from a path or body: non-integers are 404.
   */
  async requireRole(user: AuthenticatedUser | undefined, formId: number | string, minimum: FormRole): Promise<FormAccess> {
    if (!user) throw new UnauthorizedError('Authentication credentials were not provided.', WWW_AUTHENTICATE.basic);
    const id = typeof formId === 'number' ? formId : /^\d{1,10}$/.test(formId) ? Number(formId) : NaN;
    const found = Number.isSafeInteger(id) ? await this.roleAccess(user, id) : null;
    if (!found) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    if (!roleAtLeast(found.role, minimum) || !tokenAllowsForm(user, found.form.id)) throw new ForbiddenException({ detail: PERMISSION_DENIED });
    return found;
  }

  /** Ids of the live forms the caller can see (every live form for platform admins). */
  async visibleFormIds(user: AuthenticatedUser | undefined): Promise<number[]> {
    if (!user) return [];
    return (await this.forms.visibleFormIds(user.isSuperuser ? 'all' : user.id)).filter((id) => tokenAllowsForm(user, id));
  }
}
