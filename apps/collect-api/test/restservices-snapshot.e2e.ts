import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { snapshotForServiceSql, snapshotSql, type DeliverySnapshot } from '../src/restservices/delivery/delivery-snapshot.js';
import { RestServicesRepository } from '../src/restservices/restservices.repository.js';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * The `created` rows of the one-statement intake carry no snapshot: the claim builds it from the
 * live submission, and the first change of the submission before the row is sent stores the
 * submission as it was (migration 1764950000000; docs/restservices.md, "Fidelity"). No worker
 * runs here: the rows wait, and the test claims them itself.
 */
describe('rest services: the snapshot of a created row is taken when its submission first changes', () => {
  let sut: TestCollectApp;
  let db: DataSource;
  let owner: TestUser;
  let jsonService: number;
  let xmlService: number;

  beforeAll(async () => {
    sut = await startTestCollectApp();
    db = sut.app.get(DataSource);
    owner = await createTestUser(sut.app);
    const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm('snap_form')), 'form.xml').expect(201)).body.formid;
    const create = async (name: string) =>
      (await request(sut.url).post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name, service_url: `http://127.0.0.1:9/${name}` }).expect(201)).body.id as number;
    jsonService = await create('generic_json');
    xmlService = await create('generic_xml');
  });
  afterAll(async () => {
    await sut?.close();
  });

  const submit = (instanceId: string, name: string, deprecatedId?: string) =>
    request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token)
      .send({ id: 'snap_form', submission: { name, meta: { instanceID: `uuid:${instanceId}`, ...(deprecatedId ? { deprecatedID: `uuid:${deprecatedId}` } : {}) } } }).expect(201);
  /** The stored rows of the submission whose instance was first `instanceId`, by service and event. */
  const rowsOf = async (submissionId: number) =>
    (await db.query(`SELECT service_id, event, snapshot FROM rest_deliveries WHERE submission_id = $1 ORDER BY id`, [submissionId])) as Array<{ service_id: number; event: string; snapshot: DeliverySnapshot | null }>;
  const idOf = async (instanceId: string) => ((await db.query(`SELECT id FROM submissions WHERE uuid = $1`, [instanceId])) as Array<{ id: number }>)[0].id;
  const nameIn = (s: DeliverySnapshot | null) => (s?.submission.json as Record<string, unknown> | undefined)?.name;

  it('stores none at intake, keeps the original through edits, and the claim builds the unchanged one from the live row', async () => {
    const edited = randomUUID();
    const untouched = randomUUID();
    await submit(edited, 'Before');
    await submit(untouched, 'Kept');
    const editedId = await idOf(edited);
    const untouchedId = await idOf(untouched);
    expect((await rowsOf(editedId)).map((r) => [r.event, r.snapshot])).toEqual([['created', null], ['created', null]]);

    // An edit before the relay reached the rows: the created rows get the submission as it was.
    const second = randomUUID();
    await submit(second, 'After', edited);
    const third = randomUUID();
    await submit(third, 'Again', second);
    const rows = await rowsOf(editedId);
    const created = rows.filter((r) => r.event === 'created');
    expect(created.map((r) => nameIn(r.snapshot))).toEqual(['Before', 'Before']);
    expect(created.map((r) => r.snapshot!.submission.uuid)).toEqual([edited, edited]);
    // The XML only on the row of the service that sends it, as the outbox statement writes it.
    const ofService = (id: number) => created.find((r) => r.service_id === id)!.snapshot!;
    expect(ofService(jsonService).submission).not.toHaveProperty('xml');
    expect(ofService(xmlService).submission.xml).toEqual(expect.stringContaining('Before'));
    expect(ofService(jsonService).submitted_by).toBe(owner.username);
    expect(rows.filter((r) => r.event === 'updated').map((r) => nameIn(r.snapshot))).toEqual(['After', 'After', 'Again', 'Again']);

    // The claim: the stored snapshot where there is one, the live row's where there is none.
    const claimed = await sut.app.get(RestServicesRepository).claimDue(50, 60_000);
    const claimedCreated = (submissionId: number, serviceId: number) => claimed.find((c) => c.submissionId === submissionId && c.serviceId === serviceId && c.event === 'created')!;
    expect(nameIn(claimedCreated(editedId, jsonService).snapshot)).toBe('Before');
    const live = claimedCreated(untouchedId, jsonService).snapshot!;
    expect(nameIn(live)).toBe('Kept');
    expect(live.submission).not.toHaveProperty('xml');
    expect(live).toMatchObject({ attachments: [], submitted_by: owner.username, missing_media: [] });
    expect(live.submission).toMatchObject({ id: untouchedId, uuid: untouched });
    expect(claimedCreated(untouchedId, xmlService).snapshot!.submission.xml).toEqual(expect.stringContaining('Kept'));
    // The very snapshot the outbox statement stores for each kind (`to_jsonb` of the row), built from the columns.
    const stored = async (kind: string) =>
      ((await db.query(`SELECT ${snapshotForServiceSql(snapshotSql('$1', `'[]'::jsonb`), `'${kind}'`)} AS snapshot`, [untouchedId])) as Array<{ snapshot: DeliverySnapshot }>)[0].snapshot;
    expect(live).toEqual(await stored('generic_json'));
    expect(claimedCreated(untouchedId, xmlService).snapshot).toEqual(await stored('generic_xml'));
    // Still nothing stored for the untouched submission: the claim wrote only the lease.
    expect((await rowsOf(untouchedId)).map((r) => r.snapshot)).toEqual([null, null]);
  });
});
