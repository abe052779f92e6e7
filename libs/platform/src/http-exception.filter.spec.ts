import { closeSync, openSync, writeSync } from 'node:fs';
import { BadRequestException, NotFoundException } from '@nestjs/common';
import { HttpErrorFilter } from './http-exception.filter.js';
import { TooManyRequestsError, UnauthorizedError } from '@collect/contracts';

describe('HttpErrorFilter', () => {
  const sut = new HttpErrorFilter();

  it('maps Nest 404 to the shared detail', () => {
    expect(sut.toResponse(new NotFoundException('Cannot GET /x')).body).toEqual({ detail: 'Not found.' });
  });

  it('keeps field errors of a 400 as an object of lists', () => {
    const res = sut.toResponse(new BadRequestException({ name: ['This field is required.'] }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ name: ['This field is required.'] });
  });

  it('keeps lists of messages beside detail (a conversion failure) and drops anything else', () => {
    const res = sut.toResponse(new BadRequestException({ detail: 'The XLSForm has errors.', errors: ['[row : 3] x'], warnings: [], statusCode: 400, extra: { a: 1 }, mixed: ['a', 2] }));
    expect(res.body).toEqual({ detail: 'The XLSForm has errors.', errors: ['[row : 3] x'], warnings: [] });
  });

  it('sends WWW-Authenticate on 401 and Retry-After on 429', () => {
    expect(sut.toResponse(new UnauthorizedError('Invalid token.', 'Token')).headers).toMatchObject({ 'WWW-Authenticate': expect.stringContaining('Token') });
    expect(sut.toResponse(new TooManyRequestsError('Slow down.', 7)).headers).toMatchObject({ 'Retry-After': '7' });
  });

  it('hides unknown errors behind an error id', () => {
    const res = sut.toResponse(new Error('db password is hunter2'));
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    expect(res.body.error_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 503 with Retry-After when the database could not do the work now, 500 for any other database error', () => {
    const pg = (code: string, message = 'x') => Object.assign(new Error(message), { code, severity: 'ERROR' });
    // TypeORM's QueryFailedError keeps the driver's error beside the code it copies.
    const wrapped = (driverError: Error) => Object.assign(new Error(driverError.message), { driverError });
    for (const transient of [pg('40P01'), pg('40001'), pg('57P01'), pg('53300'), pg('08006'), wrapped(pg('55P03')), new Error('timeout exceeded when trying to connect'), wrapped(new Error('Connection terminated unexpectedly'))]) {
      const res = sut.toResponse(transient);
      expect(res).toMatchObject({ status: 503, headers: { 'Retry-After': '1' }, body: { detail: 'The database is busy; try again shortly.' } });
      expect(res.body.error_id).toMatch(/^[0-9a-f-]{36}$/);
    }
    for (const defect of [pg('23505', 'duplicate key value'), pg('42P01'), wrapped(pg('22P02'))]) {
      expect(sut.toResponse(defect).status).toBe(500);
    }
  });

  it('answers 507 with Retry-After when the storage is full or over quota (a kernel ENOSPC, also wrapped), 500 for other file errors', () => {
    let enospc: unknown;
    try {
      // A real ENOSPC from the kernel: /dev/full refuses every write.
      const fd = openSync('/dev/full', 'w');
      try {
        writeSync(fd, Buffer.from('x'));
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      enospc = err;
    }
    expect((enospc as NodeJS.ErrnoException).code).toBe('ENOSPC');
    const quota = Object.assign(new Error('EDQUOT: disk quota exceeded, write'), { code: 'EDQUOT' });
    for (const full of [enospc, quota, new Error('storing the photo failed', { cause: enospc })]) {
      const res = sut.toResponse(full);
      expect(res).toMatchObject({ status: 507, headers: { 'Retry-After': '60' }, body: { detail: 'The server has no room left to store this; nothing of it was kept. Send it again later.' } });
      expect(res.body.error_id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(sut.toResponse(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })).status).toBe(500);
  });

  it('answers 503 with Retry-After when no file handle is left (EMFILE, ENFILE, also wrapped), without the path in the answer', () => {
    // What Node throws at the process's limit (`ulimit -n 64`, then openSync until it fails).
    const emfile = Object.assign(new Error("EMFILE: too many open files, open '/data/media/alice/attachments/1_x/photo.jpg'"), { code: 'EMFILE', errno: -24, syscall: 'open' });
    const enfile = Object.assign(new Error('ENFILE: file table overflow, open'), { code: 'ENFILE', errno: -23, syscall: 'open' });
    for (const out of [emfile, enfile, new Error('reading the part failed', { cause: emfile })]) {
      const res = sut.toResponse(out);
      expect(res).toMatchObject({ status: 503, headers: { 'Retry-After': '1' }, body: { detail: 'The server is busy; try again shortly.' } });
      expect(JSON.stringify(res.body)).not.toContain('/data/media');
    }
  });

  it('maps body-parser errors to 4xx', () => {
    const err = Object.assign(new Error('Unexpected end'), { status: 400, type: 'entity.parse.failed' });
    expect(sut.toResponse(err)).toMatchObject({ status: 400, body: { detail: 'JSON parse error.' } });
  });
});

describe('HttpErrorFilter on OAuth paths', () => {
  it('answers a body-parser refusal at /o/token in the RFC 6749 shape (fuzzing found {"detail"} there)', () => {
    const sut = new HttpErrorFilter({ oauthPaths: ['/o/token'] });
    const sent: { status?: number; body?: unknown } = {};
    const res = { status: (s: number) => ((sent.status = s), res), setHeader: () => undefined, json: (b: unknown) => (sent.body = b), end: () => undefined };
    const host = { switchToHttp: () => ({ getResponse: () => res, getRequest: () => ({ originalUrl: '/o/token?x=1' }) }) };
    const err = Object.assign(new Error('Unexpected end'), { status: 400, type: 'encoding.unsupported' });
    sut.catch(err, host as never);
    expect(sent).toEqual({ status: 400, body: { error: 'invalid_request', error_description: 'Unsupported content encoding.' } });
    const other = { switchToHttp: () => ({ getResponse: () => res, getRequest: () => ({ originalUrl: '/api/v1/forms' }) }) };
    sut.catch(err, other as never);
    expect(sent.body).toEqual({ detail: 'Unsupported content encoding.' });
  });
});

describe('containsNul', () => {
  it('finds NUL in keys and values at any depth without recursion', async () => {
    const { containsNul } = await import('./nul-guard.js');
    let deep: unknown = 'a\u0000b';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(containsNul(deep)).toBe(true);
    expect(containsNul({ ['k\u0000']: 1 })).toBe(true);
    expect(containsNul({ a: ['x', { b: 'y' }], n: 1, z: null })).toBe(false);
    // Strings met inside objects and lists, and a bare string.
    expect(containsNul({ a: { b: 'c\u0000' } })).toBe(true);
    expect(containsNul(['x', 'y\u0000'])).toBe(true);
    expect(containsNul('\u0000')).toBe(true);
    expect(containsNul('ok')).toBe(false);
  });

  it('walks objects without a prototype (query strings) and enumerable inherited keys too', async () => {
    const { containsNul } = await import('./nul-guard.js');
    const query = Object.assign(Object.create(null) as Record<string, unknown>, { q: 'x', nested: { ['k\u0000']: 'v' } });
    expect(containsNul(query)).toBe(true);
    expect(containsNul(Object.assign(Object.create(null) as Record<string, unknown>, { q: 'x' }))).toBe(false);
    // for-in also meets enumerable inherited keys: stricter than own keys, and parsed bodies have none.
    expect(containsNul(Object.create({ inherited: 'a\u0000' }) as object)).toBe(true);
  });
});
