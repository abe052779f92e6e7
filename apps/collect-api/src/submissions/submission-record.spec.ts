import { createHash } from 'node:crypto';
import { renderInstanceXml } from './instance-xml.js';
import { contentHash } from './submission-canonical.js';
import { emptyRecord, geolocationOf, isXpath, recordFromJson, recordFromXml } from './submission-record.js';
import { escapeXml, parseXml } from '../openrosa/xml.js';
import type { FormField } from '../forms/form.entity.js';
import type { SubmissionRecord } from './submission.entity.js';

const fields: FormField[] = [
  { name: 'name', xpath: 'name', type: 'text', label: null },
  { name: 'loc', xpath: 'loc', type: 'geopoint', label: null },
  { name: 'g', xpath: 'g', type: 'group', label: null },
  { name: 'q', xpath: 'g/q', type: 'integer', label: null },
  { name: 'rep', xpath: 'rep', type: 'repeat', label: null },
  { name: 'x', xpath: 'rep/x', type: 'text', label: null, repeat: 'rep' },
];
const form = { fields, rootName: 'data', idString: 'f', version: '3' };

describe('submission records', () => {
  it('flattens nested JSON and flat xpath keys to the same record', () => {
    const a = recordFromJson({ name: 'A', g: { q: 1 }, rep: [{ x: 'one' }, { 'rep/x': 'two' }], _ignored: 'x', empty: '', nothing: null });
    const b = recordFromJson({ 'g/q': '1', name: 'A', rep: [{ 'rep/x': 'one' }, { x: 'two' }] });
    expect(a).toEqual({ name: 'A', 'g/q': '1', rep: [{ 'rep/x': 'one' }, { 'rep/x': 'two' }] });
    expect(b).toEqual(a);
    expect(contentHash(a)).toBe(contentHash(b));
  });

  it('reads the same record from the same body again, and from bodies naming more paths than are kept', () => {
    const body = () => ({ name: 'A', g: { q: 1, r: { s: 'deep' } }, rep: [{ x: 'one' }, { 'rep/x': 'two' }] });
    const first = recordFromJson(body());
    expect(recordFromJson(body())).toEqual(first);
    expect(first).toEqual({ name: 'A', 'g/q': '1', 'g/r/s': 'deep', rep: [{ 'rep/x': 'one' }, { 'rep/x': 'two' }] });
    // More distinct paths than the cache keeps (it starts again empty), and paths too long to keep.
    const long = 'l'.repeat(200);
    for (let round = 0; round < 2; round++) {
      for (let b = 0; b < 30; b++) {
        const group: Record<string, string> = {};
        for (let i = 0; i < 500; i++) group[`k${b}_${i}`] = String(i);
        group[long] = 'long';
        const record = recordFromJson({ [`grp${b}`]: group });
        expect(Object.keys(record)).toHaveLength(501);
        expect(record[`grp${b}/k${b}_499`]).toBe('499');
        expect(record[`grp${b}/${long}`]).toBe('long');
      }
    }
    expect(recordFromJson(body())).toEqual(first);
  });

  it('joins plain lists (select multiple) and refuses bad keys and mixed lists', () => {
    expect(recordFromJson({ colours: ['red', 'blue'] })).toEqual({ colours: 'red blue' });
    expect(() => recordFromJson({ 'bad key': 'x' })).toThrow();
    expect(() => recordFromJson({ mixed: [{ a: 1 }, 'b'] })).toThrow();
  });

  it('checks xpaths by their characters exactly as the documented pattern does', () => {
    const pattern = /^[A-Za-z_][A-Za-z0-9_.-]*(\/[A-Za-z_][A-Za-z0-9_.-]*)*$/;
    const keys = ['q', '_q', 'Q9', 'g/q', 'g/q.v-2', 'a/b/c', 'a_b', '', '/', 'g/', '/q', 'g//q', '9q', 'g/9', '-q', '.q', 'q r', 'é', 'g/q\u0000', 'q\n', 'g/_x', 'a.b/c-d', 'x'.repeat(300)];
    for (let c = 0; c < 256; c++) keys.push(`a${String.fromCharCode(c)}`, `${String.fromCharCode(c)}a`, `a/${String.fromCharCode(c)}`);
    for (const key of keys) expect([key, isXpath(key)]).toEqual([key, pattern.test(key)]);
  });

  it('tells whether a record holds an answer besides the metadata keys', () => {
    const found = { answers: true };
    recordFromJson({ meta: { instanceID: 'uuid:1' }, 'meta/instanceID': 'uuid:1', formhub: { uuid: 'x' }, _id: 3, empty: '' }, undefined, found);
    expect(found.answers).toBe(false);
    for (const body of [{ q: 0 }, { meta: { instanceID: 'uuid:1', other: 'x' } }, { rep: [{ x: 'one' }] }, { colours: ['red'] }, { g: { q: false } }]) {
      recordFromJson(body, undefined, found);
      expect([body, found.answers]).toEqual([body, true]);
    }
  });

  it('reads instance XML: groups by path, repeats as lists, empty answers left out', () => {
    const root = parseXml('<data id="f"><name>A &amp; B</name><loc/><g><q>1</q></g><rep><x>one</x></rep><rep><x>two</x></rep><meta><instanceID>uuid:1</instanceID></meta></data>');
    expect(recordFromXml(root, form)).toEqual({ name: 'A & B', 'g/q': '1', rep: [{ 'rep/x': 'one' }, { 'rep/x': 'two' }], 'meta/instanceID': 'uuid:1' });
  });

  it('renders XML that reads back to the same record', () => {
    const record = { name: 'x<y', 'g/q': '2', rep: [{ 'rep/x': 'a' }, { 'rep/x': 'b' }] };
    const xml = renderInstanceXml(form, record);
    expect(xml).toContain('<data xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" id="f" version="3">');
    expect(recordFromXml(parseXml(xml), form)).toEqual(record);
  });

  it('takes _geolocation from the first geopoint answer, else [null, null]', () => {
    expect(geolocationOf({ loc: '-1.5 36.25 1700 5' }, fields)).toEqual([-1.5, 36.25]);
    expect(geolocationOf({ loc: 'garbage' }, fields)).toEqual([null, null]);
    expect(geolocationOf({}, fields)).toEqual([null, null]);
  });

  it('renders extra top-level answers as if the record held them', () => {
    const record = recordFromJson({ name: 'A', g: { q: 2 }, rep: [{ x: 'one' }], zz: 'unknown' });
    const extra = { 'meta/instanceID': 'uuid:1', 'formhub/uuid': 'f0', name: 'B' };
    expect(renderInstanceXml(form, record, extra)).toBe(renderInstanceXml(form, { ...record, ...extra }));
    expect(renderInstanceXml(form, record, {})).toBe(renderInstanceXml(form, record));
  });
});

/**
 * The earlier, slower writers, kept as the reference: the content hash is compared with stored
 * hashes (duplicate detection) and the XML is stored, so both must stay byte for byte what these
 * gave for every record (docs/architecture.md, "The submission record: one pass, few allocations").
 */
const referenceHash = (record: SubmissionRecord): string => {
  const canon = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canon) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])])) : v;
  return createHash('sha256').update(JSON.stringify(canon(record))).digest('hex');
};

function referenceXml(f: { fields: FormField[]; rootName: string; idString: string; version: string }, record: SubmissionRecord, extra?: Record<string, string>): string {
  const order = new Map(f.fields.map((x, i) => [x.xpath, i]));
  type Node = { children: Map<string, Node | Node[] | string> };
  const tree = (rec: SubmissionRecord, prefix: string, more?: Record<string, string>): Node => {
    const root: Node = { children: new Map() };
    const all = Object.keys(rec).concat(more ? Object.keys(more).filter((k) => !Object.hasOwn(rec, k)) : []);
    for (const { key } of all.map((key) => ({ key, rank: order.get(key) ?? 1e9 })).sort((a, b) => a.rank - b.rank)) {
      const steps = (prefix && key.startsWith(`${prefix}/`) ? key.slice(prefix.length + 1) : key).split('/');
      let node = root;
      for (const step of steps.slice(0, -1)) {
        let next = node.children.get(step);
        if (!next || typeof next === 'string' || Array.isArray(next)) node.children.set(step, (next = { children: new Map() }));
        node = next;
      }
      const value = more && Object.hasOwn(more, key) ? more[key]! : rec[key]!;
      node.children.set(steps.at(-1)!, Array.isArray(value) ? value.map((item) => tree(item, key)) : value);
    }
    return root;
  };
  const text = (node: Node): string =>
    [...node.children].map(([name, v]) => (Array.isArray(v) ? v.map((item) => `<${name}>${text(item)}</${name}>`).join('') : `<${name}>${typeof v === 'string' ? escapeXml(v) : text(v)}</${name}>`)).join('');
  return `<?xml version="1.0" encoding="UTF-8"?><${f.rootName} xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" id="${escapeXml(f.idString)}" version="${escapeXml(f.version)}">${text(tree(record, '', extra))}</${f.rootName}>`;
}

describe('content hash and instance XML, against the reference writers', () => {
  // Seeded, so a failure names a record that can be made again.
  let seed = 20;
  const random = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[random(xs.length)]!;
  const big: FormField[] = [
    ...fields,
    ...['a', 'a/b', 'a/b/c', 'a/d', 'e', '7', '10', 'z/9', 'rep/y'].map((xpath) => ({ name: xpath.split('/').at(-1)!, xpath, type: 'text', label: null })),
  ];
  const bigForm = { fields: big, rootName: 'data', idString: 'f&"', version: '3<' };
  // Known paths, unknown ones, integer-like keys, a path that is a group elsewhere, odd steps.
  const paths = [...big.map((x) => x.xpath), 'g/zz', 'new', 'new/x', 'a/b/new', '2', '01', 'a//b', 'q', 'g', '_x', '4294967295'];
  const values = ['v', '', 'a & b', '<x>', '"\'', 'ünï', '12', 'x y'];
  const recordOf = (depth: number): SubmissionRecord => {
    const record = emptyRecord();
    for (let i = random(12); i >= 0; i--) {
      const key = pick(paths);
      if (depth === 0 && random(6) === 0) record[key] = Array.from({ length: 1 + random(3) }, () => recordOf(1));
      else record[random(4) === 0 && depth ? `rep/${key}` : key] = pick(values);
    }
    return record;
  };

  it('gives the same hash and the same XML for a thousand generated records', () => {
    // The cases the straight writer hands to the tree: a group's keys apart, a path that is an answer and a group.
    const cases: Array<[Record<string, string>, Record<string, string>?]> = [[{ 'g/q': '1', name: 'n', 'g/zz': '2' }], [{ 'g/q': '1' }, { g: 'x' }], [{ g: 'x', 'g/q': '1' }], [{ 'new/x': '1' }, { new: 'x' }]];
    for (const [answers, extra] of cases) {
      const record = Object.assign(emptyRecord(), answers);
      expect(renderInstanceXml(bigForm, record, extra)).toBe(referenceXml(bigForm, record, extra));
    }
    for (let i = 0; i < 1000; i++) {
      const record = recordOf(0);
      const extra = random(2) ? { 'meta/instanceID': `uuid:${i}`, 'formhub/uuid': 'f0', ...(random(3) ? {} : { [pick(paths)]: pick(values) }) } : undefined;
      const shown = JSON.stringify({ record, extra });
      expect([shown, contentHash(record)]).toEqual([shown, referenceHash(record)]);
      expect([shown, renderInstanceXml(bigForm, record, extra)]).toEqual([shown, referenceXml(bigForm, record, extra)]);
    }
  });

  it('gives the same hash and XML when the same lists of keys come again (kept orders and documents)', () => {
    // A few shapes (key lists, with and without extra answers, one overlapping a key), each
    // filled many times with new values, some not strings (a repeat under a key of the shape):
    // the second and later records of a shape take the kept sort order and document.
    const shapes = [
      ['name', 'g/q', 'a/b/c', 'a/d', 'new', '7', 'e'], ['e', 'name', 'rep/y', 'z/9', 'g/zz', 'g/q'], ['name'],
      ...Array.from({ length: 5 }, () => Object.keys(recordOf(1))),
    ];
    const extras = [undefined, { 'meta/instanceID': 'uuid:x', 'formhub/uuid': 'f0' }, { name: 'from extra', 'meta/instanceID': 'uuid:y' }];
    for (let i = 0; i < 2000; i++) {
      const keys = shapes[i % shapes.length]!;
      const record = emptyRecord();
      for (const key of keys) record[key] = random(40) === 0 ? [Object.assign(emptyRecord(), { 'rep/x': pick(values) })] : pick(values);
      const base = extras[(i >> 3) % extras.length];
      const extra = base && { ...base, 'meta/instanceID': `uuid:${i}` };
      const shown = JSON.stringify({ record, extra });
      expect([shown, contentHash(record)]).toEqual([shown, referenceHash(record)]);
      expect([shown, renderInstanceXml(bigForm, record, extra, keys.slice())]).toEqual([shown, referenceXml(bigForm, record, extra)]);
      expect([shown, renderInstanceXml(bigForm, record, extra)]).toEqual([shown, referenceXml(bigForm, record, extra)]);
    }
  });

  it('gives the hash of a 250-answer record that the earlier writers stored', () => {
    const record = emptyRecord();
    for (let q = 1; q <= 250; q++) record[`g${Math.ceil(q / 25)}/q${q}`] = ['A short free-text answer', '42', '3.14', 'option_b', 'option_a option_c', '2026-11-24'][(q - 1) % 6]!;
    expect(contentHash(record)).toBe(referenceHash(record));
    expect(contentHash(record)).toBe('dc69b97b03fe67ca90e57bf2d813ec791a19bae3fbc25559f46ebec7bd380560');
  });
});
