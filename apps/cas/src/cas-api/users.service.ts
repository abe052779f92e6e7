import { HttpException, HttpStatus, Injectable, NotFoundException } from '@nestjs/common';
import { FieldValidationError, type CasUser, type CasUserPage, type FieldErrors } from '@collect/contracts';
import type { AccountEntity } from '../accounts/account.entity.js';
import { UserSearchRepository } from './user-search.repository.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const MAX_TEXT = 254;

export type RawQuery = Record<string, unknown>;

interface ParsedQuery {
  page: number;
  pageSize: number;
  search?: string;
  username?: string;
  email?: string;
}

/** The user search of cas-api (decisions.md §Central authentication service). */
@Injectable()
export class UsersService {
  constructor(private readonly users: UserSearchRepository) {}

  /**
   * One page of matching users. `baseUrl` is the absolute URL of the listing (no query); the
   * `next`/`previous` links keep the caller's filters.
   */
  async search(query: RawQuery, baseUrl: string): Promise<CasUserPage> {
    const q = parseQuery(query);
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

/** Validates the query string; every bad parameter is reported at once as `{"<param>": ["..."]}`. */
export function parseQuery(query: RawQuery): ParsedQuery {
  const errors: FieldErrors = {};
  const text = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      errors[name] = ['Give this parameter once, as text.'];
      return undefined;
    }
    if (v.length > MAX_TEXT) {
      errors[name] = [`Ensure this value has at most ${MAX_TEXT} characters.`];
      return undefined;
    }
    return v;
  };
  const positive = (name: string, fallback: number): number => {
    const v = text(name);
    if (v === undefined || v === '') return fallback;
    if (!/^\d{1,9}$/.test(v) || Number(v) < 1) {
      errors[name] = ['A valid positive integer is required.'];
      return fallback;
    }
    return Number(v);
  };
  const page = positive('page', 1);
  // Larger sizes are clamped to the maximum, as DRF's max_page_size does.
  const pageSize = Math.min(positive('page_size', DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE);
  const search = text('search')?.trim() || undefined;
  const username = text('username');
  const email = text('email');
  if (Object.keys(errors).length > 0) throw new FieldValidationError(errors);
  return { page, pageSize, search, username, email };
}
