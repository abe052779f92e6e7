import request from 'supertest';
import { DataSource } from 'typeorm';
import { validateInput } from '@collect/platform';
import { UserSearchQueryDto } from '../src/cas-api/users.dto.js';
import { UsersService } from '../src/cas-api/users.service.js';
import { startTestCasApp, type TestCasApp } from './test-app.js';

/**
 * Search, filters and pagination of cas-api on the real database, called through the query's
 * validation (UserSearchQueryDto, as the global pipe runs it) and the service (the HTTP path with
 * real CAS tokens is in cas-api.e2e.ts), plus the answers without a usable token.
 */
describe('cas-api user search (service on real PostgreSQL)', () => {
  let sut: TestCasApp;
  let users: { search(query: Record<string, unknown>, url: string): ReturnType<UsersService['search']>; get: UsersService['get'] };
  const base = 'http://cas.test/api/users';

  beforeAll(async () => {
    sut = await startTestCasApp();
    const ds = sut.app.get(DataSource);
    const rows = [
      { username: 'alice', email: 'alice@example.org', given_name: 'Alice', family_name: 'Liddell', enabled: true },
      { username: 'bob', email: 'Bob.Builder@Example.org', given_name: 'Bob', family_name: 'Builder', enabled: false },
      { username: 'carol_x', email: 'carol@other.net', given_name: 'Carol', family_name: 'Percent%Sign', enabled: true },
      ...Array.from({ length: 45 }, (_, i) => ({ username: `member${String(i).padStart(2, '0')}`, email: `m${i}@bulk.example`, given_name: 'Bulk', family_name: `Member ${i}`, enabled: true })),
    ];
    for (const r of rows) {
      await ds.query(`INSERT INTO cas_accounts (username, email, given_name, family_name, enabled) VALUES ($1, $2, $3, $4, $5)`, [r.username, r.email, r.given_name, r.family_name, r.enabled]);
    }
    const service = sut.app.get(UsersService);
    users = { search: async (query: Record<string, unknown>, url: string) => service.search(await validateInput(UserSearchQueryDto, query), url), get: (id: string) => service.get(id) };
  });
  afterAll(() => sut?.close());

  it('matches username, email, given, family and full name case-insensitively', async () => {
    expect((await users.search({ search: 'ALI' }, base)).results.map((u) => u.username)).toEqual(['alice']);
    expect((await users.search({ search: 'builder@example' }, base)).results.map((u) => u.username)).toEqual(['bob']);
    expect((await users.search({ search: 'carol' }, base)).results.map((u) => u.username)).toEqual(['carol_x']);
    expect((await users.search({ search: 'liddell' }, base)).results.map((u) => u.username)).toEqual(['alice']);
    expect((await users.search({ search: 'Alice Lid' }, base)).results.map((u) => u.username)).toEqual(['alice']);
    expect((await users.search({ search: 'nobody-like-this' }, base))).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('treats % and _ in the search text literally', async () => {
    expect((await users.search({ search: '%' }, base)).results.map((u) => u.username)).toEqual(['carol_x']);
    expect((await users.search({ search: 'l_x' }, base)).results.map((u) => u.username)).toEqual(['carol_x']);
  });

  it('answers the docs/api-conventions.md shape, including disabled users', async () => {
    const page = await users.search({ username: 'BOB' }, base);
    expect(page.count).toBe(1);
    expect(page.results[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: 'bob',
      email: 'Bob.Builder@Example.org',
      given_name: 'Bob',
      family_name: 'Builder',
      name: 'Bob Builder',
      enabled: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(await users.get(page.results[0].id)).toEqual(page.results[0]);
  });

  it('filters exactly (case-insensitive) by username and email, combinable with search', async () => {
    expect((await users.search({ email: 'bob.builder@example.org' }, base)).count).toBe(1);
    expect((await users.search({ email: 'builder@example.org' }, base)).count).toBe(0);
    expect((await users.search({ username: 'alic' }, base)).count).toBe(0);
    expect((await users.search({ username: 'alice', search: 'bob' }, base)).count).toBe(0);
  });

  it('pages with default size 20, keeps filters in next/previous, and 404s past the end', async () => {
    const first = await users.search({ search: 'bulk' }, base);
    expect(first.count).toBe(45);
    expect(first.results).toHaveLength(20);
    expect(first.previous).toBeNull();
    expect(first.next).toBe(`${base}?search=bulk&page=2&page_size=20`);
    const third = await users.search({ search: 'bulk', page: '3' }, base);
    expect(third.results).toHaveLength(5);
    expect(third.next).toBeNull();
    expect(third.previous).toBe(`${base}?search=bulk&page=2&page_size=20`);
    const all = [...first.results, ...(await users.search({ search: 'bulk', page: '2' }, base)).results, ...third.results];
    expect(new Set(all.map((u) => u.id)).size).toBe(45);
    expect(all.map((u) => u.username)).toEqual([...all.map((u) => u.username)].sort());
    await expect(users.search({ search: 'bulk', page: '4' }, base)).rejects.toMatchObject({ status: 404, response: { detail: 'Invalid page.' } });
  });

  it('clamps page_size to 100 and rejects bad page / page_size / repeated parameters with 400 field errors', async () => {
    expect((await users.search({ page_size: '1000' }, base)).results).toHaveLength(48);
    expect((await users.search({ page_size: '1000' }, base)).next).toBeNull();
    await expect(users.search({ page: '0', page_size: 'ten' }, base)).rejects.toMatchObject({
      status: 400,
      response: { page: ['A valid positive integer is required.'], page_size: ['A valid positive integer is required.'] },
    });
    await expect(users.search({ search: ['a', 'b'] }, base)).rejects.toMatchObject({ status: 400, response: { search: ['Give this parameter once, as text.'] } });
    await expect(users.search({ search: 'x'.repeat(300) }, base)).rejects.toMatchObject({ status: 400 });
  });

  it('answers 404 for an unknown or malformed id', async () => {
    await expect(users.get('00000000-0000-0000-0000-000000000000')).rejects.toMatchObject({ status: 404 });
    await expect(users.get('not-a-uuid')).rejects.toMatchObject({ status: 404 });
  });

  it('has the trigram indexes the search relies on (bench/cas-user-search measures them at 100k users)', async () => {
    const ds = sut.app.get(DataSource);
    const idx: Array<{ indexname: string }> = await ds.query(`SELECT indexname FROM pg_indexes WHERE tablename = 'cas_accounts' AND indexname LIKE '%trgm'`);
    expect(idx.map((r) => r.indexname).sort()).toEqual(['cas_accounts_email_trgm', 'cas_accounts_family_name_trgm', 'cas_accounts_full_name_trgm', 'cas_accounts_given_name_trgm', 'cas_accounts_username_trgm']);
  });

  describe('over HTTP without a usable token', () => {
    it('401 with WWW-Authenticate: Bearer for no token, another scheme and a malformed token', async () => {
      const http = request(sut.app.getHttpServer());
      for (const path of ['/api/users', '/api/users?search=alice', '/api/users/00000000-0000-0000-0000-000000000000']) {
        const res = await http.get(path).expect(401);
        expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      const basic = await http.get('/api/users').set('Authorization', 'Basic ZGVtbzpkZW1vLXBhc3N3b3Jk').expect(401);
      expect(basic.headers['www-authenticate']).toMatch(/^Bearer .*invalid_request/);
      const garbage = await http.get('/api/users').set('Authorization', 'Bearer not-a-jwt').expect(401);
      expect(garbage.body.detail).toMatch(/not a signed JWT/);
      expect(garbage.headers['www-authenticate']).toMatch(/^Bearer .*invalid_token/);
    });
  });
});
