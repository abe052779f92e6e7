import { validateInput } from '@collect/platform';
import { JsonFormDefinitionDto } from './form.dto.js';
import { parseJsonForm, parseXForm } from './form-definition.js';

describe('form definitions', () => {
  it('refuses DTDs and entity declarations before parsing', () => {
    expect(() => parseXForm('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><h:html/>')).toThrow(/DOCTYPE/);
    expect(() => parseXForm('<h:html><h:head>')).toThrow(/Malformed XML/);
  });

  it('round-trips a JSON definition through its rendered XForm', async () => {
    const parsed = parseJsonForm(await validateInput(JsonFormDefinitionDto, {
      id_string: 'trip', title: 'Trip', version: '7',
      fields: [
        { name: 'who', type: 'text', label: 'Who' },
        { name: 'where', type: 'geopoint' },
        { name: 'g', type: 'group', children: [{ name: 'pic', type: 'photo' }, { name: 'n', type: 'int' }] },
        { name: 'r', type: 'repeat', children: [{ name: 'clip', type: 'video' }] },
        { name: 'pick', type: 'select_one' },
      ],
    }));
    expect(parsed.fields.map((f) => `${f.xpath}:${f.type}${f.repeat ? `@${f.repeat}` : ''}`)).toEqual([
      'who:text', 'where:geopoint', 'g:group', 'g/pic:image', 'g/n:integer', 'r:repeat', 'r/clip:video@r', 'pick:select one',
    ]);
    const again = parseXForm(parsed.xml);
    expect(again).toMatchObject({ idString: 'trip', title: 'Trip', version: '7', rootName: 'data' });
    expect(again.fields).toEqual(parsed.fields);
  });

  it('reports every problem of a JSON definition at once (JsonFormDefinitionDto)', async () => {
    const refused = await validateInput(JsonFormDefinitionDto, { id_string: '9x', fields: [{ name: 'a', type: 'text' }, { name: 'a', type: 'text' }, { name: 'meta', type: 'text' }, { name: 'g', type: 'group' }] }).then(
      () => null,
      (err: { getResponse?(): Record<string, string[]> }) => { if (!err.getResponse) throw err; return err.getResponse(); },
    );
    expect(Object.keys(refused!).sort()).toEqual(['fields', 'id_string']);
    expect(refused!.fields).toEqual(['Duplicate name "a".', '[2].name: "meta" holds the submission metadata; choose another name.', '[3].children: This field is required.']);
  });
});
