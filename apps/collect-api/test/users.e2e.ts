import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
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

describe('collect-api admin command (dist/cli.js)', () => {
  let sut: TestCollectApp;
  const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

  beforeAll(async () => {
    sut = await startTestCollectApp();
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
