import { FOLLOW_UP_XFORM, REGISTRATION_XFORM, REPEAT_XFORM } from '../../../test/entities-fixtures.js';
import { formEntities, FormEntitiesError } from './form-entities.js';

/** Entity blocks read from XForms as pyxform 4.5 writes them (docs/entities.md "Forms"). */
describe('formEntities', () => {
  it('reads a registration block: its list, create, the save_to properties and their questions', () => {
    expect(formEntities(REGISTRATION_XFORM, new Set())).toEqual({
      version: '2024.1.0',
      declarations: [{
        list: 'trees', path: 'meta/entity', repeat: null, actions: ['create'], defaults: { dataset: 'trees', create: '1' },
        properties: [{ name: 'species', question: 'species' }, { name: 'circumference_cm', question: 'circumference' }],
      }],
    });
  });

  it('reads a follow-up block (update only) and a block in a repeat (one per item)', () => {
    expect(formEntities(FOLLOW_UP_XFORM, new Set())!.declarations[0]).toMatchObject({ list: 'trees', actions: ['update'], properties: [{ name: 'circumference_cm' }, { name: 'health_status' }] });
    expect(formEntities(REPEAT_XFORM, new Set(['members']))!.declarations).toEqual([expect.objectContaining({
      list: 'people', path: 'members/meta/entity', repeat: 'members', properties: [{ name: 'full_name', question: 'members/member_name' }, { name: 'age', question: 'members/age' }],
    })]);
  });

  it('a form without an entities version has no blocks', () => {
    expect(formEntities('<h:html xmlns:h="http://www.w3.org/1999/xhtml"><h:head><model/></h:head></h:html>', new Set())).toBeNull();
  });

  it('refuses what pyxform refuses: a reserved or doubled property, a list name with "." or "__"', () => {
    const bad = [
      REGISTRATION_XFORM.replace('entities:saveto="species"', 'entities:saveto="label"'),
      REGISTRATION_XFORM.replace('entities:saveto="species"', 'entities:saveto="circumference_cm"'),
      REGISTRATION_XFORM.replace('dataset="trees"', 'dataset="tr.ees"'),
      REGISTRATION_XFORM.replace('dataset="trees"', 'dataset="__trees"'),
      REGISTRATION_XFORM.replace('entities:entities-version="2024.1.0"', 'entities:entities-version="2099.1.0"'),
    ];
    for (const xml of bad) expect(() => formEntities(xml, new Set())).toThrow(FormEntitiesError);
  });
});
