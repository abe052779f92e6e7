import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { OAuthApplicationsService } from '../src/oauth2/oauth-applications.service.js';
import { OAuth2Service } from '../src/oauth2/oauth2.service.js';
import { AdminBootstrap } from '../src/users/admin-bootstrap.js';
import { UsersService } from '../src/users/users.service.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { basicHeader, createTestUser, type TestUser } from './test-users.js';

describe('collect-api users and profiles', () => {
  let sut: TestCollectApp;
  let admin: TestUser;

  beforeAll(async () => {
    sut = await startTestCollectApp();
    admin = await createTestUser(sut.app, { username: 'boss', superuser: true });
  });
  afterAll(() => sut.close());

  it('lists the auth resources on the API root with absolute URLs', async () => {
    const res = await request(sut.url).get('/api/v1/').expect(200);
    expect(res.body).toMatchObject({
      user: `${sut.config.PUBLIC_BASE_URL}/api/v1/user`,
      profiles: `${sut.config.PUBLIC_BASE_URL}/api/v1/profiles`,
      'oauth-applications': `${sut.config.PUBLIC_BASE_URL}/api/v1/oauth-applications`,
    });
  });

  it('registers a user who can then log in with Basic and see their tokens', async () => {
    const res = await request(sut.url)
      .post('/api/v1/profiles')
      .send({ username: 'newbie', password: 'correct horse', email: 'newbie@example.org', first_name: 'New', last_name: 'Bie', country: 'ke' })
      .expect(201);
    expect(res.body).toMatchObject({ username: 'newbie', name: 'New Bie', email: 'newbie@example.org', country: 'KE', url: expect.stringMatching(/\/api\/v1\/profiles\/newbie$/) });
    expect(res.body).not.toHaveProperty('password');
    expect(res.body).not.toHaveProperty('api_token');
    const me = await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('newbie', 'correct horse')).expect(200);
    expect(me.body.api_token).toMatch(/^[0-9a-f]{40}$/);
  });

  it('refuses a taken username (case-insensitively) and bad fields with 400 per field', async () => {
    let res = await request(sut.url).post('/api/v1/profiles').send({ username: 'NEWBIE', password: 'another pass', email: 'x@example.org' }).expect(400);
    expect(res.body).toEqual({ username: [expect.stringContaining('already exists')] });
    res = await request(sut.url).post('/api/v1/profiles').send({ username: 'a b', password: 'short', email: 'not-an-email', website: 'ftp://x', country: 'Kenya', require_auth: 'yes' }).expect(400);
    expect(Object.keys(res.body).sort()).toEqual(['country', 'email', 'password', 'require_auth', 'username', 'website']);
    res = await request(sut.url).post('/api/v1/profiles').send({}).expect(400);
    expect(res.body).toEqual({ username: ['This field is required.'], password: ['This field is required.'], email: ['This field is required.'] });
    await request(sut.url).post('/api/v1/profiles').send([1, 2]).expect(400);
    await request(sut.url).post('/api/v1/profiles').send({ username: 12, password: ['x'], email: {} }).expect(400);
    await request(sut.url).post('/api/v1/profiles').send({ username: 'samesame', password: 'samesame', email: 's@example.org' }).expect(400);
  });

  it('shows a profile to anyone, the email only to its owner and admins', async () => {
    const owner = await createTestUser(sut.app, { username: 'viewme' });
    const stranger = await createTestUser(sut.app, { username: 'stranger' });
    const anon = await request(sut.url).get('/api/v1/profiles/viewme').expect(200);
    expect(anon.body.username).toBe('viewme');
    expect(anon.body.email).toBe('');
    expect((await request(sut.url).get('/api/v1/profiles/viewme').set('Authorization', stranger.token).expect(200)).body.email).toBe('');
    expect((await request(sut.url).get('/api/v1/profiles/viewme').set('Authorization', owner.token).expect(200)).body.email).toBe(owner.email);
    expect((await request(sut.url).get('/api/v1/profiles/VIEWME').set('Authorization', admin.token).expect(200)).body.email).toBe(owner.email);
    await request(sut.url).get('/api/v1/profiles/nobody-here').expect(404, { detail: 'Not found.' });
  });

  it('never tells an anonymous caller or another user who is a platform admin', async () => {
    const stranger = await createTestUser(sut.app);
    for (const caller of [undefined, stranger.token]) {
      const req = request(sut.url).get('/api/v1/profiles/boss');
      const res = await (caller ? req.set('Authorization', caller) : req).expect(200);
      expect(res.body.username).toBe('boss');
      expect(res.body).not.toHaveProperty('is_superuser');
    }
    expect((await request(sut.url).get('/api/v1/profiles/boss').set('Authorization', admin.token).expect(200)).body.is_superuser).toBe(true);
    expect((await request(sut.url).get('/api/v1/profiles/' + stranger.username).set('Authorization', stranger.token).expect(200)).body.is_superuser).toBe(false);
  });

  it('GET /api/v1/users/{username} needs a user', async () => {
    const u = await createTestUser(sut.app, { username: 'listed', firstName: 'Lis' });
    await request(sut.url).get('/api/v1/users/listed').expect(401);
    const res = await request(sut.url).get('/api/v1/users/listed').set('Authorization', u.token).expect(200);
    expect(res.body).toEqual({ id: u.id, username: 'listed', first_name: 'Lis', last_name: '' });
    await request(sut.url).get('/api/v1/users/nobody-here').set('Authorization', u.token).expect(404);
  });
});

describe('collect-api registration switched off', () => {
  let sut: TestCollectApp;

  beforeAll(async () => {
    sut = await startTestCollectApp({ PROFILES_REGISTRATION_ENABLED: 'false' });
  });
  afterAll(() => sut.close());

  it('refuses anonymous and non-admin registration with 403; an admin still creates users', async () => {
    const body = { username: 'closed', password: 'closed-password', email: 'c@example.org' };
    await request(sut.url).post('/api/v1/profiles').send(body).expect(403, { detail: 'Registration is disabled.' });
    const user = await createTestUser(sut.app);
    await request(sut.url).post('/api/v1/profiles').set('Authorization', user.token).send(body).expect(403);
    const admin = await createTestUser(sut.app, { superuser: true });
    await request(sut.url).post('/api/v1/profiles').set('Authorization', admin.token).send(body).expect(201);
    await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('closed', 'closed-password')).expect(200);
  });
});

/**
 * Every credential a pre-registered account can hold (docs/security.md, "Promoting an existing account"): API and temporary
 * token, an OAuth access/refresh pair of its own application, and a signed-in `/o/` session.
 */
async function squat(sut: TestCollectApp, username: string, password: string) {
  await request(sut.url).post('/api/v1/profiles').send({ username, password, email: `${username}@example.org` }).expect(201);
  const basic = basicHeader(username, password);
  const me = (await request(sut.url).get('/api/v1/user').set('Authorization', basic).expect(200)).body as { id: number; api_token: string; temp_token: string };
  const { app: client, clientSecret } = await sut.app.get(OAuthApplicationsService).create(me.id, { name: 'squat', clientType: 'confidential', redirectUris: ['https://squat.example/cb'] });
  const oauth = sut.app.get(OAuth2Service);
  const check = await oauth.checkAuthorizeRequest({ client_id: client.clientId, response_type: 'code', scope: 'read write' });
  if (check.kind !== 'ok') throw new Error('authorize refused');
  const code = new URL(await oauth.approve(check.request, me.id)).searchParams.get('code')!;
  const pair = await oauth.token(client, { grant_type: 'authorization_code', code });
  // The /o/ login session, over HTTP as a browser gets it.
  const browser = request.agent(sut.url);
  const authorize = `/o/authorize?client_id=${client.clientId}&response_type=code`;
  const loginPage = await browser.get(authorize).expect(200);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(loginPage.text)![1];
  await browser.post('/o/login').type('form').send({ csrf_token: csrf, username, password, next: authorize }).expect(303);
  expect((await browser.get(authorize).expect(200)).text).toContain('Allow');
  return {
    headers: [basic, `Token ${me.api_token}`, `TempToken ${me.temp_token}`, `Bearer ${pair.access_token}`],
    async refresh() {
      return request(sut.url).post('/o/token').type('form').set('Authorization', basicHeader(client.clientId, clientSecret!)).send({ grant_type: 'refresh_token', refresh_token: pair.refresh_token });
    },
    async signedIn() {
      return !(await browser.get(authorize).expect(200)).text.includes('name="password"');
    },
  };
}

describe('collect-api admin command (dist/cli.js)', () => {
  let sut: TestCollectApp;
  const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

  beforeAll(async () => {
    // The command runs in another process: no cached token lookups here may outlive its revocation.
    sut = await startTestCollectApp({ AUTH_TOKEN_CACHE_TTL_MS: '0' });
  });
  afterAll(() => sut.close());

  function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, [CLI, ...args], { env: { ...process.env, DATABASE_URL: sut.config.DATABASE_URL, NODE_ENV: 'test', LOG_LEVEL: 'silent' } }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  it('users create makes a platform admin, and a second run updates the password', async () => {
    let out = await cli(['users', 'create', '--username', 'ops', '--password', 'ops-password-1', '--email', 'ops@example.org', '--superuser']);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ username: 'ops', is_superuser: true, created: true });
    expect(out.stdout).not.toContain('ops-password-1');
    let me = await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('ops', 'ops-password-1')).expect(200);
    expect(me.body.is_superuser).toBe(true);
    out = await cli(['users', 'create', '--username', 'ops', '--password', 'ops-password-2', '--email', 'ops@example.org']);
    expect(JSON.parse(out.stdout)).toMatchObject({ created: false });
    await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('ops', 'ops-password-1')).expect(401);
    me = await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('ops', 'ops-password-2')).expect(200);
  });

  it('users create --superuser on a pre-registered username revokes its API, temp and OAuth tokens and its sessions', async () => {
    const held = await squat(sut, 'chief', 'squatter-password');
    for (const header of held.headers) await request(sut.url).get('/api/v1/user').set('Authorization', header).expect(200);
    expect(await held.signedIn()).toBe(true);

    const out = await cli(['users', 'create', '--username', 'chief', '--password', 'the-operators-password', '--email', 'ops@example.org', '--superuser']);
    expect(JSON.parse(out.stdout)).toMatchObject({ username: 'chief', is_superuser: true, created: false, credentials_revoked: true });
    for (const header of held.headers) await request(sut.url).get('/api/v1/user').set('Authorization', header).expect(401);
    expect((await held.refresh()).body).toMatchObject({ error: 'invalid_grant' });
    expect(await held.signedIn()).toBe(false);

    // The operator's account works, with fresh tokens; the same command again revokes nothing.
    const operator = basicHeader('chief', 'the-operators-password');
    const fresh = (await request(sut.url).get('/api/v1/user').set('Authorization', operator).expect(200)).body as { api_token: string; is_superuser: boolean };
    expect(fresh.is_superuser).toBe(true);
    const again = await cli(['users', 'create', '--username', 'chief', '--password', 'the-operators-password', '--email', 'ops@example.org', '--superuser']);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: false, credentials_revoked: false });
    await request(sut.url).get('/api/v1/user').set('Authorization', `Token ${fresh.api_token}`).expect(200);
  });

  it('COLLECT_ADMIN_USERNAME on a pre-registered username revokes the same; every later start with the same values changes nothing', async () => {
    const held = await squat(sut, 'startadmin', 'squatter-password-2');
    const bootstrap = () => new AdminBootstrap(sut.app.get(UsersService), { ...sut.config, COLLECT_ADMIN_USERNAME: 'startadmin', COLLECT_ADMIN_PASSWORD: 'configured-password' }).onApplicationBootstrap();
    await bootstrap();
    for (const header of held.headers) await request(sut.url).get('/api/v1/user').set('Authorization', header).expect(401);
    expect((await held.refresh()).body).toMatchObject({ error: 'invalid_grant' });
    expect(await held.signedIn()).toBe(false);
    const token = `Token ${(await request(sut.url).get('/api/v1/user').set('Authorization', basicHeader('startadmin', 'configured-password')).expect(200)).body.api_token}`;
    await bootstrap();
    await request(sut.url).get('/api/v1/user').set('Authorization', token).expect(200);
  });

  it('applications create registers an OAuth client', async () => {
    const out = await cli(['applications', 'create', '--name', 'Reports', '--redirect-uris', 'https://reports.example/cb', '--owner', 'ops']);
    expect(out.code).toBe(0);
    const app = JSON.parse(out.stdout);
    expect(app).toMatchObject({ name: 'Reports', client_type: 'confidential', client_id: expect.any(String), client_secret: expect.any(String) });
    const res = await request(sut.url).get('/o/authorize').query({ client_id: app.client_id, response_type: 'code' }).expect(200);
    expect(res.text).toContain('Reports');
  });

  it('explains bad usage with exit code 2', async () => {
    expect((await cli(['users', 'create', '--username', 'x'])).code).toBe(2);
    expect((await cli(['users', 'destroy'])).code).toBe(2);
    expect((await cli(['users', 'create', '--bogus'])).code).toBe(2);
    expect((await cli(['applications', 'create', '--name', 'x', '--redirect-uris', 'nope'])).code).toBe(2);
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('users create');
  });
});
