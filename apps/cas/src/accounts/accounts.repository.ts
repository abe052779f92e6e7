import { Injectable } from '@nestjs/common';
import { DataSource, type Repository } from 'typeorm';
import { AccountEntity } from './account.entity.js';

@Injectable()
export class AccountsRepository {
  private readonly repo: Repository<AccountEntity>;

  constructor(ds: DataSource) {
    this.repo = ds.getRepository(AccountEntity);
  }

  findById(id: string): Promise<AccountEntity | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return Promise.resolve(null); // not a uuid: no query that would fail
    return this.repo.findOneBy({ id });
  }

  findByUsername(username: string): Promise<AccountEntity | null> {
    return this.repo.findOneBy({ username });
  }

  save(account: Partial<AccountEntity>): Promise<AccountEntity> {
    return this.repo.save(this.repo.create(account));
  }
}
