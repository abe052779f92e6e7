import request from 'supertest';
import { casUserId, onCollect, startCasEnv, startSignInOverHttp, type CasEnv } from './cas-env.js';
import { createTestUser } from './test-users.js';

describe('CAS_AUTO_ONBOARD=true: the first sign-in creates the linked local user', () => {
  let env: CasEnv;

  beforeAll(async () => {
    env = await startCasEnv({ CAS_AUTO_ONBOARD: 'true' });
  });
  afterAll(() => env?.close());

  const signIn = async (username: string) => {
    const { jar, callback } = await startSignInOverHttp(env, username, `${username}-password`);
    return jar.fetch(onCollect(env, callback));
  };

  it('creates the user on first sign-in, once, linked to the CAS subject', async () => {
    expect((await signIn('alice')).status).toBe(303);
    expect((await signIn('alice')).status).toBe(303);
    const found = await request(env.collect.url).get('/api/v1/cas-users').query({ search: 'alice' }).set('Authorization', env.admin.token).expect(200);
    expect(found.body.results[0]).toMatchObject({ username: 'alice', onboarded: true, local_user: { username: 'alice', is_active: true } });
  });

  it('does not bring back an off-boarded user', async () => {
    await request(env.collect.url).delete(`/api/v1/cas-users/${await casUserId(env, 'alice')}`).set('Authorization', env.admin.token).expect(204);
    const res = await signIn('alice');
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('has been removed');
  });

  it('refuses (403) rather than taking over a local account with the same username', async () => {
    await createTestUser(env.collect.app, { username: 'mallory' });
    const res = await signIn('mallory');
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('not on-boarded');
  });
});
