import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Strategy } from 'passport-custom';
import { UnauthorizedError } from '@collect/contracts';
import { loadCollectConfig } from '../config/collect-config.js';
import { PersonalTokens } from './personal-tokens.js';
import { AuthGuard } from './auth.guard.js';
import { AuthThrottleService } from './auth-throttle.service.js';
import type { AuthenticatedUser } from './authenticated-user.js';
import { RequireAuth, RequireSuperuser, SkipAuth } from './require-auth.decorator.js';
import { AccountClass, SubmitClass } from './scope-class.decorator.js';

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

function context(handler: object, headers: Record<string, string> = {}, method = 'GET', extra: Record<string, unknown> = {}) {
  const req: Record<string, unknown> = { headers, method, ...extra };
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
    sut = new AuthGuard(new Reflector(), config, s as never, s as never, s as never, s as never, new AuthThrottleService(config), new PersonalTokens());
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

/**
 * Basic and Bearer: the guard refuses what passport-http and passport-http-bearer refused before
 * their verify callback (auth-header.ts), calls the strategy's `validate` otherwise, and counts
 * a failure for the address unless Basic's password check ran (PasswordLoginService counts that).
 */
describe('AuthGuard: Basic and Bearer through their validate', () => {
  class CountingThrottle extends AuthThrottleService {
    counted = 0;
    override async failedOther(): Promise<void> {
      this.counted++;
    }
  }
  const b64 = (pair: string) => Buffer.from(pair).toString('base64');
  const checked: string[] = [];
  const basic = {
    validate: async (_req: unknown, userid: string): Promise<AuthenticatedUser> => {
      checked.push(`basic:${userid}`);
      if (userid === 'alice') return { ...alice, scheme: 'basic' };
      throw new UnauthorizedError('Invalid username/password.', 'Basic realm="api"');
    },
  };
  const bearer = {
    validate: async (token: string): Promise<AuthenticatedUser> => {
      checked.push(`bearer:${token}`);
      if (token === 'good') return { ...alice, scheme: 'bearer', scopes: ['read'] };
      throw new UnauthorizedError('Invalid token.', 'Bearer');
    },
  };
  let sut: AuthGuard;
  let throttle: CountingThrottle;

  function call({ headers, method, ...extra }: { headers: Record<string, string>; method?: string; [field: string]: unknown }, h: object = handler()) {
    const { ctx, req } = context(h, headers, method, extra);
    return sut.canActivate(ctx).then(
      () => ({ user: req.user as AuthenticatedUser | undefined }),
      (err: UnauthorizedError) => ({ status: err.getStatus(), detail: (err.getResponse() as { detail: string }).detail, challenge: err.headers['WWW-Authenticate'] }),
    );
  }

  beforeEach(() => {
    const config = loadCollectConfig({ NODE_ENV: 'test', RATE_LIMIT_ENABLED: 'false' });
    const s = tokenStrategy();
    throttle = new CountingThrottle(config);
    checked.length = 0;
    sut = new AuthGuard(new Reflector(), config, basic as never, s as never, s as never, bearer as never, throttle, new PersonalTokens());
  });

  it('Basic: the user id before the first colon goes to validate; its refusal is not counted again', async () => {
    expect(await call({ headers: { authorization: `Basic ${b64('alice:pw:with:colons')}` } })).toEqual({ user: { ...alice, scheme: 'basic' } });
    expect(await call({ headers: { authorization: `Basic ${b64('bob:wrong')}` } })).toEqual({ status: 401, detail: 'Invalid username/password.', challenge: 'Basic realm="api"' });
    expect(checked).toEqual(['basic:alice', 'basic:bob']);
    expect(throttle.counted).toBe(0);
  });

  it('Basic refused before the password check, and counted: no colon, empty user or password, not one space', async () => {
    const notBase64 = { status: 401, detail: 'Invalid basic header. Credentials not correctly base64 encoded.', challenge: 'Basic realm="api"' };
    const empty = { status: 401, detail: 'Invalid username/password.', challenge: 'Basic realm="api"' };
    expect(await call({ headers: { authorization: `Basic ${b64('alice')}` } })).toEqual(notBase64);
    expect(await call({ headers: { authorization: `Basic ${b64('alice:')}` } })).toEqual(empty);
    expect(await call({ headers: { authorization: `Basic ${b64(':pw')}` } })).toEqual(empty);
    // passport-http keeps only the piece between the first and second colon as its password.
    expect(await call({ headers: { authorization: `Basic ${b64('alice::pw')}` } })).toEqual(empty);
    expect(await call({ headers: { authorization: `Basic\t${b64('alice:pw')}` } })).toEqual(notBase64);
    expect(await call({ headers: { authorization: 'Basic !!!' } })).toEqual(notBase64);
    expect(checked).toEqual([]);
    expect(throttle.counted).toBe(6);
  });

  it('Bearer: the header token goes to validate; scopes apply; a wrong token is counted', async () => {
    const h = handler(RequireAuth());
    expect(await call({ headers: { authorization: 'Bearer good' } }, h)).toEqual({ user: { ...alice, scheme: 'bearer', scopes: ['read'] } });
    expect(await call({ headers: { authorization: 'Bearer good' }, method: 'POST' }, h)).toMatchObject({ status: 403 });
    expect(await call({ headers: { authorization: 'Bearer nope' } })).toEqual({ status: 401, detail: 'Invalid token.', challenge: 'Bearer' });
    expect(checked).toEqual(['bearer:good', 'bearer:good', 'bearer:nope']);
    expect(throttle.counted).toBe(1);
  });

  it('Bearer with an access_token in the query or body beside the header: refused unchecked, counted', async () => {
    const twice = { status: 401, detail: 'Invalid token header. Send the access token in the Authorization header only.', challenge: 'Bearer' };
    expect(await call({ headers: { authorization: 'Bearer good' }, query: { access_token: 'good' } })).toEqual(twice);
    expect(await call({ headers: { authorization: 'Bearer good' }, body: { access_token: 'other' } })).toEqual(twice);
    expect(await call({ headers: { authorization: 'Bearer\tgood' } })).toEqual(twice);
    expect(checked).toEqual([]);
    expect(throttle.counted).toBe(3);
  });
});

describe('AuthGuard with personal access tokens (scope classes)', () => {
  let sut: AuthGuard;
  const asked: string[] = [];

  beforeEach(() => {
    const config = loadCollectConfig({ NODE_ENV: 'test', RATE_LIMIT_ENABLED: 'false' });
    const s = tokenStrategy();
    const personal = new PersonalTokens();
    // `cpat_<scope>` is a live token of alice's with that one scope; anything else is unknown.
    personal.register({
      verify: async (token, scheme) => {
        asked.push(token);
        const scope = token.slice('cpat_'.length);
        return ['read', 'submit', 'write'].includes(scope)
          ? { ...alice, scheme, scopes: [scope], personalToken: { id: 1, scopes: [scope as 'read'], forms: null } }
          : null;
      },
    });
    sut = new AuthGuard(new Reflector(), config, s as never, s as never, s as never, s as never, new AuthThrottleService(config), personal);
  });

  const status = (decorators: ClassDecorator[], method: string, authorization: string) =>
    sut.canActivate(context(handler(RequireAuth(), ...decorators), { authorization }, method).ctx).then(() => 200, (e) => e.getStatus() as number);

  it('checks each scope against the route’s class: by method, submit-class, account-class', async () => {
    const got: Record<string, number[]> = {};
    for (const [name, decorators] of [['default', []], ['submit', [SubmitClass()]], ['account', [AccountClass()]]] as const) {
      for (const method of ['GET', 'POST']) {
        got[`${name} ${method}`] = [];
        for (const scope of ['read', 'submit', 'write']) got[`${name} ${method}`].push(await status([...decorators], method, `Token cpat_${scope}`));
      }
    }
    expect(got).toEqual({
      'default GET': [200, 403, 200],
      'default POST': [403, 403, 200],
      'submit GET': [200, 200, 200],
      'submit POST': [403, 200, 200],
      'account GET': [403, 403, 403],
      'account POST': [403, 403, 403],
    });
  });

  it('sends a `cpat_` credential to the personal-token check only, as Token or Bearer; an unknown one is a 401 naming the scheme', async () => {
    asked.length = 0;
    const { ctx, req } = context(handler(RequireAuth()), { authorization: 'Bearer cpat_read' });
    await sut.canActivate(ctx);
    expect(req.user).toMatchObject({ id: alice.id, scheme: 'bearer', personalToken: { scopes: ['read'] } });
    for (const scheme of ['Token', 'Bearer']) {
      const err = await sut.canActivate(context(handler(RequireAuth()), { authorization: `${scheme} cpat_nope` }).ctx).catch((e) => e);
      expect([err.getStatus(), err.headers['WWW-Authenticate']]).toEqual([401, scheme]);
    }
    expect(asked).toEqual(['cpat_read', 'cpat_nope', 'cpat_nope']);
  });
});
