import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { kekFromConfig, kekId, openWithKek, type SealedPrivateKey } from '../src/encryption/key-sealing.js';
import { base64Spki } from '../src/encryption/rsa-keys.js';
import { resealServerKeys } from '../src/form-encryption/kek-rotation.js';
import { KekRotationRepository } from '../src/form-encryption/kek-rotation.repository.js';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser } from './test-users.js';

/** Rotating ENCRYPTION_KEK (docs/encryption.md "Rotating ENCRYPTION_KEK"): server-mode keys re-sealed under the new KEK, idempotently. */
describe('encryption rekey: server-mode keys re-sealed under a new ENCRYPTION_KEK', () => {
  let sut: TestCollectApp;
  const oldKek = randomBytes(32).toString('base64');
  const newKek = randomBytes(32).toString('base64');

  beforeAll(async () => {
    sut = await startTestCollectApp({ ENCRYPTION_KEK: oldKek });
  });
  afterAll(() => sut?.close());

  it('opens each key with the previous KEK, seals it under the new one, and reports what neither opens', async () => {
    const owner = await createTestUser(sut.app);
    const pks: number[] = [];
    for (const id of ['rk_a', 'rk_b']) {
      const pk = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm(id)).expect(201)).body.formid as number;
      await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set('Authorization', owner.token).send({ mode: 'server' }).expect(201);
      pks.push(pk);
    }
    const db = sut.app.get(DataSource);
    const rows = async () => (await db.query(`SELECT form_id, key_id, public_key, sealed FROM form_encryption_keys WHERE mode = 'server' ORDER BY form_id`)) as Array<{ form_id: number; key_id: string; public_key: string; sealed: SealedPrivateKey }>;
    const before = await rows();
    expect(before.map((r) => r.form_id)).toEqual(pks);
    const repo = new KekRotationRepository(db);
    const [next, previous] = [kekFromConfig(newKek)!, kekFromConfig(oldKek)!];

    // Without the previous KEK nothing is changed, every key is reported.
    expect(await resealServerKeys(repo, next, null)).toEqual({ resealed: 0, current: 0, unopened: before.map((r) => ({ form_id: r.form_id, key_id: r.key_id, kek_id: kekId(previous) })) });
    expect(await resealServerKeys(repo, next, previous)).toEqual({ resealed: 2, current: 0, unopened: [] });
    const after = await rows();
    for (const [i, row] of after.entries()) {
      expect(row.sealed).toMatchObject({ sealed_by: 'kek', kek_id: kekId(next), key_id: before[i]!.key_id });
      expect(row.sealed.iv).not.toBe(before[i]!.sealed.iv);
      const opened = openWithKek(row.sealed, next);
      expect(opened.ok && base64Spki(opened.value)).toBe(row.public_key);
      expect(openWithKek(row.sealed, previous).ok).toBe(false);
    }
    // Idempotent.
    expect(await resealServerKeys(repo, next, previous)).toEqual({ resealed: 0, current: 2, unopened: [] });
  });
});
