import { HttpException, HttpStatus, Injectable, NotFoundException } from '@nestjs/common';
import type { CasUser, CasUserPage } from '@collect/contracts';
import type { AccountEntity } from '../accounts/account.entity.js';
import { UserSearchRepository } from './user-search.repository.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The filters and page of a search (UserSearchQueryDto checked them). */
export interface UserSearch {
  search?: string;
  username?: string;
  email?: string;
  page?: number;
  page_size?: number;
}

/** The user search of cas-api (docs/api-conventions.md §Central authentication service). */
@Injectable()
export class UsersService {
  constructor(private readonly users: UserSearchRepository) {}

  /**
   * One page of matching users. `baseUrl` is the absolute URL of the listing (no query); the
   * `next`/`previous` links keep the caller's filters.
   */
  async search(query: UserSearch, baseUrl: string): Promise<CasUserPage> {
    // Larger sizes are clamped to the maximum, as DRF's max_page_size does.
    const q = { ...query, page: query.page ?? 1, pageSize: Math.min(query.page_size ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE) };
    const { count, accounts } = await this.users.search({ search: q.search, username: q.username, email: q.email, offset: (q.page - 1) * q.pageSize, limit: q.pageSize });
    const lastPage = Math.max(1, Math.ceil(count / q.pageSize));
    // DRF's PageNumberPagination answers a page past the end with 404 "Invalid page.".
    if (q.page > lastPage) throw new HttpException({ detail: 'Invalid page.' }, HttpStatus.NOT_FOUND);
    const link = (page: number) => {
      const params = new URLSearchParams();
      if (q.search !== undefined) params.set('search', q.search);
      if (q.username !== undefined) params.set('username', q.username);
      if (q.email !== undefined) params.set('email', q.email);
      params.set('page', String(page));
      params.set('page_size', String(q.pageSize));
      return `${baseUrl}?${params.toString()}`;
    };
    return {
      count,
      next: q.page < lastPage ? link(q.page + 1) : null,
      previous: q.page > 1 ? link(q.page - 1) : null,
      results: accounts.map(toCasUser),
    };
  }

  async get(id: string): Promise<CasUser> {
    const account = await this.users.findById(id);
    if (!account) throw new NotFoundException();
    return toCasUser(account);
  }
}

export function toCasUser(a: AccountEntity): CasUser {
  return {
    id: a.id,
    username: a.username,
    email: a.email,
    given_name: a.givenName,
    family_name: a.familyName,
    name: [a.givenName, a.familyName].filter(Boolean).join(' '),
    enabled: a.enabled,
    created_at: a.createdAt.toISOString(),
  };
}
