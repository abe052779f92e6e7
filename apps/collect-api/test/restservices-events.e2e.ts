import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { demoInstance, demoXForm, jpeg, png, wav } from './forms-fixtures.js';
import { FAST_FORWARDING, Receiver, until, type ReceivedRequest, type ReceiverReply } from './restservices-receiver.js';
import { withWorkerAppAndReceiver } from './restservice-suite.js';
import type { TestCollectApp } from './test-app.js';
import type { TestUser } from './test-users.js';

const MEDIA_WAIT_SECONDS = 4;

/**
 * The delivery model (docs/restservices.md "Events", "Fidelity", "Ordering", "Media
 * wait"): which events reach which service, the bytes every attempt sends, the order of one
 * submission's events, and split OpenRosa submissions. Real receivers on 127.0.0.1, the worker's
 * modules in this process, real PostgreSQL and Redis.
 */
describe('rest services: events, fidelity, ordering, media wait', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let rx: Receiver;

  withWorkerAppAndReceiver({
    ...FAST_FORWARDING, FORWARD_MAX_ATTEMPTS: '20', FORWARD_RELAY_INTERVAL_MS: '100', FORWARD_MEDIA_WAIT_SECONDS: String(MEDIA_WAIT_SECONDS),
  }, (suite) => void ({ sut, owner, rx } = suite));

  const api = () => request(sut.url);
  const newForm = async (idString: string) =>
    (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
  const create = (body: Record<string, unknown>) => api().post('/api/v1/restservices').set('Authorization', owner.token).send(body);
  const submit = (idString: string, instanceId: string, name: string, deprecatedId?: string) =>
    api().post('/api/v1/submissions').set('Authorization', owner.token)
      .send({ id: idString, submission: { name, meta: { instanceID: `uuid:${instanceId}`, ...(deprecatedId ? { deprecatedID: `uuid:${deprecatedId}` } : {}) } } }).expect(201);
  const rowsOf = async (serviceId: number) =>
    (await sut.app.get(DataSource).query(`SELECT event, status FROM rest_deliveries WHERE service_id = $1 ORDER BY id`, [serviceId])) as Array<{ event: string; status: string }>;
  const bodyOf = (r: ReceivedRequest) => JSON.parse(r.body.toString()) as Record<string, unknown>;

  it('events: defaults per kind, explicit lists stored in order, bad lists refused', async () => {
    const form = await newForm('events_crud');
    const made = async (body: Record<string, unknown>) => (await create({ xform: form, ...body }).expect(201)).body as { id: number; events: string[] };
    expect((await made({ name: 'generic_json', service_url: `${rx.url}/c1` })).events).toEqual(['created', 'updated']);
    expect((await made({ name: 'generic_xml', service_url: `${rx.url}/c2` })).events).toEqual(['created', 'updated']);
    expect((await made({ name: 'dataset_service', service_url: `${rx.url}/c3` })).events).toEqual(['created', 'updated']);
    expect((await made({ name: 'health_forwarder', service_url: `${rx.url}/c4` })).events).toEqual(['created']);
    const flow = await made({ name: 'messaging', service_url: `${rx.url}/c5`, auth_token: 't', flow_uuid: 'f', contacts: 'a' });
    expect(flow.events).toEqual(['created']);
    expect((await made({ name: 'generic_json', service_url: `${rx.url}/c6`, events: ['deleted', 'created'] })).events).toEqual(['created', 'deleted']);
    const patched = await api().patch(`/api/v1/restservices/${flow.id}`).set('Authorization', owner.token).send({ events: ['created', 'updated'] }).expect(200);
    expect(patched.body.events).toEqual(['created', 'updated']);
    expect((await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/c7`, events: ['edited'] }).expect(400)).body).toEqual({ events: ['One of created, updated, deleted, entity_created, entity_updated, entity_deleted.'] });
    expect((await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/c7`, events: [] }).expect(400)).body).toEqual({ events: [expect.stringContaining('at least 1')] });
    expect((await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/c7`, events: ['created', 'created'] }).expect(400)).body).toEqual({ events: ['The items of this list must differ.'] });
  });

  it('an edit reaches generic_json as "updated" and does not reach messaging', async () => {
    const form = await newForm('events_edit');
    const json = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/e-json` }).expect(201)).body;
    const flow = (await create({ xform: form, name: 'messaging', service_url: `${rx.url}/e-flow`, auth_token: 'tok', flow_uuid: 'f-1', contacts: '+1' }).expect(201)).body;
    const first = randomUUID();
    const second = randomUUID();
    await submit('events_edit', first, 'Before');
    await submit('events_edit', second, 'After', first);
    const [created, updated] = await until('created and updated at generic_json', () => rx.to('/e-json').length >= 2 && rx.to('/e-json'));
    expect([created.headers['x-submission-event'], updated.headers['x-submission-event']]).toEqual(['created', 'updated']);
    expect(bodyOf(updated)).toMatchObject({ name: 'After', _uuid: second, _edited: true });
    // The attempt is recorded after the receiver answered (batched attempt log): wait for the record too.
    await until('the flow start, recorded', async () => rx.to('/e-flow').length >= 1 && (await rowsOf(flow.id)).some((r) => r.status === 'success'));
    // The edit wrote no outbox row for messaging: it can never be sent.
    expect(await rowsOf(flow.id)).toEqual([{ event: 'created', status: 'success' }]);
    expect(rx.to('/e-flow').map((r) => r.headers['x-submission-event'])).toEqual(['created']);
    expect((await rowsOf(json.id)).map((r) => r.event)).toEqual(['created', 'updated']);
  });

  it('a delete reaches the services subscribed to "deleted" only, with the identifiers only', async () => {
    const form = await newForm('events_delete');
    const json = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/d-json`, events: ['deleted'] }).expect(201)).body;
    const xml = (await create({ xform: form, name: 'generic_xml', service_url: `${rx.url}/d-xml`, events: ['deleted'] }).expect(201)).body;
    // The default of generic_json (created, updated) does not take deletes.
    const byDefault = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/d-default` }).expect(201)).body;
    const uuid = randomUUID();
    await submit('events_delete', uuid, 'Short-lived');
    const [row] = (await api().get(`/api/v1/data/${form}`).set('Authorization', owner.token).expect(200)).body as Array<{ _id: number }>;
    expect(await rowsOf(json.id)).toEqual([]);
    await until('the created event (default events)', () => rx.to('/d-default').length >= 1);
    await api().delete(`/api/v1/data/${form}/${row._id}`).set('Authorization', owner.token).expect(204);
    const [sentJson] = await until('the deleted event (json)', () => rx.to('/d-json').length >= 1 && rx.to('/d-json'));
    const [sentXml] = await until('the deleted event (xml)', () => rx.to('/d-xml').length >= 1 && rx.to('/d-xml'));
    expect(sentJson.headers['x-submission-event']).toBe('deleted');
    const body = bodyOf(sentJson);
    expect(body).toEqual({ _id: row._id, _uuid: uuid, _xform_id_string: 'events_delete', _deleted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/) });
    expect(sentXml.headers['content-type']).toBe('application/xml');
    expect(sentXml.body.toString()).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><deleted><_id>${row._id}</_id><_uuid>${uuid}</_uuid><_xform_id_string>events_delete</_xform_id_string><_deleted_at>${body._deleted_at}</_deleted_at></deleted>`,
    );
    expect((await rowsOf(xml.id)).map((r) => r.event)).toEqual(['deleted']);
    // The delete's outbox rows were written in one statement: none of them is for the default service.
    expect((await rowsOf(byDefault.id)).map((r) => r.event)).toEqual(['created']);
    expect(rx.to('/d-default').map((r) => r.headers['x-submission-event'])).toEqual(['created']);
  });

  it('deleting a service deletes its deliveries and their log entries (the others stay)', async () => {
    const form = await newForm('events_service_delete');
    const gone = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/sd-gone` }).expect(201)).body;
    const kept = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/sd-kept` }).expect(201)).body;
    await submit('events_service_delete', randomUUID(), 'One');
    const db = sut.app.get(DataSource);
    const counts = async (serviceId: number) => ((await db.query(
      `SELECT (SELECT count(*)::int FROM rest_deliveries WHERE service_id = $1) AS deliveries, (SELECT count(*)::int FROM rest_delivery_attempts WHERE service_id = $1) AS attempts`, [serviceId],
    )) as Array<{ deliveries: number; attempts: number }>)[0];
    await until('both deliveries, recorded', async () => (await counts(gone.id)).attempts === 1 && (await counts(kept.id)).attempts === 1);
    await api().delete(`/api/v1/restservices/${gone.id}`).set('Authorization', owner.token).expect(204);
    expect(await counts(gone.id)).toEqual({ deliveries: 0, attempts: 0 });
    expect(await counts(kept.id)).toEqual({ deliveries: 1, attempts: 1 });
  });

  it('a receiver failing twice while the submission is edited in between gets identical bytes on all three attempts, then the edit', async () => {
    const form = await newForm('events_fidelity');
    // The first answer is held back long enough for the edit to be stored meanwhile.
    rx.script('/fidelity', [{ status: 503, body: 'busy', delayMs: 1500 }, { status: 503, body: 'busy' }, { status: 200, body: 'ok' }]);
    await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/fidelity` }).expect(201);
    const first = randomUUID();
    await submit('events_fidelity', first, 'Original');
    await until('the first attempt', () => rx.to('/fidelity').length >= 1);
    await submit('events_fidelity', randomUUID(), 'Edited', first);
    const editedAt = Date.now();
    const sent = await until('three attempts and the edit', () => rx.to('/fidelity').length >= 4 && rx.to('/fidelity'), 30_000);
    const [a1, a2, a3, edit] = sent;
    expect(a2.at).toBeGreaterThanOrEqual(editedAt - 50); // the edit was stored before the 2nd attempt went
    expect([a1, a2, a3].map((r) => r.headers['x-submission-event'])).toEqual(['created', 'created', 'created']);
    expect([a1, a2, a3].map((r) => r.headers['x-delivery-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set([a1, a2, a3].map((r) => r.headers['x-delivery-id'])).size).toBe(1);
    expect(a2.body.equals(a1.body) && a3.body.equals(a1.body)).toBe(true);
    expect(bodyOf(a3)).toMatchObject({ name: 'Original', _edited: false });
    expect(edit.headers['x-submission-event']).toBe('updated');
    expect(edit.headers['x-delivery-id']).not.toBe(a1.headers['x-delivery-id']);
    expect(bodyOf(edit)).toMatchObject({ name: 'Edited', _edited: true });
  });

  it('100 created/updated pairs arrive in order with the receiver slow and failing at random', async () => {
    const form = await newForm('events_order');
    // A fixed pseudo-random script (seeded, so a failure replays): 30 % 503s, 0–15 ms answers.
    let seed = 20261124;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const replies: ReceiverReply[] = Array.from({ length: 600 }, () => ({ status: random() < 0.3 ? 503 : 200, delayMs: Math.floor(random() * 15) }));
    rx.script('/order', [...replies, { status: 200 }]);
    const svc = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/order` }).expect(201)).body;
    const uuids = Array.from({ length: 100 }, () => randomUUID());
    let next = 0;
    await Promise.all(Array.from({ length: 6 }, async () => {
      while (next < uuids.length) {
        const i = next++;
        await submit('events_order', uuids[i], `v1-${i}`);
        await submit('events_order', randomUUID(), `v2-${i}`, uuids[i]);
      }
    }));
    await until('every delivery final', async () => {
      const rows = await rowsOf(svc.id);
      return rows.length === 200 && rows.every((r) => r.status === 'success');
    }, 120_000);
    const byId = new Map<number, string[]>();
    for (const r of rx.to('/order')) {
      const id = bodyOf(r)._id as number;
      byId.set(id, [...(byId.get(id) ?? []), String(r.headers['x-submission-event'])]);
    }
    expect(byId.size).toBe(100);
    for (const events of byId.values()) {
      // Any number of attempts of the created event, then the updated one's: never interleaved.
      expect(events.lastIndexOf('created')).toBeLessThan(events.indexOf('updated'));
    }
    expect(rx.to('/order').length).toBeGreaterThan(200); // the receiver did fail some attempts
  }, 180_000);

  it('reuses kept-alive connections per destination and keeps at most FORWARD_CONCURRENCY_PER_DESTINATION requests in flight there', async () => {
    const slow = await new Receiver().start({ keepAliveTimeoutMs: 30_000 });
    try {
      const form = await newForm('events_connections');
      slow.script('/conn', [{ status: 200, body: 'ok', delayMs: 150 }]);
      await create({ xform: form, name: 'generic_json', service_url: `${slow.url}/conn` }).expect(201);
      await Promise.all(Array.from({ length: 40 }, (_, i) => submit('events_connections', randomUUID(), `c${i}`)));
      await until('40 deliveries', () => slow.replied >= 40, 60_000);
      const perDestination = sut.config.FORWARD_CONCURRENCY_PER_DESTINATION;
      expect(sut.config.FORWARD_CONCURRENCY).toBeGreaterThan(perDestination); // the worker could send more at once
      expect(slow.maxInFlight).toBeLessThanOrEqual(perDestination);
      expect(slow.maxInFlight).toBeGreaterThan(1);
      // 40 requests over at most that many connections: each connection carried several.
      expect(new Set(slow.to('/conn').map((r) => r.remotePort)).size).toBeLessThanOrEqual(perDestination);
    } finally {
      await slow.close();
    }
  });

  describe('OpenRosa submissions split over several POSTs', () => {
    const files = async () => ({ house: await jpeg(), yard: await png(), voice: wav() });
    const post = (xml: string, parts: Array<[string, Buffer, string]>) => {
      let req = api().post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
        .attach('xml_submission_file', Buffer.from(xml), { filename: 'submission.xml', contentType: 'text/xml' });
      for (const [name, data, type] of parts) req = req.attach(name, data, { filename: name, contentType: type });
      return req;
    };

    it('is forwarded once, after the last POST, with every attachment', async () => {
      const form = await newForm('events_split');
      await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/split` }).expect(201);
      const f = await files();
      const xml = demoInstance({ instanceId: randomUUID(), idString: 'events_split' });
      await post(xml, [['house.jpg', f.house, 'image/jpeg'], ['yard.png', f.yard, 'image/png']]).expect(201);
      await new Promise((r) => setTimeout(r, 700));
      expect(rx.to('/split')).toHaveLength(0); // voice.wav is still missing
      await post(xml, [['voice.wav', f.voice, 'audio/wav']]).expect(202);
      const [sent] = await until('the forward', () => rx.to('/split').length >= 1 && rx.to('/split'));
      expect((bodyOf(sent)._attachments as Array<{ name: string }>).map((a) => a.name).sort()).toEqual(['house.jpg', 'voice.wav', 'yard.png']);
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.to('/split')).toHaveLength(1);
    });

    it('keeps the instance XML in a row\'s snapshot only for services that send it; a service made generic_xml before the send reloads it', async () => {
      const form = await newForm('events_xmlsnap');
      const json = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/xs-json` }).expect(201)).body;
      const xmlService = (await create({ xform: form, name: 'generic_xml', service_url: `${rx.url}/xs-xml` }).expect(201)).body;
      const switched = (await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/xs-switch` }).expect(201)).body;
      const hasXml = async () => Object.fromEntries(((await sut.app.get(DataSource).query(
        `SELECT service_id, snapshot->'submission' ? 'xml' AS has_xml FROM rest_deliveries WHERE service_id = ANY($1) ORDER BY id`, [[json.id, xmlService.id, switched.id]],
      )) as Array<{ service_id: number; has_xml: boolean }>).map((r) => [r.service_id, r.has_xml]));
      // Both intake paths: the one-statement JSON intake, and the transaction of an OpenRosa POST.
      await submit('events_xmlsnap', randomUUID(), 'Json intake');
      await until('the JSON submission at all three', () => rx.to('/xs-json').length >= 1 && rx.to('/xs-xml').length >= 1 && rx.to('/xs-switch').length >= 1);
      // The one-statement intake stores no snapshot: the claim built each from the live row, with
      // the XML for generic_xml only (migration 1764950000000; restservices-snapshot.e2e.ts).
      expect(await hasXml()).toEqual({ [json.id]: null, [xmlService.id]: null, [switched.id]: null });
      expect(rx.to('/xs-xml')[0].body.toString()).toContain('<name>Json intake</name>');
      // An OpenRosa submission waiting for its media: its rows are written, not sent yet.
      const f = await files();
      const xml = demoInstance({ instanceId: randomUUID(), idString: 'events_xmlsnap' });
      await post(xml, [['house.jpg', f.house, 'image/jpeg'], ['yard.png', f.yard, 'image/png']]).expect(201);
      expect(await hasXml()).toEqual({ [json.id]: false, [xmlService.id]: true, [switched.id]: false });
      await api().patch(`/api/v1/restservices/${switched.id}`).set('Authorization', owner.token).send({ name: 'generic_xml' }).expect(200);
      await post(xml, [['voice.wav', f.voice, 'audio/wav']]).expect(202);
      const [, sentXml] = await until('the OpenRosa submission at generic_xml', () => rx.to('/xs-xml').length >= 2 && rx.to('/xs-xml'));
      const [, sentSwitched] = await until('the OpenRosa submission at the switched service', () => rx.to('/xs-switch').length >= 2 && rx.to('/xs-switch'));
      const [, sentJson] = await until('the OpenRosa submission at generic_json', () => rx.to('/xs-json').length >= 2 && rx.to('/xs-json'));
      expect(sentXml.body.toString()).toBe(xml);
      expect(sentSwitched.headers['content-type']).toBe('application/xml');
      expect(sentSwitched.body.toString()).toBe(xml);
      expect(sentJson.headers['content-type']).toBe('application/json');
    });

    it('goes anyway after FORWARD_MEDIA_WAIT_SECONDS and says so in the log', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn');
      try {
        const form = await newForm('events_partial');
        await create({ xform: form, name: 'generic_json', service_url: `${rx.url}/partial` }).expect(201);
        const f = await files();
        await post(demoInstance({ instanceId: randomUUID(), idString: 'events_partial' }), [['house.jpg', f.house, 'image/jpeg']]).expect(201);
        const [sent] = await until('the forward after the wait', () => rx.to('/partial').length >= 1 && rx.to('/partial'), (MEDIA_WAIT_SECONDS + 10) * 1000);
        expect((bodyOf(sent)._attachments as Array<{ name: string }>).map((a) => a.name)).toEqual(['house.jpg']);
        const logged = warn.mock.calls.find(([, msg]) => typeof msg === 'string' && msg.includes('attachments have not all arrived'));
        expect(logged?.[0]).toMatchObject({ missing: ['yard.png', 'voice.wav'], waitedSeconds: MEDIA_WAIT_SECONDS });
      } finally {
        warn.mockRestore();
      }
    });
  });
});
