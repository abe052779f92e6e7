import { randomUUID } from 'node:crypto';
import { ForbiddenException, Injectable } from '@nestjs/common';
import { FieldValidationError, HttpErrorWithHeaders } from '@collect/contracts';
import { tokenAllowsForm, type AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import { UsersService } from '../users/users.service.js';
import { inputLimitsOf, XmlInputError } from '../openrosa/xml.js';
import { formatSubmissionTime } from '../wire-formats/api-time.js';
import { formUuidHex } from '../wire-formats/form-uuid.js';
import type { FormEntity, FormField } from './form.entity.js';
import { FormAccessService, PERMISSION_DENIED } from './form-access.service.js';
import { fieldsOfAllVersions, parseJsonForm, type JsonFormDefinition, type ParsedForm } from './form-definition.js';
import type { FormBody, ShareFormDto, UpdateFormDto } from './form.dto.js';
import { FormsRepository } from './forms.repository.js';
import { FormPublishHooks } from './form-publish-hooks.js';
import { MIN_ROLE, roleRank, type FormRole } from './roles.js';
import { XlsFormConversion } from './xlsform-conversion.js';
import { FormMediaStore } from '../form-media/form-media.store.js';
import { setInstanceVersion, withFormhubUuid, XFormEditError } from '../openrosa/xform-edit.js';
import { submissionPublicKey } from '../encryption/xform-key.js';
import type { Choice } from '../openrosa/xform-choices.js';

/** A form definition as uploaded: XForm XML, a JSON definition, or an XLSForm workbook (.xlsx). */
export type FormUpload = { xml: string } | { json: JsonFormDefinition } | { xlsx: Buffer; filename: string };

@Injectable()
export class FormsService {
  constructor(
    private readonly forms: FormsRepository,
    private readonly access: FormAccessService,
    private readonly users: UsersService,
    private readonly xlsforms: XlsFormConversion,
    private readonly media: FormMediaStore,
    private readonly publishHooks: FormPublishHooks,
    private readonly config: CollectConfig,
  ) {}

  /** Creates a form from an XForm document, a JSON definition or an XLSForm; the caller becomes its owner. */
  async create(user: AuthenticatedUser, upload: FormUpload): Promise<FormBody> {
    const parsed = await this.parse(upload);
    if (await this.forms.findLiveByOwnerAndIdString(user.id, parsed.idString)) {
      throw new FieldValidationError({ id_string: [`You already have a form with id_string "${parsed.idString}".`] });
    }
    this.publishHooks.check(parsed);
    const uuid = randomUUID();
    const form = await this.forms.insertWithOwner({
      uuid, idString: parsed.idString, title: parsed.title, ownerId: user.id, rootName: parsed.rootName, version: parsed.version,
      xml: servedXForm(parsed, uuid), jsonDefinition: parsed.jsonDefinition, fields: parsed.fields,
    });
    await this.attachItemsets(form, user.username, parsed.itemsetsCsv);
    await this.publishHooks.published(form);
    return this.present(form, 'owner', user.username, undefined);
  }

  /**
   * Replaces the form's definition (XForm, JSON definition or XLSForm); manager and above. The
   * submissions stay; the form gets a new `version`: the definition's own when this form never
   * had it, else one the platform makes (UTC `YYYYMMDDHHMMSS`) and writes into the XForm, as
   * the Django implementation versions forms. Every definition stays in `form_versions`
   * (docs/forms.md, "Form versions").
   */
  async replace(user: AuthenticatedUser | undefined, pk: string, upload: FormUpload): Promise<FormBody> {
    const { form } = await this.access.requireRole(user, pk, MIN_ROLE.view);
    await this.access.requireRole(user, form.id, MIN_ROLE.share);
    const parsed = await this.parse(upload);
    if (parsed.idString !== form.idString) {
      throw new FieldValidationError({ id_string: [`The new definition's id_string "${parsed.idString}" must match the form's id_string "${form.idString}".`] });
    }
    this.publishHooks.check(parsed);
    await this.forms.replaceDefinition(form.id, (usedVersions) => {
      let { version, xml, jsonDefinition } = parsed;
      if (!version || usedVersions.has(version)) {
        version = newVersion(usedVersions, new Date());
        xml = definitionEdit(() => setInstanceVersion(xml, version));
        if (jsonDefinition) jsonDefinition = { ...jsonDefinition, version };
      }
      return { version, title: parsed.title, rootName: parsed.rootName, xml: servedXForm({ ...parsed, xml }, form.uuid), jsonDefinition, fields: parsed.fields };
    });
    await this.attachItemsets(form, (await this.forms.findOwners([form.ownerId])).get(form.ownerId) ?? String(form.ownerId), parsed.itemsetsCsv);
    const replaced = await this.forms.findLive(form.id);
    if (replaced) await this.publishHooks.published(replaced);
    return this.get(user, String(form.id));
  }

  /**
   * The upload as a form definition. An XLSForm is converted in a worker thread first; its
   * failures are 400 `{"detail", "errors", "warnings"}` with pyxform's `[row : N]` messages.
   */
  private async parse(upload: FormUpload): Promise<ParsedForm & { itemsetsCsv: string | null }> {
    const field = 'xlsx' in upload ? 'xls_file' : 'xml_file';
    let parsed: ParsedForm;
    let itemsetsCsv: string | null = null;
    try {
      if ('xlsx' in upload) {
        const converted = await this.xlsforms.convert(upload.xlsx, upload.filename);
        itemsetsCsv = converted.itemsetsCsv;
        parsed = await this.xlsforms.parse(converted.xml);
      } else parsed = 'xml' in upload ? await this.xlsforms.parse(upload.xml) : parseJsonForm(upload.json, inputLimitsOf(this.config));
    } catch (err) {
      if (err instanceof XmlInputError) throw new FieldValidationError({ [field]: [err.message] });
      throw err;
    }
    if (!parsed.fields.length) throw new FieldValidationError({ [field]: ['The form has no questions.'] });
    return { ...parsed, itemsetsCsv };
  }

  /**
   * An XLSForm's external_choices sheet becomes the form media file `itemsets.csv` that
   * select_one_external reads, as pyxform-based servers attach it (docs/forms.md).
   */
  private async attachItemsets(form: Pick<FormEntity, 'id' | 'ownerId'>, ownerUsername: string, itemsetsCsv: string | null): Promise<void> {
    if (itemsetsCsv !== null) await this.media.put({ formId: form.id, ownerUsername }, 'itemsets.csv', Buffer.from(itemsetsCsv, 'utf8'));
  }

  async list(user: AuthenticatedUser): Promise<FormBody[]> {
    const rows = (await this.forms.visibleTo(user.isSuperuser ? 'all' : user.id)).filter(({ form }) => tokenAllowsForm(user, form.id));
    const owners = await this.forms.findOwners(rows.map((r) => r.form.ownerId));
    const stats = await this.forms.submissionStats(rows.map((r) => r.form.id));
    const keys = await this.forms.encryptionKeys(rows.map((r) => r.form.id));
    return rows.map(({ form, role }) => this.present(form, role ?? 'owner', owners.get(form.ownerId) ?? '', stats.get(form.id), keys));
  }

  async get(user: AuthenticatedUser | undefined, pk: string): Promise<FormBody> {
    const { form, role } = await this.access.requireRole(user, pk, MIN_ROLE.view);
    const owners = await this.forms.findOwners([form.ownerId]);
    const stats = await this.forms.submissionStats([form.id]);
    return this.present(form, role, owners.get(form.ownerId) ?? '', stats.get(form.id), await this.forms.encryptionKeys([form.id]));
  }

  /** The XForm document (readonly and above), with the form it belongs to. */
  async getDocument(user: AuthenticatedUser | undefined, pk: string): Promise<FormEntity> {
    return (await this.access.requireRole(user, pk, MIN_ROLE.view)).form;
  }

  /** The fields of every version of the form, newest definition first (for data-out; docs/forms.md, "Form versions"). */
  async fieldsOfAllVersions(formId: number): Promise<FormField[]> {
    return fieldsOfAllVersions((await this.forms.versions(formId)).map((v) => v.fields));
  }

  /**
   * The choice lists of every version of the forms, the forms in order and each newest version
   * first: the first definition that declares a list gives its labels. Stored with each version
   * at upload (form_versions.choices), so no XForm is parsed here.
   */
  async choicesOfAllVersions(formIds: number[]): Promise<Map<string, Choice[]>> {
    const declared = new Map<string, Choice[]>();
    for (const formId of formIds) {
      for (const version of await this.forms.versions(formId)) for (const [k, v] of Object.entries(version.choices ?? {})) if (!declared.has(k)) declared.set(k, v);
    }
    return declared;
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

  present(form: FormEntity, role: FormRole, ownerUsername: string, stats: { count: number; last: Date | null } | undefined, keys: Map<string, { mode: string; hint: string | null; created_at: Date }> = new Map()): FormBody {
    const publicKey = currentPublicKey(form);
    const key = publicKey ? keys.get(`${form.id}\n${publicKey}`) : undefined;
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
      encrypted: publicKey !== null,
      encryption: publicKey === null ? null : { mode: key?.mode ?? 'self', hint: key?.hint ?? null, public_key: publicKey, created_at: key ? key.created_at.toISOString() : null },
    };
  }
}

/**
 * The XForm as stored and served: with `<formhub><uuid/></formhub>` calculating the form's uuid
 * (docs/forms.md, "formhub/uuid"). The edit inserts whole elements at tag boundaries of a
 * document that was parsed already (xform-edit.spec.ts); it is not parsed a second time, which
 * would hold the event loop as long as the first parse did.
 */
function servedXForm(parsed: ParsedForm, uuid: string): string {
  return definitionEdit(() => withFormhubUuid(parsed.xml, parsed.rootName, formUuidHex(uuid)));
}

function definitionEdit<T>(edit: () => T): T {
  try {
    return edit();
  } catch (err) {
    if (err instanceof XFormEditError || err instanceof XmlInputError) throw new FieldValidationError({ xml_file: [`The XForm could not be prepared for serving: ${err.message}`] });
    throw err;
  }
}

/** Public keys of current form versions lately read, per process: a key never changes within a version. */
const currentKeys = new Map<string, string | null>();

/** The `base64RsaPublicKey` of the form's current version, or null (read once per version). */
function currentPublicKey(form: Pick<FormEntity, 'id' | 'version' | 'xml' | 'dateModified'>): string | null {
  const cacheKey = `${form.id}\n${form.version}\n${form.dateModified.getTime()}`;
  let key = currentKeys.get(cacheKey);
  if (key === undefined) {
    key = submissionPublicKey(form.xml);
    if (currentKeys.size >= 10_000) currentKeys.clear();
    currentKeys.set(cacheKey, key);
  }
  return key;
}

/** A version this form never had: UTC `YYYYMMDDHHMMSS`, with `-2`, `-3`, ... if that was taken. */
export function newVersion(used: ReadonlySet<string>, now: Date): string {
  const base = now.toISOString().replace(/\D/g, '').slice(0, 14);
  let version = base;
  for (let n = 2; used.has(version); n++) version = `${base}-${n}`;
  return version;
}

export function unsupportedMediaType(detail: string): HttpErrorWithHeaders {
  return new HttpErrorWithHeaders(415, detail, {});
}
