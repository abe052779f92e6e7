import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Strategy } from 'passport-custom';
import { loadCollectConfig } from '../config/collect-config.js';
import { AuthGuard } from './auth.guard.js';
import { AuthThrottleService } from './auth-throttle.service.js';
import type { AuthenticatedUser } from './authenticated-user.js';
import { RequireAuth, RequireSuperuser, SkipAuth } from './require-auth.decorator.js';

const alice: AuthenticatedUser = { id: 1, username: 'alice', isSuperuser: false, scheme: 'token' };
const root: AuthenticatedUser = { id: 2, username: 'root', isSuperuser: true, scheme: 'token' };

/** A passport strategy that accepts `Token alice|root|readonly`, refuses anything else. */
function tokenStrategy() {
  const caller = (req: unknown): AuthenticatedUser | false => {
    const key = (req as { authCredentials: string }).authCredentials;
    if (key === 'alice') return alice;
    if (key === 'root') return root;
    if (key === 'readonly') return { ...alice, scheme: 'bearer', scopes: ['read'] };
    if (key === 'readwrite') return { ...alice, scheme: 'bearer', scopes: ['read', 'write', 'groups'] };
    return false;
  };
  // `validate`: what the guard calls for Token and TempToken (as @nestjs/passport's strategies have it).
  return Object.assign(new Strategy((req, done) => done(null, caller(req))), { validate: async (req: unknown) => caller(req) });
}

function context(handler: object, headers: Record<string, string> = {}, method = 'GET') {
  const req: Record<string, unknown> = { headers, method };
  const ctx = {
    getType: () => 'http',
    getHandler: () => handler,
    getClass: () => class {},
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
  return { ctx, req };
}

function handler(...decorators: ClassDecorator[]): object {
  const fn = function h() {};
  for (const d of decorators) d(fn);
  return fn;
}

describe('AuthGuard', () => {
  let sut: AuthGuard;

  beforeEach(() => {
    // Rate limits off: the throttle then counts nothing in Redis (auth-throttle.e2e.ts covers it).
    const config = loadCollectConfig({ NODE_ENV: 'test', RATE_LIMIT_ENABLED: 'false' });
    const s = tokenStrategy();
    sut = new AuthGuard(new Reflector(), config, s as never, s as never, s as never, s as never, new AuthThrottleService(config));
  });

  it('lets anonymous callers through unmarked handlers and sets request.user with credentials', async () => {
    const open = handler();
    await expect(sut.canActivate(context(open).ctx)).resolves.toBe(true);
    const { ctx, req } = context(open, { authorization: 'Token alice' });
    await sut.canActivate(ctx);
    expect(req.user).toEqual(alice);
  });

  it('answers 401 for bad credentials even on an unmarked handler', async () => {
    await expect(sut.canActivate(context(handler(), { authorization: 'Token nope' }).ctx)).rejects.toMatchObject({ status: 401 });
  });

  it('@RequireAuth: 401 with WWW-Authenticate without a user', async () => {
    const err = await sut.canActivate(context(handler(RequireAuth())).ctx).catch((e) => e);
    expect(err.getStatus()).toBe(401);
    expect(err.headers['WWW-Authenticate']).toBe('Basic realm="api"');
  });

  it('@RequireAuth({schemes}): another scheme counts as no credentials', async () => {
    const err = await sut.canActivate(context(handler(RequireAuth({ schemes: ['basic'] })), { authorization: 'Token alice' }).ctx).catch((e) => e);
    expect(err.getStatus()).toBe(401);
  });

  it('@RequireSuperuser: 403 for a user, through for an admin', async () => {
    const h = handler(RequireSuperuser());
    await expect(sut.canActivate(context(h, { authorization: 'Token alice' }).ctx)).rejects.toMatchObject({ status: 403 });
    await expect(sut.canActivate(context(h, { authorization: 'Token root' }).ctx)).resolves.toBe(true);
  });

  it('Bearer scopes: read allows GET, not POST', async () => {
    const h = handler(RequireAuth());
    await expect(sut.canActivate(context(h, { authorization: 'Token readonly' }).ctx)).resolves.toBe(true);
    await expect(sut.canActivate(context(h, { authorization: 'Token readonly' }, 'POST').ctx)).rejects.toMatchObject({ status: 403 });
  });

  it('@RequireAuth({issuesCredentials}): 403 for any Bearer token, whatever its scopes; other schemes through', async () => {
    const h = handler(RequireAuth({ issuesCredentials: true }));
    await expect(sut.canActivate(context(h, { authorization: 'Token readonly' }).ctx)).rejects.toMatchObject({ status: 403 });
    await expect(sut.canActivate(context(h, { authorization: 'Token readwrite' }).ctx)).rejects.toMatchObject({ status: 403 });
    await expect(sut.canActivate(context(h, { authorization: 'Token alice' }).ctx)).resolves.toBe(true);
  });

  it('@SkipAuth leaves the header alone', async () => {
    const { ctx, req } = context(handler(SkipAuth(), RequireAuth()), { authorization: 'Token nope' });
    await expect(sut.canActivate(ctx)).resolves.toBe(true);
    expect(req.user).toBeUndefined();
  });
});
