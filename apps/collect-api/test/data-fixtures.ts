import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type request from 'supertest';
import { DataSource } from 'typeorm';
import yauzl from 'yauzl';

/** A text, an integer and a decimal question: the columns that numeric casts and text compare. */
export const NAME_AGE_SCORE = [
  { name: 'name', type: 'text', label: 'Name' },
  { name: 'age', type: 'integer', label: 'Age' },
  { name: 'score', type: 'decimal', label: 'Score' },
];

/** A form with every column kind the data API and the exports treat differently. */
export const DATA_FORM = {
  id_string: 'data_out',
  title: 'Data out',
  fields: [
    ...NAME_AGE_SCORE,
    { name: 'district', type: 'select one', label: 'District' },
    { name: 'tags', type: 'select all that apply', label: 'Tags' },
    { name: 'place', type: 'group', label: 'Place', children: [{ name: 'village', type: 'text', label: 'Village' }] },
    {
      name: 'kids', type: 'repeat', label: 'Kids', children: [
        { name: 'kid_name', type: 'text', label: 'Kid name' },
        { name: 'kid_age', type: 'integer', label: 'Kid age' },
        { name: 'toys', type: 'repeat', label: 'Toys', children: [{ name: 'toy', type: 'text', label: 'Toy' }] },
      ],
    },
    { name: 'note', type: 'text', label: 'Note' },
  ],
};

export const DISTRICTS = ['north', 'south', 'east', 'west'];
export const TAGS = ['red', 'green', 'blue'];

/** A deterministic pseudo-random source (mulberry32), so failures reproduce. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Answers = Record<string, string | Answers[]>;

/** The answers of synthetic submission `i`: some missing, some not numbers, repeats of 0-3 (nested 0-2). */
export function syntheticAnswers(i: number, rnd: () => number): Answers {
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const out: Answers = {};
  if (rnd() > 0.03) out.name = `${pick(['Ada', 'bob', 'Cleo', 'Dan', 'eve', 'Finn', 'Gus', 'Hana', 'Ivo', 'Jo'])}${i % 97}`;
  const r = rnd();
  if (r < 0.02) out.age = 'n/a';
  else if (r < 0.05) { /* missing */ } else out.age = String(Math.floor(rnd() * 100));
  if (rnd() > 0.1) out.score = (Math.floor(rnd() * 2000) / 100).toString();
  out.district = pick(DISTRICTS);
  const tags = TAGS.filter(() => rnd() < 0.4);
  if (tags.length) out.tags = tags.join(' ');
  if (rnd() < 0.7) out['place/village'] = `v${Math.floor(rnd() * 50)}, "quoted"\nline`;
  const kids = Math.floor(rnd() * 4);
  if (kids) {
    out.kids = Array.from({ length: kids }, (_, k) => {
      const kid: Answers = { 'kids/kid_name': `kid${i}-${k}`, 'kids/kid_age': String(Math.floor(rnd() * 18)) };
      const toys = Math.floor(rnd() * 3);
      if (toys) kid['kids/toys'] = Array.from({ length: toys }, (_, t) => ({ 'kids/toys/toy': `toy${t}` }));
      return kid;
    });
  }
  if (rnd() < 0.3) out.note = pick(['', 'ok', 'Zulu', 'alpha', 'ünïcode']) || 'x';
  return out;
}

export interface SeededSubmission {
  id: number;
  uuid: string;
  json: Answers;
  submittedBy: string;
  /** `_submission_time` as shown. */
  time: string;
  /** The stored time (ms), which orders a sort. */
  at: number;
}

/**
 * Inserts `n` submissions straight into the table (the data API reads them; intake is tested
 * elsewhere), in batches, two seconds apart in pairs so that some share a second. Returns them
 * in `_id` order.
 */
export async function seedSubmissions(app: NestExpressApplication, formId: number, users: Array<{ id: number; username: string }>, n: number, seed = 23): Promise<SeededSubmission[]> {
  const db = app.get(DataSource);
  const rnd = seeded(seed);
  const start = Date.UTC(2026, 0, 1, 8, 0, 0);
  const out: SeededSubmission[] = [];
  for (let from = 0; from < n; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - from) }, (_, k) => {
      const i = from + k;
      const at = new Date(start + Math.floor(i / 2) * 2000 + (i % 2) * 400);
      const user = users[i % users.length];
      return { uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, json: syntheticAnswers(i, rnd), by: user.id, username: user.username, t: at.toISOString() };
    });
    const rows = (await db.query(
      `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id, version, date_created, date_modified)
       SELECT $1, x.uuid, x.json, '', '', x.by, '', x.t, x.t FROM jsonb_to_recordset($2::jsonb) AS x(uuid text, json jsonb, by int, t timestamptz)
       ORDER BY x.uuid RETURNING id, uuid`,
      [formId, JSON.stringify(batch)],
    )) as Array<{ id: number; uuid: string }>;
    const ids = new Map(rows.map((r) => [r.uuid, r.id]));
    for (const b of batch) out.push({ id: ids.get(b.uuid)!, uuid: b.uuid, json: b.json, submittedBy: b.username, time: b.t.slice(0, 19), at: Date.parse(b.t) });
  }
  await db.query('ANALYZE submissions');
  return out.sort((a, b) => a.id - b.id);
}

/** A supertest parser that keeps a binary body (CSV, XLSX, ZIP) as one Buffer. */
export function binary(res: request.Response, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

/** Every entry of a zip answer, by name (media archives, decrypted archives). */
export function unzip(buffer: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const out = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** Every file under `dir` (none when it does not exist): what a test checks intake left behind. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name));
}
