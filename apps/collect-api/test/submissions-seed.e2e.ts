import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import request from 'supertest';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser } from './test-users.js';

const SEED = fileURLToPath(new URL('../dist/seed/seed-demo.js', import.meta.url));

describe('pnpm seed:demo (built dist against a running collect-api)', () => {
  let sut: TestCollectApp;
  beforeAll(async () => {
    sut = await startTestCollectApp({ MEDIA_ROOT: mkdtempSync(join(tmpdir(), 'collect-seed-')) });
  });
  afterAll(() => sut.close());

  it('creates the demo form and three submissions with image, audio and video files; a second run is idempotent', async () => {
    const user = await createTestUser(sut.app);
    const env = { ...process.env, COLLECT_URL: sut.url, SEED_USERNAME: user.username, SEED_PASSWORD: user.password };
    const first = JSON.parse((await promisify(execFile)(process.execPath, [SEED], { env })).stdout);
    expect(first.submissions).toEqual(['created', 'created', 'created']);
    const second = JSON.parse((await promisify(execFile)(process.execPath, [SEED], { env })).stdout);
    expect(second).toMatchObject({ formid: first.formid, submissions: ['duplicate', 'duplicate', 'duplicate'] });
    const data = await request(sut.url).get(`/api/v1/data/${first.formid}`).set('Authorization', user.token).expect(200);
    expect(data.body).toHaveLength(3);
    for (const row of data.body) {
      expect(row._attachments.map((a: { mimetype: string }) => a.mimetype)).toEqual(['image/jpeg', 'audio/wav', 'video/x-msvideo']);
      expect(row._geolocation.every((v: unknown) => typeof v === 'number')).toBe(true);
    }
    expect(data.body[0]._attachments.map((a: { name: string }) => a.name)).toEqual(['site-1.jpg', 'interview-1.wav', 'walkthrough-1.avi']);
  });
});
