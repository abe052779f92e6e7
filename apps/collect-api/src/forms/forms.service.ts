import { randomUUID } from 'node:crypto';
import { ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { FieldValidationError, HttpErrorWithHeaders } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { UsersService } from '../users/users.service.js';
import { inputLimitsOf, XmlInputError } from '../openrosa/xml.js';
import { formatSubmissionTime } from '../wire-formats/api-time.js';
import { formUuidHex } from '../wire-formats/form-uuid.js';
import type { FormEntity } from './form.entity.js';
import { FormAccessService, PERMISSION_DENIED } from './form-access.service.js';
import { parseJsonForm, parseXForm, type JsonFormDefinition, type ParsedForm } from './form-definition.js';
import type { FormBody, ShareFormDto, UpdateFormDto } from './form.dto.js';
import { FormsRepository } from './forms.repository.js';
import { MIN_ROLE, roleRank, type FormRole } from './roles.js';

@Injectable()
export class FormsService {
  constructor(
    private readonly forms: FormsRepository,
    private readonly access: FormAccessService,
    private readonly users: UsersService,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  /** Creates a form from an XForm document or a JSON definition; the caller becomes its owner. */
  async create(user: AuthenticatedUser, upload: { xml: string } | { json: JsonFormDefinition }): Promise<FormBody> {
    let parsed: ParsedForm;
    try {
      const limits = inputLimitsOf(this.config);
      parsed = 'xml' in upload ? parseXForm(upload.xml, limits) : parseJsonForm(upload.json, limits);
    } catch (err) {
      if (err instanceof XmlInputError) throw new FieldValidationError({ xml_file: [err.message] });
      throw err;
    }
    if (!parsed.fields.length) throw new FieldValidationError({ xml_file: ['The form has no questions.'] });
    if (await this.forms.findLiveByOwnerAndIdString(user.id, parsed.idString)) {
      throw new FieldValidationError({ id_string: [`You already have a form with id_string "${parsed.idString}".`] });
    }
    const form = await this.forms.insertWithOwner({
      uuid: randomUUID(), idString: parsed.idString, title: parsed.title, ownerId: user.id, rootName: parsed.rootName, version: parsed.version,
      xml: parsed.xml, jsonDefinition: parsed.jsonDefinition, fields: parsed.fields,
    });
    return this.present(form, 'owner', user.username, undefined);
  }

  async list(user: AuthenticatedUser): Promise<FormBody[]> {
    const rows = await this.forms.visibleTo(user.isSuperuser ? 'all' : user.id);
    const owners = await this.forms.findOwners(rows.map((r) => r.form.ownerId));
    const stats = await this.forms.submissionStats(rows.map((r) => r.form.id));
    return rows.map(({ form, role }) => this.present(form, role ?? 'owner', owners.get(form.ownerId) ?? '', stats.get(form.id)));
  }

  async get(user: AuthenticatedUser | undefined, pk: string): Promise<FormBody> {
    const { form, role } = await this.access.requireRole(user, pk, MIN_ROLE.view);
    const owners = await this.forms.findOwners([form.ownerId]);
    const stats = await this.forms.submissionStats([form.id]);
    return this.present(form, role, owners.get(form.ownerId) ?? '', stats.get(form.id));
  }

  /** The XForm document (readonly and above), with the form it belongs to. */
  async getDocument(user: AuthenticatedUser | undefined, pk: string): Promise<FormEntity> {
    return (await this.access.requireRole(user, pk, MIN_ROLE.view)).form;
  }

  async fields(user: AuthenticatedUser | undefined, pk: string) {
    return (await this.access.requireRole(user, pk, MIN_ROLE.view)).form.fields;
  }

  /** `title` and `downloadable` (accepting submissions); manager and above. */
  async update(user: AuthenticatedUser | undefined, pk: string, body: UpdateFormDto): Promise<FormBody> {
    const { form } = await this.access.requireRole(user, pk, MIN_ROLE.view);
    await this.access.requireRole(user, form.id, MIN_ROLE.share);
    const changes: { title?: string; acceptingSubmissions?: boolean } = {};
    if (body.title !== undefined) changes.title = body.title;
    if (body.downloadable !== undefined) changes.acceptingSubmissions = body.downloadable;
    if (Object.keys(changes).length) await this.forms.update(form.id, changes);
    return this.get(user, String(form.id));
  }

  async delete(user: AuthenticatedUser | undefined, pk: string): Promise<void> {
    const { form } = await this.access.requireRole(user, pk, MIN_ROLE.deleteForm);
    await this.forms.softDelete(form.id);
  }

  /**
   * `PUT /api/v1/forms/{pk}/share` `{username, role, remove?}`. Needs manager; nobody grants a
   * role above their own; the owner's own role is not changed through sharing.
   */
  async share(user: AuthenticatedUser | undefined, pk: string, body: ShareFormDto): Promise<void> {
    const { form, role: callerRole } = await this.access.requireRole(user, pk, MIN_ROLE.share);
    const target = await this.users.findByUsername(body.username);
    if (!target || !target.isActive) throw new FieldValidationError({ username: [`User "${body.username}" does not exist.`] });
    if (target.id === form.ownerId) throw new FieldValidationError({ username: ['The owner of a form keeps the owner role.'] });
    const { role } = body;
    if (roleRank(role) > roleRank(callerRole)) throw new ForbiddenException({ detail: PERMISSION_DENIED });
    const current = await this.forms.roleOf(form.id, target.id);
    if (current && roleRank(current) > roleRank(callerRole)) throw new ForbiddenException({ detail: PERMISSION_DENIED });
    if (body.remove) {
      // Removing names the role being removed, as the DRF-world API does; a mismatch is a no-op.
      if (current === role) await this.forms.removeRole(form.id, target.id);
      return;
    }
    await this.forms.setRole(form.id, target.id, role);
  }

  present(form: FormEntity, role: FormRole, ownerUsername: string, stats: { count: number; last: Date | null } | undefined): FormBody {
    return {
      url: `${this.config.PUBLIC_BASE_URL}/api/v1/forms/${form.id}`,
      formid: form.id,
      id_string: form.idString,
      title: form.title,
      uuid: formUuidHex(form.uuid),
      owner: ownerUsername,
      version: form.version,
      downloadable: form.acceptingSubmissions,
      date_created: form.dateCreated.toISOString(),
      date_modified: form.dateModified.toISOString(),
      num_of_submissions: stats?.count ?? 0,
      last_submission_time: stats?.last ? formatSubmissionTime(stats.last) : null,
      role,
    };
  }
}

export function unsupportedMediaType(detail: string): HttpErrorWithHeaders {
  return new HttpErrorWithHeaders(415, detail, {});
}
