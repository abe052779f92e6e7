// Checks and constructs matched to pyxform 4.5: reference-geometry targets, the reserved name
// `meta` in groups, image `app=` package names, range tick_labelset rules, loops, osm tags,
// instance:: attributes and undeclared attribute prefixes (docs/xlsform.md, "What is supported").
import { convertTables, type WorkbookTables } from '@collect/xlsform';
import { xformFacts } from './xform-facts.js';

const errors = (tables: WorkbookTables) => convertTables(tables).errors.join('\n');

describe('checks pyxform makes', () => {
  it('refuses a reference-geometry that names no secondary instance nor a repeat, and accepts a choice list or ${repeat}', () => {
    const survey = (target: string) => [['type', 'name', 'label', 'parameters'], ['begin_repeat', 'r', 'R', ''], ['geopoint', 'p', 'P', ''], ['end_repeat', '', '', ''], ['geotrace', 'g', 'G', `reference-geometry=${target}`]];
    expect(errors({ survey: survey('nowhere') })).toContain("[row : 5] On the 'survey' sheet, the 'parameters' value is invalid. The 'reference-geometry' parameter must either match a secondary instance name");
    expect(convertTables({ survey: survey('${r}') }).errors).toEqual([]);
    expect(convertTables({ survey: survey('fields'), choices: [['list_name', 'name', 'label'], ['fields', 'a', 'A']] }).errors).toEqual([]);
  });

  it("reserves the name 'meta' inside groups too", () => {
    expect(errors({ survey: [['type', 'name', 'label'], ['begin_group', 'g', 'G'], ['text', 'meta', 'M'], ['end_group', '', '']] })).toContain(
      "[row : 3] On the 'survey' sheet, the 'name' value 'meta' is invalid. The name 'meta' is reserved for form metadata.",
    );
  });

  it("refuses an image app= that is no Android package name", () => {
    const survey = (app: string) => ({ survey: [['type', 'name', 'label', 'parameters'], ['image', 'i', 'I', `app=${app} max-pixels=100`]] });
    expect(errors(survey('camera'))).toContain("[row : 2] Parameter 'app' has an invalid Android package name - the package name must have at least one '.' separator.");
    expect(errors(survey('org.1cam'))).toContain('a digit cannot be the first character in a package name segment.');
    expect(convertTables(survey('org.example.camera')).xml).toContain('intent="org.example.camera"');
  });

  it('refuses tick_labelset values off the step, and no-ticks lists other than start and end', () => {
    const form = (appearance: string, values: string[]) => ({
      survey: [['type', 'name', 'label', 'parameters', 'appearance'], ['range', 'r', 'R', 'start=0 end=10 step=2 tick_labelset=ticks', appearance]],
      choices: [['list_name', 'name', 'label'], ...values.map((v) => ['ticks', v, `T${v}`])],
    });
    expect(errors(form('', ['0', '3']))).toContain("the parameter 'tick_labelset' choices' values must be equal to the start of the range plus a multiple of 'step'.");
    expect(errors(form('no-ticks', ['0', '4']))).toContain("choice list values may onlymatch the range 'start' and 'end' values when the 'appearance' is 'no-ticks'.");
    expect(convertTables(form('no-ticks', ['0', '10'])).errors).toEqual([]);
  });

  it('refuses an attribute whose namespace prefix is not declared, and writes it once declared', () => {
    const survey = [['type', 'name', 'label', 'bind::esri:fieldLength'], ['text', 'a', 'A', '50']];
    expect(errors({ survey })).toContain("[row : 2] The attribute 'esri:fieldLength' uses the namespace prefix 'esri', which the form does not declare.");
    const ok = convertTables({ survey, settings: [['namespaces'], ['esri="http://esri.com/xforms"']] });
    expect(xformFacts(ok.xml!).binds['/data/a']['esri:fieldLength']).toBe('50');
  });
});

describe('constructs pyxform writes', () => {
  it('expands begin loop over LIST into a group per choice, filling %(name)s and %(label)s, leaving out none', () => {
    const r = convertTables({
      survey: [['type', 'name', 'label'], ['begin loop over crops', 'harvest', 'Harvest'], ['integer', 'kg', 'Kilograms of %(label)s (%(name)s)'], ['end loop', '', '']],
      choices: [['list_name', 'name', 'label'], ['crops', 'maize', 'Maize'], ['crops', 'beans', 'Beans'], ['crops', 'none', 'None']],
    });
    const f = xformFacts(r.xml!);
    expect(f.instance).toEqual(['/data', '/data/harvest', '/data/harvest/maize', '/data/harvest/maize/kg', '/data/harvest/beans', '/data/harvest/beans/kg', '/data/meta', '/data/meta/instanceID']);
    expect(f.labels['/data/harvest/beans/kg']).toBe('Kilograms of Beans (beans)');
    expect(f.labels['/data/harvest/maize']).toBe('Maize');
  });

  it('writes the osm sheet tags of an osm question and instance:: columns as instance attributes', () => {
    const r = convertTables({
      survey: [['type', 'name', 'label', 'instance::ex:role'], ['osm building', 'b', 'Building', 'main']],
      osm: [['list_name', 'name', 'label'], ['building', 'height', 'Height']],
      settings: [['namespaces'], ['ex="http://example.org/x"']],
    });
    expect(r.xml).toContain('<tag key="height">');
    expect(xformFacts(r.xml!).instanceAttributes).toEqual(['/data/b@ex:role=main']);
  });
});
