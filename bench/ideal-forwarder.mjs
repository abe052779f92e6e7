// The "ideal forwarder" of forwarding-ceiling.bench.mjs, on a thread of its own (an event loop of
// its own, as the worker process has): told the `_uuid` of each accepted submission, it POSTs
// that submission's payload (built here once, with the uuid set) to the receiver over node:http's
// keep-alive agent, at most 16 in flight and 8 connections, as the worker sends
// (FORWARD_CONCURRENCY, FORWARD_CONCURRENCY_PER_DESTINATION). In `durable` mode it then records
// each answered delivery as the worker's attempt write does: the outbox row finished and an
// attempt entry, 8 rows or what answered within 5 ms per statement. Nothing else: no claim, no
// lease, no read of the submission, no ordering, no gate.
// Messages in: { mode: 'http' | 'durable' }, { uuids: [...] }, { drain: n }.
// Out: { drained: n } once every uuid told so far is sent (and recorded).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { httpPost } from './bench-helpers.mjs';

const pg = createRequire(workerData.requireFrom)('pg');
const { receiverUrl, payload, databaseUrl, formId, serviceId } = workerData;
const MAX_IN_FLIGHT = 16;
const BATCH = 8;
const GATHER_MS = 5;
const TIMEOUT_MS = 30_000;

/** The least a durable outbox records of a success: the row finished and its attempt entry (restservices/delivery/delivery-statements.ts ATTEMPT_WRITE_SQL, cut down). */
const RECORD_SQL = `WITH s AS (SELECT id FROM submissions WHERE form_id = $2 AND uuid = ANY($1::varchar[])),
  moved AS (
    UPDATE rest_deliveries d SET status = 'success', attempts = d.attempts + 1, lease_until = NULL, date_modified = now()
    FROM s WHERE d.submission_id = s.id AND d.status = 'pending' RETURNING d.id, d.service_id, d.event),
  logged AS (
    INSERT INTO rest_delivery_attempts (delivery_row_id, service_id, attempt, status, status_code, latency_ms, error, response_excerpt, event)
    SELECT id, service_id, 1, 'success', 200, 1, NULL, 'ok', event FROM moved)
  UPDATE rest_services SET last_delivery_at = now(), last_status = 'success' WHERE id = $3`;

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
let durable = false;
const queue = [];
let inFlight = 0;
/** Told and not yet done (sent, and recorded in durable mode). */
let outstanding = 0;
let answered = [];
let recording = null;
let timer = null;
let draining = null;

function settle() {
  if (draining === null || outstanding > 0 || recording || answered.length) return;
  parentPort.postMessage({ drained: draining });
  draining = null;
}

function record() {
  if (timer) clearTimeout(timer);
  timer = null;
  if (recording || !answered.length) return;
  const batch = answered;
  answered = [];
  recording = db.query({ name: 'record', text: RECORD_SQL, values: [batch, formId, serviceId] }).then(() => {
    recording = null;
    outstanding -= batch.length;
    if (answered.length >= BATCH || (draining !== null && answered.length)) record();
    else if (answered.length && !timer) timer = setTimeout(record, GATHER_MS);
    settle();
  });
}

function done(uuid) {
  inFlight--;
  if (durable) {
    answered.push(uuid);
    if (answered.length >= BATCH) record();
    else if (!timer) timer = setTimeout(record, GATHER_MS);
  } else {
    outstanding--;
  }
  pump();
  settle();
}

function pump() {
  while (inFlight < MAX_IN_FLIGHT && queue.length) {
    const uuid = queue.shift();
    inFlight++;
    const body = JSON.stringify({ ...payload, _uuid: uuid });
    // A failed send is not caught: the unhandled rejection ends the thread, and the bench with it.
    void httpPost(agent, receiverUrl, { 'content-type': 'application/json', 'x-delivery-id': randomUUID() }, body, TIMEOUT_MS).then(() => done(uuid));
  }
}

parentPort.on('message', (m) => {
  if (m.mode) durable = m.mode === 'durable';
  if (m.uuids) {
    outstanding += m.uuids.length;
    queue.push(...m.uuids);
    pump();
  }
  if (m.drain !== undefined) {
    draining = m.drain;
    record();
    settle();
  }
});
