import { BadRequestException, ForbiddenException, HttpException, Injectable, NotFoundException } from '@nestjs/common';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import type { FormEntity } from '../forms/form.entity.js';
import { PERMISSION_DENIED, type FormAccess } from '../forms/form-access.service.js';
import { FormCache } from '../forms/form-cache.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { MIN_ROLE, roleAtLeast, type FormRole } from '../forms/roles.js';
import { SubmissionsRepository } from './submissions.repository.js';

/** Which form a submission goes to, and the submitter's role on it (docs/forms.md, "Which form a submission goes to"). */
@Injectable()
export class SubmissionFormResolver {
  constructor(
    private readonly repo: SubmissionsRepository,
    private readonly forms: FormsRepository,
    private readonly formCache: FormCache,
  ) {}

  /**
   * The form a submission names by id_string (global paths). Several users may own forms with
   * the same id_string, and anyone may share theirs with anyone, so the rule must not let a
   * stranger's form capture or block a team's submissions (docs/forms.md, "Which form a
   * submission goes to"). Among the live forms with that id_string the caller may submit to:
   * the one the instance names by `formhub/uuid`; else the caller's own; else the one the caller
   * submitted to last; else the one the caller was given a role on first. None visible → 404,
   * visible but role too low → 403, still a tie → 400 naming the owner-scoped path.
   */
  async formAndRoleForSubmission(user: AuthenticatedUser, idString: string | undefined, formUuid?: string, fresh = false): Promise<FormAccess> {
    // An OpenRosa instance without an id (the JSON path has JsonSubmissionDto).
    if (!idString) throw new FieldValidationError({ id: ['The form id_string is required.'] });
    try {
      const candidates = await this.formCache.liveByIdString(idString, fresh);
      const visible: Array<{ form: FormEntity; role: FormRole; canSubmit: boolean }> = [];
      for (const form of candidates) {
        const role = user.isSuperuser ? 'owner' : await this.formCache.roleOf(form.id, user.id, fresh);
        if (role) visible.push({ form, role, canSubmit: roleAtLeast(role, MIN_ROLE.submit) });
      }
      if (!visible.length) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
      const allowed = visible.filter((v) => v.canSubmit);
      if (!allowed.length) throw new ForbiddenException({ detail: PERMISSION_DENIED });
      if (allowed.length === 1) return allowed[0];
      const chosen = await this.disambiguate(user, allowed, formUuid);
      if (chosen) return chosen;
      throw new BadRequestException({ detail: `More than one form has id_string "${idString}"; submit to /<owner username>/submission instead.` });
    } catch (err) {
      // The cache never refuses alone: a refusal is read again from the database.
      if (!fresh && err instanceof HttpException) return this.formAndRoleForSubmission(user, idString, formUuid, true);
      throw err;
    }
  }

  /** The rule's tie-breakers, strongest first (see formAndRoleForSubmission). */
  private async disambiguate<T extends { form: FormEntity }>(user: AuthenticatedUser, allowed: T[], formUuid: string | undefined): Promise<T | null> {
    const uuid = formUuid?.replace(/^uuid:/i, '').replace(/-/g, '').toLowerCase();
    const named = uuid ? allowed.find((v) => v.form.uuid.replace(/-/g, '') === uuid) : undefined;
    if (named) return named;
    const own = allowed.filter((v) => v.form.ownerId === user.id);
    if (own.length === 1) return own[0];
    const ids = allowed.map((v) => v.form.id);
    const last = await this.repo.lastFormSubmittedTo(user.id, ids);
    if (last !== null) return allowed.find((v) => v.form.id === last)!;
    const granted = await this.forms.rolesGrantedAt(user.id, ids);
    const byGrant = allowed.filter((v) => granted.has(v.form.id)).sort((a, b) => granted.get(a.form.id)!.getTime() - granted.get(b.form.id)!.getTime());
    if (byGrant.length && (byGrant.length === 1 || granted.get(byGrant[0].form.id)!.getTime() < granted.get(byGrant[1].form.id)!.getTime())) return byGrant[0];
    return null;
  }

  /**
   * The owner-scoped OpenRosa path (`/<username>/submission`): that owner's live form with the
   * id_string, whatever other forms share it. Unknown owner or form, or not visible → 404;
   * visible but role too low → 403.
   */
  async formAndRoleForOwner(user: AuthenticatedUser, ownerUsername: string, idString: string | undefined, fresh = false): Promise<FormAccess> {
    if (!idString) throw new FieldValidationError({ id: ['The form id_string is required.'] });
    const form = await this.formCache.liveByOwnerName(ownerUsername, idString, fresh);
    const role = !form ? null : user.isSuperuser ? 'owner' : await this.formCache.roleOf(form.id, user.id, fresh);
    const refusal = !form || !role ? new NotFoundException({ detail: NOT_FOUND_DETAIL }) : !roleAtLeast(role, MIN_ROLE.submit) ? new ForbiddenException({ detail: PERMISSION_DENIED }) : null;
    if (refusal && !fresh) return this.formAndRoleForOwner(user, ownerUsername, idString, true);
    if (refusal) throw refusal;
    return { form: form!, role: role! };
  }
}
