import { Injectable, NotFoundException } from '@nestjs/common';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import { validateInput } from '@collect/platform';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { MIN_ROLE } from '../forms/roles.js';
import type { MultipartForm } from '../openrosa/body.js';
import type { FormMediaEntity } from '../form-media/form-media.entity.js';
import { FormMediaRepository } from '../form-media/form-media.repository.js';
import { FormMediaStore } from '../form-media/form-media.store.js';
import { CreateMetadataDto, mediaNameProblem, type MetadataBody } from './metadata.dto.js';

/**
 * Form media (`/api/v1/metadata`, docs/forms.md "Form media and the OpenRosa manifest"): readonly
 * and above list and download a form's files, editors and above add and delete them; a form the
 * caller cannot see is 404, too low a role 403.
 */
@Injectable()
export class MetadataService {
  constructor(
    private readonly repo: FormMediaRepository,
    private readonly store: FormMediaStore,
    private readonly forms: FormsRepository,
    private readonly access: FormAccessService,
    private readonly config: CollectConfig,
  ) {}

  /**
   * The checks of an upload that need no file bytes, run when the file part begins
   * (readMultipartForm's beforeFile): the fields, the name the file will have and the caller's
   * role, so that a caller who may not add media never makes the server read the file
   * (docs/security.md, "Bounded work for anonymous and unauthorised callers"). The fields must
   * come before `data_file`, as browsers and HTTP libraries send them.
   */
  async checkUpload(user: AuthenticatedUser, fields: Record<string, string>, file: { field: string; filename: string }): Promise<FormEntity> {
    if (fields.xform === undefined) throw new FieldValidationError({ xform: ['A form id, sent before data_file.'] });
    const input = await validateInput(CreateMetadataDto, fields);
    if (file.field === 'data_file') this.nameOf(input, file.filename);
    return (await this.access.requireRole(user, input.xform, MIN_ROLE.editSubmissions)).form;
  }

  /** `checked`: the form checkUpload allowed when the file part began (a form without a file part is checked here). */
  async create(user: AuthenticatedUser, upload: MultipartForm, checked?: FormEntity): Promise<MetadataBody> {
    const input = await validateInput(CreateMetadataDto, upload.fields);
    const file = upload.files.data_file;
    if (!file) throw new FieldValidationError({ data_file: ['No file was submitted.'] });
    const name = this.nameOf(input, file.filename);
    const form = checked?.id === input.xform ? checked : (await this.access.requireRole(user, input.xform, MIN_ROLE.editSubmissions)).form;
    const owner = (await this.forms.findOwners([form.ownerId])).get(form.ownerId) ?? String(form.ownerId);
    return this.present(await this.store.add({ formId: form.id, ownerUsername: owner }, name, file.data));
  }

  /** The name the file gets (data_value, else the upload's file name), under the file-name rule whichever it is. */
  private nameOf(input: CreateMetadataDto, filename: string): string {
    const name = input.data_value ?? filename;
    if (!name) throw new FieldValidationError({ data_value: ['Name the file (data_value), or send data_file with a file name.'] });
    const problem = mediaNameProblem(name);
    if (problem) throw new FieldValidationError({ [input.data_value === undefined ? 'data_file' : 'data_value']: [problem] });
    return name;
  }

  async list(user: AuthenticatedUser, xform: number | undefined): Promise<MetadataBody[]> {
    const formIds = xform === undefined ? await this.access.visibleFormIds(user) : [(await this.access.requireRole(user, xform, MIN_ROLE.view)).form.id];
    return (await this.repo.ofForms(formIds)).map((row) => this.present(row));
  }

  async get(user: AuthenticatedUser, pk: string): Promise<MetadataBody> {
    return this.present((await this.find(user, pk, MIN_ROLE.view)).row);
  }

  async delete(user: AuthenticatedUser, pk: string): Promise<void> {
    const { row } = await this.find(user, pk, MIN_ROLE.view);
    await this.access.requireRole(user, row.formId, MIN_ROLE.editSubmissions);
    await this.store.remove(row);
  }

  /** A form's media files (the manifest), for a caller who may read the form. */
  async ofForm(form: FormEntity): Promise<FormMediaEntity[]> {
    return this.repo.ofForms([form.id]);
  }

  /** One media file of the form (xformsMedia), 404 when the form has no such file. */
  async fileOf(form: FormEntity, mediaId: string): Promise<FormMediaEntity> {
    const row = /^\d{1,10}$/.test(mediaId) ? await this.repo.find(Number(mediaId)) : null;
    if (!row || row.formId !== form.id) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    return row;
  }

  /** The record and the caller's access to its form: 404 when either is not visible. */
  private async find(user: AuthenticatedUser, pk: string, minimum: (typeof MIN_ROLE)[keyof typeof MIN_ROLE]): Promise<{ row: FormMediaEntity }> {
    const row = /^\d{1,10}$/.test(pk) ? await this.repo.find(Number(pk)) : null;
    if (!row || !(await this.access.access(user, row.formId))) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    await this.access.requireRole(user, row.formId, minimum);
    return { row };
  }

  present(row: FormMediaEntity): MetadataBody {
    const base = this.config.PUBLIC_BASE_URL;
    return {
      id: row.id,
      url: `${base}/api/v1/metadata/${row.id}`,
      xform: row.formId,
      data_type: row.dataType,
      data_value: row.dataValue,
      data_file: row.dataValue,
      data_file_type: row.dataFileType,
      file_hash: row.fileHash,
      size: row.size,
      media_url: `${base}/xformsMedia/${row.formId}/${row.id}`,
      date_created: row.dateCreated.toISOString(),
    };
  }
}
