import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { FieldValidationError } from '@collect/contracts';
import { detectMimetype } from '../storage/content-type.js';
import { FILE_STORAGE, safeStorageSegment, type FileStorage } from '../storage/file-storage.js';
import type { FormMediaEntity } from './form-media.entity.js';
import { FormMediaRepository } from './form-media.repository.js';

export const MEDIA_DATA_TYPE = 'media';

/** What a form media file belongs to (the storage path names the owner and the form). */
export interface MediaOwner {
  formId: number;
  ownerUsername: string;
}

/**
 * Stores and removes form media files: bytes in the file storage, a `form_metadata` row with
 * the file's md5 (the manifest's `hash`). No access checks: callers check the role first
 * (MetadataService for the API; FormsService for the itemsets.csv an XLSForm brings).
 */
@Injectable()
export class FormMediaStore {
  private readonly logger = new Logger(FormMediaStore.name);

  constructor(private readonly repo: FormMediaRepository, @Inject(FILE_STORAGE) private readonly storage: FileStorage) {}

  /** Adds a file; 400 on `data_value` when the form already has one of that name. */
  async add(owner: MediaOwner, name: string, data: Buffer): Promise<FormMediaEntity> {
    const mimetype = detectMimetype(data.subarray(0, 16), name);
    const path = `${safeStorageSegment(owner.ownerUsername)}/form-media/${owner.formId}/${randomUUID()}/${safeStorageSegment(name)}`;
    await this.storage.putStream(path, Readable.from([data]), mimetype);
    const row = await this.repo.insertIfAbsent({
      formId: owner.formId, dataType: MEDIA_DATA_TYPE, dataValue: name, dataFile: path, dataFileType: mimetype,
      fileHash: `md5:${createHash('md5').update(data).digest('hex')}`, size: data.length,
    });
    if (!row) {
      await this.removeFile(path);
      throw new FieldValidationError({ data_value: [`This form already has a media file named "${name}"; delete it first.`] });
    }
    return row;
  }

  /** Adds the file, or replaces the one of that name (an XLSForm's itemsets.csv on every upload). */
  async put(owner: MediaOwner, name: string, data: Buffer): Promise<FormMediaEntity> {
    const existing = await this.repo.findByName(owner.formId, MEDIA_DATA_TYPE, name);
    if (existing) await this.remove(existing);
    return this.add(owner, name, data);
  }

  async remove(row: FormMediaEntity): Promise<void> {
    // The row first: once it is gone nothing serves the file, then the bytes.
    if (await this.repo.delete(row.id)) await this.removeFile(row.dataFile);
  }

  private async removeFile(path: string): Promise<void> {
    await this.storage.delete(path).catch((err: unknown) => this.logger.warn({ err, path }, 'could not remove a form media file'));
  }
}
