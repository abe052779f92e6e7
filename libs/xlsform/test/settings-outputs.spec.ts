// Settings pyxform 4.5 writes on the form's root (settings-sheet bind::, attribute::,
// instance::, instance_xmlns, SMS prefix/delimiter, client_editable), add_none_option, and
// instance() expressions in labels and hints written as <output/> (docs/xlsform.md, "What is
// supported" and "Output format"). Expected XML as pyxform 4.5.0 writes it for the same tables.
import { convertTables, type WorkbookTables } from '@collect/xlsform';
import { xformFacts } from './xform-facts.js';

const survey = [['type', 'name', 'label'], ['text', 'q1', 'Q1']];
const xml = (tables: WorkbookTables) => {
  const r = convertTables(tables);
  expect(r.errors).toEqual([]);
  return r.xml!;
};

describe('settings written on the root', () => {
  it('writes settings-sheet bind:: columns as a bind on the root element, declared prefixes only', () => {
    const settings = [['namespaces', 'bind::ct:icon', 'bind::ct:immersive', 'bind::relevant'], ['ct="http://cybertracker.org/xforms"', 'wcs.svg', 'yes', 'yes']];
    const f = xformFacts(xml({ survey, settings }));
    // relevant is one of the attributes whose yes/no becomes true()/false(); ct: attributes stay as written.
    expect(f.binds['/data']).toEqual({ 'ct:icon': 'wcs.svg', 'ct:immersive': 'yes', relevant: 'true()' });
    expect(xml({ survey, settings })).toContain('<bind nodeset="/data" ct:icon="wcs.svg" ct:immersive="yes" relevant="true()"/>\n      <bind nodeset="/data/q1"');
    const undeclared = convertTables({ survey, settings: [['bind::ct:icon'], ['wcs.svg']] });
    expect(undeclared.errors.join()).toContain("The attribute 'ct:icon' uses the namespace prefix 'ct', which the form does not declare.");
  });

  it('writes instance::, attribute::, id, instance_xmlns, version, prefix and delimiter on the primary instance root, in that order', () => {
    const settings = [
      ['attribute::xyz', 'instance::abc', 'prefix', 'delimiter', 'instance_xmlns', 'version'],
      ['1234', '${q1}', 'sms_test', '~', 'http://example.com/xforms', '3'],
    ];
    expect(xml({ survey, settings })).toContain('<data abc=" /data/q1 " xyz="1234" id="data" xmlns="http://example.com/xforms" version="3" odk:prefix="sms_test" odk:delimiter="~">');
    expect(xformFacts(xml({ survey })).rootAttributes).toEqual({ id: 'data' });
  });

  it('writes client_editable as the submission odk:client-editable, only when yes', () => {
    expect(xformFacts(xml({ survey, settings: [['client_editable'], ['true']] })).submission).toEqual({ 'odk:client-editable': 'true' });
    expect(xformFacts(xml({ survey, settings: [['client_editable'], ['no']] })).submission).toBeNull();
    expect(xformFacts(xml({ survey, settings: [['client_editable', 'auto_send'], ['false', 'true']] })).submission).toEqual({ 'orx:auto-send': 'true' });
  });
});

describe('add_none_option', () => {
  const settings = [['add_none_option'], ['yes']];
  const none = "(.='none' or not(selected(., 'none')))";

  it("constrains the first select_multiple of each list, after its own constraint, and leaves the lists' items alone", () => {
    const f = xformFacts(xml({
      settings,
      survey: [
        ['type', 'name', 'label', 'constraint'],
        ['select_multiple c1', 'q1', 'Q1', ". != 'x'"],
        ['select_multiple c1', 'q2', 'Q2', ''],
        ['select_one c1', 'q3', 'Q3', ''],
        ['select_multiple c2', 'q4', 'Q4', ''],
      ],
      choices: [['list_name', 'name', 'label'], ['c1', 'a', 'A'], ['c2', 'b', 'B']],
    }));
    expect(f.binds['/data/q1'].constraint).toBe(`. != 'x' and ${none}`);
    expect(f.binds['/data/q2'].constraint).toBeUndefined();
    expect(f.binds['/data/q3'].constraint).toBeUndefined();
    expect(f.binds['/data/q4'].constraint).toBe(none);
    expect(f.instances).toEqual({ c1: ['a'], c2: ['b'] });
  });

  it('adds nothing to a list that already has none / None, nor without the setting', () => {
    const tables = (list: string[][]) => ({ survey: [['type', 'name', 'label'], ['select_multiple c1', 'q1', 'Q1']], choices: [['list_name', 'name', 'label'], ...list] });
    expect(xformFacts(xml({ settings, ...tables([['c1', 'none', 'None']]) })).binds['/data/q1'].constraint).toBeUndefined();
    expect(xformFacts(xml({ settings, ...tables([['c1', 'none', 'none']]) })).binds['/data/q1'].constraint).toBe(none);
    expect(xformFacts(xml(tables([['c1', 'a', 'A']]))).binds['/data/q1'].constraint).toBeUndefined();
  });

  it('refuses a select_multiple that does not carry its choices (from a file, randomized)', () => {
    expect(convertTables({ settings, survey: [['type', 'name', 'label'], ['select_multiple_from_file a.csv', 'q1', 'Q1']] }).errors).toEqual(['There should be choices for this question.']);
    const randomized = { settings, survey: [['type', 'name', 'label', 'parameters'], ['select_multiple c1', 'q1', 'Q1', 'randomize=true']], choices: [['list_name', 'name', 'label'], ['c1', 'a', 'A']] };
    expect(convertTables(randomized).errors).toEqual(['There should be choices for this question.']);
  });
});

describe('instance() expressions in labels and hints', () => {
  const choices = [['list_name', 'name', 'label'], ['c1', 'y', 'Yes'], ['c1', 'n', 'No']];

  it('writes each expression as one <output/>, references inside it as paths, text around it kept', () => {
    const out = xml({
      survey: [
        ['type', 'name', 'label', 'hint'],
        ['select_one c1', 'q1', 'Q1', ''],
        ['note', 'n', "Answer: instance('c1')/root/item[name = ${q1}]/label is it, ${q1} too.", 'instance("c1")/root/item[name <> 1 and "<>&" = "1"]/label x < 2'],
      ],
      choices,
    });
    expect(out).toContain(`<label> Answer: <output value="instance('c1')/root/item[name =  /data/q1 ]/label"/> is it, <output value=" /data/q1 "/> too. </label>`);
    // pyxform finds the expression in the escaped text and keeps that escaping in the value.
    expect(out).toContain('<hint><output value="instance(&quot;c1&quot;)/root/item[name &amp;lt;&amp;gt; 1 and &quot;&amp;lt;&amp;gt;&amp;amp;&quot; = &quot;1&quot;]/label"/> x &lt; 2 </hint>');
  });

  it('uses current() for a reference to the same repeat inside the predicate, in itext too', () => {
    const f = xformFacts(xml({
      survey: [
        ['type', 'name', 'label::en'],
        ['begin_repeat', 'r', 'R'],
        ['select_one c1', 'q1', 'Q1'],
        ['note', 'n', "Don't instance('c1')/root/item[name = ${q1}]/label [${q1}]"],
        ['end_repeat', '', ''],
      ],
      choices,
    }));
    // The apostrophe opens a string literal for pyxform's lexer, so the expression is not found;
    // a reference in brackets of a text holding instance( still reads current().
    expect(f.itext.en['/data/r/n:label'].long).toBe(`Don't instance('c1')/root/item[name = <output value=" current()/../q1 "/>]/label [<output value=" current()/../q1 "/>]`);
    const g = xformFacts(xml({ survey: [['type', 'name', 'label::en'], ['begin_repeat', 'r', 'R'], ['select_one c1', 'q1', 'Q1'], ['note', 'n', "instance('c1')/root/item[name = ${q1}]/label [${q1}]"], ['end_repeat', '', '']], choices }));
    expect(g.itext.en['/data/r/n:label'].long).toBe(`<output value="instance('c1')/root/item[name =  current()/../q1 ]/label"/> [<output value=" current()/../q1 "/>]`);
  });
});
