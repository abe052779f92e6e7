/**
 * `pnpm seed:demo`: creates a demo form with image, audio and video questions and a few
 * OpenRosa submissions with real attachment files, through the HTTP API of a running
 * collect-api (the one `pnpm start` launched, or COLLECT_URL). Idempotent: a second run finds
 * the form and the submissions come back as duplicates.
 *
 * Env: COLLECT_URL (default PUBLIC_BASE_URL or http://localhost:${COLLECT_PORT:-3000}),
 * SEED_USERNAME / SEED_PASSWORD (default COLLECT_ADMIN_USERNAME / COLLECT_ADMIN_PASSWORD,
 * i.e. admin / admin-password in development).
 */
import { demoAvi, demoJpeg, demoWav } from './demo-media.js';

const ID_STRING = 'demo_media_survey';

const FORM = {
  id_string: ID_STRING,
  title: 'Demo: media survey',
  version: '1',
  fields: [
    { name: 'respondent', type: 'text', label: 'Respondent name' },
    { name: 'age', type: 'integer', label: 'Age' },
    { name: 'location', type: 'geopoint', label: 'Location' },
    { name: 'visit', type: 'group', label: 'Visit', children: [{ name: 'photo', type: 'image', label: 'Photo of the site' }, { name: 'notes', type: 'text', label: 'Notes' }] },
    { name: 'interview', type: 'audio', label: 'Recorded interview' },
    { name: 'walkthrough', type: 'video', label: 'Walk-through video' },
  ],
};

const PEOPLE = [
  { respondent: 'Amina', age: '34', location: '-1.2921 36.8219 1700 5' },
  { respondent: 'Bruno', age: '51', location: '-23.5505 -46.6333 760 8' },
  { respondent: 'Chen', age: '27', location: '31.2304 121.4737 4 3' },
];

async function main(): Promise<void> {
  const base = (process.env.COLLECT_URL ?? process.env.PUBLIC_BASE_URL ?? `http://localhost:${process.env.COLLECT_PORT ?? 3000}`).replace(/\/+$/, '');
  const username = process.env.SEED_USERNAME ?? process.env.COLLECT_ADMIN_USERNAME ?? 'admin';
  const password = process.env.SEED_PASSWORD ?? process.env.COLLECT_ADMIN_PASSWORD ?? 'admin-password';
  const auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

  const created = await fetch(`${base}/api/v1/forms`, { method: 'POST', headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: JSON.stringify(FORM) });
  let formId: number;
  if (created.status === 201) formId = ((await created.json()) as { formid: number }).formid;
  else if (created.status === 400) {
    const forms = (await (await fetch(`${base}/api/v1/forms`, { headers: { Authorization: auth } })).json()) as Array<{ formid: number; id_string: string; owner: string }>;
    const mine = forms.find((f) => f.id_string === ID_STRING && f.owner === username);
    if (!mine) throw new Error(`could not create the demo form: ${await created.text()}`);
    formId = mine.formid;
  } else throw new Error(`POST /api/v1/forms answered ${created.status}: ${await created.text()}`);

  const outcomes: string[] = [];
  for (const [i, person] of PEOPLE.entries()) {
    const n = i + 1;
    const xml = `<?xml version="1.0" encoding="UTF-8"?><data id="${ID_STRING}" version="1"><respondent>${person.respondent}</respondent><age>${person.age}</age><location>${person.location}</location><visit><photo>site-${n}.jpg</photo><notes>Visit number ${n}</notes></visit><interview>interview-${n}.wav</interview><walkthrough>walkthrough-${n}.avi</walkthrough><meta><instanceID>uuid:00000000-0000-4000-8000-00000000000${n}</instanceID></meta></data>`;
    const body = new FormData();
    body.append('xml_submission_file', new Blob([xml], { type: 'text/xml' }), 'submission.xml');
    body.append(`site-${n}.jpg`, new Blob([await demoJpeg(n)], { type: 'image/jpeg' }), `site-${n}.jpg`);
    body.append(`interview-${n}.wav`, new Blob([demoWav(n)], { type: 'audio/wav' }), `interview-${n}.wav`);
    body.append(`walkthrough-${n}.avi`, new Blob([await demoAvi(n)], { type: 'video/x-msvideo' }), `walkthrough-${n}.avi`);
    const res = await fetch(`${base}/submission`, { method: 'POST', headers: { Authorization: auth, 'X-OpenRosa-Version': '1.0' }, body });
    if (res.status !== 201 && res.status !== 202) throw new Error(`submission ${n} answered ${res.status}: ${await res.text()}`);
    outcomes.push(res.status === 201 ? 'created' : 'duplicate');
  }
  process.stdout.write(`${JSON.stringify({ formid: formId, id_string: ID_STRING, submissions: outcomes, data: `${base}/api/v1/data/${formId}` })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`seed:demo failed: ${(err as Error).message}\n`);
  process.exit(1);
});
