import { contentHash, geolocationOf, recordFromJson, recordFromXml, renderInstanceXml } from './submission-record.js';
import { parseXml } from '../openrosa/xml.js';
import type { FormField } from '../forms/form.entity.js';

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

  it('joins plain lists (select multiple) and refuses bad keys and mixed lists', () => {
    expect(recordFromJson({ colours: ['red', 'blue'] })).toEqual({ colours: 'red blue' });
    expect(() => recordFromJson({ 'bad key': 'x' })).toThrow();
    expect(() => recordFromJson({ mixed: [{ a: 1 }, 'b'] })).toThrow();
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
