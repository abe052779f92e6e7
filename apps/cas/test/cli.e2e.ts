import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { AccountsService } from '../src/accounts/accounts.service.js';
import { runCli } from '../src/cli/run-cli.js';
import { OidcService } from '../src/oidc/oidc.service.js';
import { DEV_SEED, startTestCasApp, type TestCasApp } from './test-app.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

describe('cas admin CLI', () => {
  let sut: TestCasApp;
  beforeAll(async () => {
    sut = await startTestCasApp({ CAS_DEV_SEED_FILE: DEV_SEED });
  });
  afterAll(() => sut.close());

  const lines = (stdout: string) => (stdout.trim() ? stdout.trim().split('\n').map((l) => JSON.parse(l)) : []);
  // The commands run in this process through the binary's own entry (runCli): a process per call
  // costs seconds on a busy machine. One test runs the built binary as a process.
  const cli = async (...args: string[]) => {
    let stdout = '';
    let stderr = '';
    const status = await runCli(args, () => ({ ...sut.config, LOG_LEVEL: 'info' }), { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { status, stdout, stderr, json: lines(stdout) };
  };
  const cliProcess = (...args: string[]) => {
    const run = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, CAS_DATABASE_URL: sut.config.CAS_DATABASE_URL, LOG_LEVEL: 'info' }, encoding: 'utf8' });
    return { ...run, json: lines(run.stdout) };
  };

  it('creates a resource and a client (the built binary, as a process) whose printed secret works at the token endpoint', async () => {
    expect((await cli('resources', 'create', '--name', 'reports', '--scopes', 'reports.read reports.write')).status).toBe(0);
    const created = cliProcess('clients', 'create', '--client-id', 'reports-bot', '--grant-types', 'client_credentials', '--scopes', 'reports.read', '--resources', 'reports');
    expect(created.status).toBe(0);
    expect(created.stderr).toContain('"event":"client.created"');
    const { client_secret: secret } = created.json[0];
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).not.toContain(secret); // the audit line never carries the secret
    await sut.app.get(OidcService).tick(); // a new resource's scopes reach the provider
    const res = await request(sut.url).post('/connect/token').auth('reports-bot', secret).type('form').send({ grant_type: 'client_credentials', scope: 'reports.read' }).expect(200);
    expect(res.body.scope).toBe('reports.read');
    // An existing id is refused, nothing printed on stdout.
    const again = await cli('clients', 'create', '--client-id', 'reports-bot', '--grant-types', 'client_credentials', '--resources', 'reports');
    expect(again.status).toBe(64);
    expect(again.stderr).toContain('already exists');
    expect(again.stdout).toBe('');
  });

  it('disables a client: its tokens stop being issued', async () => {
    expect((await cli('clients', 'disable', '--client-id', 'reports-bot')).status).toBe(0);
    // A running service notices within CAS_CLIENT_CACHE_SECONDS (5 s); the test clears the cache instead of waiting.
    sut.app.get(OidcService).clearCaches();
    await request(sut.url).post('/connect/token').auth('reports-bot', 'anything').type('form').send({ grant_type: 'client_credentials' }).expect(401);
  });

  it('creates, re-passwords and disables users', async () => {
    expect((await cli('users', 'create', '--username', 'carol', '--password', 'first-password', '--email', 'carol@example.org')).status).toBe(0);
    const accounts = sut.app.get(AccountsService);
    expect(await accounts.checkCredentials('carol', 'first-password')).not.toBeNull();
    expect((await cli('users', 'set-password', '--username', 'carol', '--password', 'second-password')).status).toBe(0);
    expect(await accounts.checkCredentials('carol', 'first-password')).toBeNull();
    expect(await accounts.checkCredentials('carol', 'second-password')).not.toBeNull();
    expect((await cli('users', 'disable', '--username', 'carol')).status).toBe(0);
    expect(await accounts.checkCredentials('carol', 'second-password')).toBeNull();
    expect((await accounts.findByUsername('carol'))?.enabled).toBe(false);
  });

  it.each([
    [['users', 'create', '--username', 'x'], /--password: This field is required\./],
    [['users', 'disable', '--username', 'nobody'], /no user nobody/],
    [['clients', 'create', '--client-id', 'y', '--grant-types', 'password', '--resources', 'reports'], /--grant-types: Each item must be one of/],
    // Each command's input DTO, through the shared validation: the option named.
    [['users', 'create', '--username', '', '--password', 'p'], /--username: This field may not be blank\./],
    [['users', 'set-password', '--username', 'carol', '--password', 'p', '--email', 'c@example.org'], /--email: Unknown field\./],
    [['resources', 'create', '--name', 'short-lived', '--access-token-ttl', '5'], /--access-token-ttl: Ensure this value is greater than or equal to 60\./],
    [['resources', 'create', '--name', 'bad name'], /--name: letters, digits/],
    [['clients', 'create', '--client-id', 'z', '--grant-types', 'client_credentials', '--auth-method', 'magic'], /--auth-method: "magic" is not a valid choice\./],
    [['frobnicate'], /unknown command/],
    [['users', 'create', '--bogus', '1'], /Unknown option/],
  ])('refuses %j with exit 64 and a message', async (args, message) => {
    const run = await cli(...args);
    expect(run.status).toBe(64);
    expect(run.stderr).toMatch(message);
  });
});
