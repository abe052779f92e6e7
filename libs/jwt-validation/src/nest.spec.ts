import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { HttpErrorFilter } from '@collect/platform';
import { AccessToken, BearerAuth, extractBearerToken, JwtValidationModule } from './nest.js';
import { LocalIssuer } from './testing/local-issuer.js';
import type { VerifiedAccessToken } from './validator.js';

@Controller('things')
@BearerAuth('things')
class ThingsController {
  @Get()
  list(@AccessToken() token: VerifiedAccessToken) {
    return { sub: token.subject, scopes: token.scopes };
  }

  @Get('admin')
  @BearerAuth('things', 'things.admin')
  admin() {
    return { ok: true };
  }
}

describe('Nest guard (BearerAuth)', () => {
  let issuer: LocalIssuer;
  let app: INestApplication;

  beforeAll(async () => {
    issuer = await LocalIssuer.start();
    @Module({ imports: [JwtValidationModule.forRootAsync({ useFactory: () => ({ issuer: issuer.issuer, audience: 'cas-api', unavailableRetryMs: 0 }) })], controllers: [ThingsController] })
    class TestModule {}
    const moduleRef = await Test.createTestingModule({ imports: [TestModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalFilters(new HttpErrorFilter());
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    await issuer?.close();
  });

  it('401 with WWW-Authenticate: Bearer and no error code when no credentials are sent', async () => {
    const res = await request(app.getHttpServer()).get('/things').expect(401);
    expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
  });

  it('401 invalid_request for another scheme', async () => {
    const res = await request(app.getHttpServer()).get('/things').set('Authorization', 'Basic Zm9vOmJhcg==').expect(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_request"/);
  });

  it('401 invalid_token naming the failed rule', async () => {
    const expired = issuer.sign({ scope: 'things', exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 });
    const res = await request(app.getHttpServer()).get('/things').set('Authorization', `Bearer ${expired}`).expect(401);
    expect(res.body).toEqual({ detail: 'Token has expired.' });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token", error_description="Token has expired."');
    const wrongAud = issuer.sign({ scope: 'things' }, { audience: 'collect-api' });
    const res2 = await request(app.getHttpServer()).get('/things').set('Authorization', `Bearer ${wrongAud}`).expect(401);
    expect(res2.body.detail).toMatch(/audience/);
  });

  it('403 insufficient_scope when a required scope is missing', async () => {
    const token = issuer.sign({ scope: 'things' });
    const res = await request(app.getHttpServer()).get('/things/admin').set('Authorization', `Bearer ${token}`).expect(403);
    expect(res.body).toEqual({ detail: 'Token lacks the required scope: things.admin.' });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="insufficient_scope".*scope="things things.admin"/);
  });

  it('200 with the verified token for the handler', async () => {
    const token = issuer.sign({ scope: 'things things.admin', sub: 'svc' });
    const res = await request(app.getHttpServer()).get('/things').set('Authorization', `bearer ${token}`).expect(200);
    expect(res.body).toEqual({ sub: 'svc', scopes: ['things', 'things.admin'] });
    await request(app.getHttpServer()).get('/things/admin').set('Authorization', `Bearer ${token}`).expect(200);
  });

  it('extractBearerToken takes only a well-formed Bearer header', () => {
    expect(extractBearerToken('Bearer abc')).toBe('abc');
    expect(extractBearerToken('BEARER abc')).toBe('abc');
    expect(extractBearerToken('Bearer')).toBeUndefined();
    expect(extractBearerToken('Bearer a b')).toBeUndefined();
    expect(extractBearerToken('Token abc')).toBeUndefined();
    expect(extractBearerToken(undefined)).toBeUndefined();
  });
});

describe('Nest guard when the issuer cannot be reached', () => {
  it('503 with Retry-After, not 401, while no keys were ever obtained', async () => {
    const issuer = await LocalIssuer.start();
    issuer.down = true;
    @Module({ imports: [JwtValidationModule.forRoot({ issuer: issuer.issuer, audience: 'cas-api' })], controllers: [ThingsController] })
    class DownModule {}
    const moduleRef = await Test.createTestingModule({ imports: [DownModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalFilters(new HttpErrorFilter());
    await app.init();
    try {
      const res = await request(app.getHttpServer()).get('/things').set('Authorization', `Bearer ${issuer.sign({ scope: 'things' })}`).expect(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body.detail).toMatch(/unavailable/);
    } finally {
      await app.close();
      await issuer.close();
    }
  });
});
