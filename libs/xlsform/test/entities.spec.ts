// Entities: the meta/entity block, its binds and actions, save_to, and the checks of the
// entities sheet and of save_to, each with pyxform's row-numbered message (docs/xlsform.md,
// "Entities").
import { convertTables } from '@collect/xlsform';
import { xformFacts } from './xform-facts.js';

type Table = Array<Array<string>>;
const convert = (survey: Table, entities?: Table) => convertTables(entities ? { survey, entities } : { survey });
const errorOf = (survey: Table, entities?: Table) => {
  const r = convert(survey, entities);
  expect(r.xml).toBeNull();
  return r.errors.join('\n');
};

describe('entities output', () => {
  it('writes a create block under the survey meta with the 2024.1.0 version and namespace', () => {
    const r = convert([['type', 'name', 'label', 'save_to'], ['text', 'a', 'A', 'prop']], [['list_name', 'label'], ['trees', '${a}']]);
    expect(r.errors).toEqual([]);
    expect(r.xml).toContain('xmlns:entities="http://www.opendatakit.org/xforms/entities"');
    const f = xformFacts(r.xml!);
    expect(f.modelAttributes['entities:entities-version']).toBe('2024.1.0');
    expect(f.instance).toEqual(['/data', '/data/a', '/data/meta', '/data/meta/entity', '/data/meta/entity/label', '/data/meta/instanceID']);
    expect(f.instanceAttributes).toEqual(['/data/meta/entity@dataset=trees', '/data/meta/entity@create=1', '/data/meta/entity@id=']);
    expect(f.binds['/data/a']).toEqual({ type: 'string', 'entities:saveto': 'prop' });
    expect(f.binds['/data/meta/entity/label']).toEqual({ calculate: ' /data/a ', readonly: 'true()', type: 'string' });
    expect(f.modelActions).toEqual(['setvalue /data/meta/entity/@id event=odk-instance-first-load value=uuid()']);
  });

  it('writes an update block reading versions from the entity list, and no id setvalue', () => {
    const r = convert([['type', 'name', 'label'], ['text', 'a', 'A']], [['dataset', 'entity_id', 'update_if'], ['trees', '${a}', '${a} != ""']]);
    const f = xformFacts(r.xml!);
    expect(f.instanceAttributes.map((a) => a.split('@')[1])).toEqual(['dataset=trees', 'update=1', 'baseVersion=', 'trunkVersion=', 'branchId=', 'id=']);
    expect(f.binds['/data/meta/entity/@baseVersion'].calculate).toBe("instance('trees')/root/item[name= /data/a ]/__version");
    expect(f.binds['/data/meta/entity/@id']).toEqual({ readonly: 'true()', type: 'string', calculate: ' /data/a ' });
    expect(f.modelActions).toEqual([]);
    expect(f.instance).not.toContain('/data/meta/entity/label');
  });

  it('puts an entity referred to from a repeat inside it, with a new-repeat uuid, under version 2025.1.0', () => {
    const r = convert(
      [['type', 'name', 'label', 'save_to'], ['begin_repeat', 'r', 'R', ''], ['text', 'b', 'B', 'p'], ['end_repeat', '', '', '']],
      [['list_name', 'label'], ['plots', '${b}']],
    );
    const f = xformFacts(r.xml!);
    expect(f.modelAttributes['entities:entities-version']).toBe('2025.1.0');
    expect(f.instance).toContain('/data/r/meta/entity');
    expect(f.binds['/data/r/meta/entity/label'].calculate).toBe(' ../../../b ');
    expect(f.body).toContain('setvalue /data/r/meta/entity/@id event=odk-new-repeat value=uuid()');
  });

  it('takes the list name off a prefixed save_to when several lists are declared', () => {
    const r = convert(
      [['type', 'name', 'label', 'save_to'], ['text', 'a', 'A', 'one#x'], ['text', 'b', 'B', 'two#y']],
      [['list_name', 'label'], ['one', '${a}'], ['two', '${b}']],
    );
    // Two lists cannot share the survey's one meta block: the second has no container left.
    expect(r.errors[0]).toContain("[row : 3] On the 'entities' sheet, the entity declaration is invalid. Each container (survey, group, repeat) may have only one entity declaration");
  });
});

describe('entities checks', () => {
  const survey: Table = [['type', 'name', 'label', 'save_to'], ['text', 'a', 'A', '']];
  const withSaveTo = (saveTo: string): Table => [['type', 'name', 'label', 'save_to'], ['text', 'a', 'A', saveTo]];
  const oneList: Table = [['list_name', 'label'], ['trees', '${a}']];

  it('refuses save_to names that are reserved, start with two underscores or are no XML name', () => {
    expect(errorOf(withSaveTo('Label'), oneList)).toContain("[row : 2] On the 'survey' sheet, the 'save_to' value is invalid. Names used here must not be 'name' or 'label' (case-insensitive).");
    expect(errorOf(withSaveTo('__x'), oneList)).toContain('Names used here must not begin with two underscores.');
    expect(errorOf(withSaveTo('1x'), oneList)).toContain("the 'save_to' value is invalid. Names must begin with a letter or underscore.");
  });

  it('refuses a property saved twice, naming the other row', () => {
    const e = errorOf([['type', 'name', 'label', 'save_to'], ['text', 'a', 'A', 'p'], ['text', 'b', 'B', 'p']], oneList);
    expect(e).toContain("[row : 3] On the 'survey' sheet, the 'save_to' value is invalid. The save_to property 'p' is already assigned by row '2'.");
  });

  it('refuses save_to without an entities sheet, on a group row, and with an unknown or missing list prefix', () => {
    expect(errorOf(withSaveTo('p'))).toContain('To save entity properties using the save_to column, add an entities sheet and declare an entity.');
    expect(errorOf([['type', 'name', 'label', 'save_to'], ['begin_group', 'g', 'G', 'p'], ['text', 'a', 'A', ''], ['end_group', '', '', '']], oneList)).toContain(
      "Groups and repeats can't be saved as entity properties.",
    );
    expect(errorOf(withSaveTo('shrubs#p'), oneList)).toContain("The entity list name 'shrubs' was not found on the entities sheet.");
    expect(errorOf(withSaveTo('a#b#c'), oneList)).toContain("A 'save_to' value must have at most one '#' delimiter character.");
    expect(errorOf(withSaveTo('p'), [['list_name', 'label'], ['one', 'x'], ['two', 'y']])).toContain("'save_to' names must be prefixed with the entity 'list_name'");
  });

  it('checks each declaration: name rules, duplicates, label, entity_id and update_if', () => {
    expect(errorOf(survey, [['list_name', 'label'], ['a.b', 'x']])).toContain("[row : 2] On the 'entities' sheet, the 'dataset' value is invalid. Names used here must not contain a period.");
    expect(errorOf(survey, [['list_name', 'label'], ['__a', 'x']])).toContain('must not begin with two underscores');
    expect(errorOf(survey, [['list_name', 'label'], ['t', 'x'], ['t', 'y']])).toContain("[row : 3] On the 'entities' sheet, the 'list_name' value is invalid. The 'list_name' column must not have any duplicate names.");
    expect(errorOf(survey, [['list_name', 'label'], ['', 'x']])).toContain('Entity lists must have a name.');
    expect(errorOf(survey, [['list_name'], ['t']])).toContain("The entity list name 't' does not have a label");
    expect(errorOf(survey, [['list_name', 'label', 'update_if'], ['t', 'x', 'true()']])).toContain("does not have an 'entity_id' expression");
    expect(errorOf(survey, [['list_name', 'entity_id', 'create_if'], ['t', '${a}', 'true()']])).toContain("does not have an 'update_if' expression");
    expect(errorOf(survey, [['list_name', 'label', 'colour'], ['t', 'x', 'red']])).toContain("The following column(s) are not supported by this version of pyxform: 'colour'.");
    expect(errorOf(survey, [['list_name', 'label'], ['t', '${nope}']])).toContain("[row : 2] On the 'entities' sheet, the 'label' value is invalid. Reference variables must contain a name from the 'survey' sheet. Could not find the name 'nope'.");
  });

  it('refuses references from sibling repeats to one list', () => {
    const e = errorOf(
      [
        ['type', 'name', 'label', 'save_to'],
        ['begin_repeat', 'r1', 'R1', ''], ['text', 'a', 'A', 'p'], ['end_repeat', '', '', ''],
        ['begin_repeat', 'r2', 'R2', ''], ['text', 'b', 'B', 'q'], ['end_repeat', '', '', ''],
      ],
      oneList,
    );
    expect(e).toContain("[row : 6] On the 'survey' sheet, the 'save_to' value is invalid. The entity list name 'trees' has a reference in container scope '/survey/r1' which is not compatible with this 'save_to' reference in scope '/survey/r2'.");
  });
});
