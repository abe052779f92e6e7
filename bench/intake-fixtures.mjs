// Submission bodies the intake benches share: an OpenRosa multipart with a photo, and a
// generated large form with answers for it.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

const sharp = createRequire(new URL('../apps/collect-api/package.json', import.meta.url))('sharp');

/**
 * A real JPEG of about `bytes` (within 10 %): seeded noise, which compresses as little as a
 * detailed photo does, resized until the encoder's output lands near the target.
 */
export async function photoJpeg(bytes = 100 * 1024) {
  let side = 300;
  let seed = 1;
  for (let attempt = 0; attempt < 8; attempt++) {
    const raw = Buffer.alloc(side * side * 3);
    for (let i = 0; i < raw.length; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      raw[i] = seed >>> 24;
    }
    const jpeg = await sharp(raw, { raw: { width: side, height: side, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
    if (Math.abs(jpeg.length - bytes) <= bytes * 0.1) return jpeg;
    side = Math.max(16, Math.round(side * Math.sqrt(bytes / jpeg.length)));
  }
  throw new Error(`could not make a JPEG of about ${bytes} bytes`);
}

/** Fields of the photo form the OpenRosa bodies answer. */
export const PHOTO_FORM_FIELDS = [{ name: 'name', type: 'text' }, { name: 'age', type: 'integer' }, { name: 'photo', type: 'image' }];

/**
 * An OpenRosa multipart body (`xml_submission_file` + one JPEG) for the photo form `idString`:
 * a new instance and a new file name each call, as ODK Collect names photos by their time.
 */
export function openRosaPhotoBody(idString, jpeg, uuid = randomUUID(), boundary = `bench${uuid.replaceAll('-', '')}`, file = photoFileName(uuid)) {
  const xml = `<?xml version="1.0"?><data id="${idString}"><name>Jane</name><age>34</age><photo>${file}</photo><meta><instanceID>uuid:${uuid}</instanceID></meta></data>`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="submission.xml"\r\nContent-Type: text/xml\r\n\r\n${xml}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file}"; filename="${file}"\r\nContent-Type: image/jpeg\r\n\r\n`),
    jpeg,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The photo's file name: the time in ms (13 digits until the year 2286) and 8 hex digits of the instance's uuid. */
const photoFileName = (uuid) => `${Date.now()}-${uuid.slice(0, 8)}.jpg`;

/**
 * OpenRosa photo bodies for a load generator (bench/submissions, bench/cpu-per-request): the
 * same bytes as openRosaPhotoBody, a new instance (instanceID) and a new file name each call, but
 * built once and then only those fixed-length fields written over in place. A load generator
 * on the same two cores as the API otherwise spent tens of µs and a 100 KB allocation per
 * request on building bodies (docs/benchmarks.md, "submissions"). `next()`
 * answers the SAME Buffer each time, changed: hand it off (autocannon copies it into the
 * request it builds, at once) before the next call. One multipart boundary per maker, as any
 * boundary absent from the content will do.
 */
export function openRosaPhotoBodies(idString, jpeg) {
  const first = randomUUID();
  const file = Buffer.from(photoFileName(first));
  const { body, contentType } = openRosaPhotoBody(idString, jpeg, first, undefined, file.toString('latin1'));
  const fileAt = [];
  for (let at = body.indexOf(file); at !== -1 && fileAt.length < 3; at = body.indexOf(file, at + file.length)) fileAt.push(at);
  const uuidAt = body.indexOf(`uuid:${first}`) + 'uuid:'.length;
  if (fileAt.length !== 3 || uuidAt < 'uuid:'.length) throw new Error('openRosaPhotoBodies: the body template has not the expected fields');
  return {
    contentType,
    next(uuid = randomUUID()) {
      const name = photoFileName(uuid);
      if (name.length !== file.length) throw new Error(`openRosaPhotoBodies: a file name of another length (${name})`);
      body.write(uuid, uuidAt, 'latin1');
      for (const at of fileAt) body.write(name, at, 'latin1');
      return body;
    },
  };
}

const LEAF_TYPES = ['text', 'integer', 'decimal', 'select_one', 'select_multiple', 'date'];

/**
 * A JSON form definition of `questions` questions in groups of `perGroup`, the types in turn:
 * text, integer, decimal, select_one, select_multiple, date (ODK Central's soak test uses a
 * form of 250 questions).
 */
export function largeForm(idString, questions = 250, perGroup = 25) {
  const groups = [];
  for (let q = 0; q < questions; q++) {
    if (q % perGroup === 0) groups.push({ name: `g${groups.length + 1}`, type: 'group', label: `Section ${groups.length + 1}`, children: [] });
    groups.at(-1).children.push({ name: `q${q + 1}`, type: LEAF_TYPES[q % LEAF_TYPES.length], label: `Question ${q + 1}` });
  }
  return { id_string: idString, title: `${questions} questions`, fields: groups };
}

/** A JSON submission answering every question of `definition` (from largeForm), a new instance each call. */
export function largeSubmission(definition, uuid = randomUUID()) {
  const answer = { text: 'A short free-text answer', integer: 42, decimal: 3.14, select_one: 'option_b', select_multiple: ['option_a', 'option_c'], date: '2026-11-24' };
  const submission = {};
  for (const group of definition.fields) submission[group.name] = Object.fromEntries(group.children.map((f) => [f.name, answer[f.type]]));
  submission.meta = { instanceID: `uuid:${uuid}` };
  return JSON.stringify({ id: definition.id_string, submission });
}

/**
 * Bodies of largeSubmission for new instances, made from one body: the text before and after
 * its instanceID, with a new uuid between them. The same bytes as largeSubmission(definition,
 * uuid) (checked here once); 2-3 µs per body against 65-77 µs for building and stringifying
 * the 250 answers, which the soak's sender spent 500 times a second on the cores of the system
 * it measures (docs/benchmarks.md, "soak"; the OpenRosa
 * bodies do the same, openRosaPhotoBodies).
 */
export function largeSubmissionBodies(definition) {
  const marker = randomUUID();
  const parts = largeSubmission(definition, marker).split(marker);
  const check = randomUUID();
  if (parts.length !== 2 || `${parts[0]}${check}${parts[1]}` !== largeSubmission(definition, check)) throw new Error('largeSubmissionBodies: the body template has not the expected instanceID');
  const [before, after] = parts;
  return { next: (uuid = randomUUID()) => `${before}${uuid}${after}` };
}
