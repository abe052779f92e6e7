import { PassThrough } from 'node:stream';
import { listCsvHeader, listHash, writeListCsv } from './entity-list-csv.js';
import type { ListCsvRow } from './entity-list-attachments.repository.js';

async function* batches(rows: ListCsvRow[][]): AsyncGenerator<ListCsvRow[]> {
  yield* rows;
}

async function csvOf(properties: string[], rows: ListCsvRow[][], cells?: <T>(row: T[]) => T[]): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await writeListCsv(properties, batches(rows), out, cells);
  return Buffer.concat(chunks).toString('utf8');
}

describe('the list CSV', () => {
  it('has name, label, __version, then the properties; a missing property is an empty cell', async () => {
    expect(listCsvHeader(['a', 'b'])).toEqual(['name', 'label', '__version', 'a', 'b']);
    const csv = await csvOf(['a', 'b'], [[{ name: 'u1', label: 'One, "1"', version: 3, values: ['x', null] }], [{ name: 'u2', label: 'Two', version: 1, values: ['=1+1', 'y'] }]]);
    expect(csv).toBe('name,label,__version,a,b\nu1,"One, ""1""",3,x,\nu2,Two,1,=1+1,y\n');
  });

  it('writes the cells through the guard it is given (the downloads)', async () => {
    const guard = <T>(row: T[]) => row.map((v) => (typeof v === 'string' && v.startsWith('=') ? `'${v}` : v)) as T[];
    expect(await csvOf(['a'], [[{ name: 'u', label: 'L', version: 1, values: ['=1+1'] }]], guard)).toBe("name,label,__version,a\nu,L,1,'=1+1\n");
  });

  it('the hash follows the list id, revision and properties only', () => {
    const h = (id: number, revision: number, properties = ['a']) => listHash({ id, revision, properties });
    expect(h(1, 4)).toMatch(/^md5:[0-9a-f]{32}$/);
    expect(h(1, 4)).toBe(h(1, 4));
    expect(new Set([h(1, 4), h(1, 5), h(2, 4), h(14, 1), h(1, 41), h(1, 4, ['a', 'b']), h(1, 4, ['a,b'])]).size).toBe(7);
  });
});
