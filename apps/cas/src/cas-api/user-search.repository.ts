import { Injectable } from '@nestjs/common';
import { Brackets, DataSource, type Repository } from 'typeorm';
import { AccountEntity } from '../accounts/account.entity.js';

export interface UserSearchCriteria {
  /** Case-insensitive substring of username, email, given, family or full name. */
  search?: string;
  /** Exact, case-insensitive. */
  username?: string;
  /** Exact, case-insensitive. */
  email?: string;
  offset: number;
  limit: number;
}

/** Reads accounts for the cas-api search; the indexes are in migration UserSearchIndexes1764000000000. */
@Injectable()
export class UserSearchRepository {
  private readonly repo: Repository<AccountEntity>;

  constructor(ds: DataSource) {
    this.repo = ds.getRepository(AccountEntity);
  }

  async search(criteria: UserSearchCriteria): Promise<{ count: number; accounts: AccountEntity[] }> {
    const qb = this.repo.createQueryBuilder('a');
    if (criteria.search) {
      const pattern = `%${escapeLike(criteria.search)}%`;
      // Each alternative matches one trigram index; the planner ORs the bitmaps.
      qb.andWhere(
        new Brackets((w) =>
          w
            .where('a.username ILIKE :pattern')
            .orWhere('a.email ILIKE :pattern')
            .orWhere('a.given_name ILIKE :pattern')
            .orWhere('a.family_name ILIKE :pattern')
            .orWhere(`(a.given_name || ' ' || a.family_name) ILIKE :pattern`),
        ),
        { pattern },
      );
    }
    if (criteria.username !== undefined) qb.andWhere('lower(a.username) = lower(:username)', { username: criteria.username });
    if (criteria.email !== undefined) qb.andWhere('lower(a.email) = lower(:email)', { email: criteria.email });
    const [accounts, count] = await qb.orderBy('a.username', 'ASC').addOrderBy('a.id', 'ASC').skip(criteria.offset).take(criteria.limit).getManyAndCount();
    return { count, accounts };
  }

  findById(id: string): Promise<AccountEntity | null> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return Promise.resolve(null); // not a uuid: not found, no failing query
    return this.repo.findOneBy({ id });
  }
}

/** `%`, `_` and `\` in the search text are literal characters, not patterns. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
