import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type Repository } from 'typeorm';
import { FormMediaEntity } from './form-media.entity.js';

/** Queries on `form_metadata`. */
@Injectable()
export class FormMediaRepository {
  constructor(@InjectRepository(FormMediaEntity) private readonly rows: Repository<FormMediaEntity>) {}

  ofForms(formIds: number[]): Promise<FormMediaEntity[]> {
    if (!formIds.length) return Promise.resolve([]);
    return this.rows.find({ where: { formId: In(formIds) }, order: { id: 'ASC' } });
  }

  find(id: number): Promise<FormMediaEntity | null> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return Promise.resolve(null);
    return this.rows.findOneBy({ id });
  }

  findByName(formId: number, dataType: string, dataValue: string): Promise<FormMediaEntity | null> {
    return this.rows.findOneBy({ formId, dataType, dataValue });
  }

  /** Inserts unless the form already has a file of that name; null then. */
  async insertIfAbsent(row: Omit<FormMediaEntity, 'id' | 'dateCreated'>): Promise<FormMediaEntity | null> {
    const result = await this.rows.createQueryBuilder().insert().into(FormMediaEntity).values(row).orIgnore().returning('id').execute();
    const id = (result.raw as Array<{ id: number }>)[0]?.id;
    return id === undefined ? null : this.rows.findOneByOrFail({ id });
  }

  /** Deletes the row; returns whether it was there (a concurrent delete loses). */
  async delete(id: number): Promise<boolean> {
    return ((await this.rows.delete({ id })).affected ?? 0) > 0;
  }
}
