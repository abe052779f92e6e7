import { child, parseXml } from './xml.js';
import { fieldsOfAllVersions, parseXForm } from '../forms/form-definition.js';
import { newVersion } from '../forms/forms.service.js';
import { setInstanceVersion, withFormhubUuid, XFormEditError } from './xform-edit.js';

const HEX = '0123456789abcdef0123456789abcdef';

function xform(instance: string, binds = '', before = ''): string {
  return `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml">
  <h:head><h:title>T</h:title>
    <model>${before}
      <instance>${instance}</instance>
      <instance id="lookup" src="jr://file-csv/lookup.csv"/>
      <instance id="inline"><root><item><name>a</name></item></root></instance>${binds}
    </model>
  </h:head>
  <h:body><input ref="/data/q"><label>Q</label></input></h:body>
</h:html>`;
}

function formhubOf(xml: string) {
  const model = child(child(parseXml(xml), 'head'), 'model')!;
  const root = model.children.find((c) => c.name === 'instance' && !c.attrs.id)!.children[0];
  const binds = model.children.filter((c) => c.name === 'bind' && c.attrs.nodeset === `/${root.name}/formhub/uuid`);
  return { uuid: child(child(root, 'formhub'), 'uuid'), binds, root };
}

describe('XForm edits on the stored text', () => {
  it('adds formhub/uuid and its calculate bind when absent; the document stays parseable and the field list unchanged', () => {
    const xml = xform('<data id="f"><q/><meta><instanceID/></meta></data>');
    const out = withFormhubUuid(xml, 'data', HEX);
    const { uuid, binds, root } = formhubOf(out);
    expect(uuid).toBeDefined();
    expect(root.children[0].name).toBe('formhub');
    expect(binds.map((b) => b.attrs.calculate)).toEqual([`'${HEX}'`]);
    expect(parseXForm(out).fields).toEqual(parseXForm(xml).fields);
    // Idempotent: a second pass changes nothing.
    expect(withFormhubUuid(out, 'data', HEX)).toBe(out);
  });

  it("keeps an existing formhub/uuid in place and points its bind at this form's uuid (a copy of another form)", () => {
    const xml = xform('<data id="f"><q/><formhub><uuid/></formhub></data>', `<bind nodeset="/data/formhub/uuid" type="string" calculate="'ffffffffffffffffffffffffffffffff'"/>`);
    const { uuid, binds, root } = formhubOf(withFormhubUuid(xml, 'data', HEX));
    expect(uuid).toBeDefined();
    expect(root.children.map((c) => c.name)).toEqual(['q', 'formhub']);
    expect(binds.map((b) => b.attrs.calculate)).toEqual([`'${HEX}'`]);
    const noUuid = formhubOf(withFormhubUuid(xform('<data id="f"><formhub><other/></formhub><q/></data>'), 'data', HEX));
    expect(noUuid.uuid).toBeDefined();
    const empty = formhubOf(withFormhubUuid(xform('<data id="f"><formhub/><q/></data>'), 'data', HEX));
    expect(empty.uuid).toBeDefined();
  });

  it('is not fooled by comments, CDATA or a secondary instance before the primary one', () => {
    const xml = xform('<!-- <instance><fake/></instance> --><data id="f"><![CDATA[<x>]]><q/></data>', '', '<!-- <model> -->');
    const out = withFormhubUuid(xml, 'data', HEX);
    expect(formhubOf(out).uuid).toBeDefined();
    const secondaryFirst = xform('<data id="f"><q/></data>').replace('<instance>', '<instance id="pre"><list><x/></list></instance><instance>');
    const edited = withFormhubUuid(secondaryFirst, 'data', HEX);
    expect(formhubOf(edited).root.children.map((c) => c.name)).toEqual(['formhub', 'q']);
    expect(edited).toContain('<instance id="pre"><list><x/></list></instance>');
  });

  it('sets or adds the version attribute of the primary instance root only', () => {
    const xml = xform(`<data id="f" version='1'><q/></data>`);
    const v2 = setInstanceVersion(xml, '2 & "3"');
    expect(parseXForm(v2).version).toBe('2 & "3"');
    expect(v2).toContain('<instance id="lookup" src="jr://file-csv/lookup.csv"/>');
    expect(parseXForm(setInstanceVersion(xform('<data id="f"><q/></data>'), '7')).version).toBe('7');
    // jr:version-like attributes are not the version.
    expect(parseXForm(setInstanceVersion(xform('<data id="f" orx:version="x"><q/></data>'), '8')).version).toBe('8');
  });

  it('refuses a document without a primary instance', () => {
    expect(() => withFormhubUuid('<h:html xmlns:h="x"><h:head/></h:html>', 'data', HEX)).toThrow(XFormEditError);
  });
});

describe('versions', () => {
  it('makes a UTC timestamp version the form never had', () => {
    const now = new Date('2026-11-24T01:02:03.456Z');
    expect(newVersion(new Set(), now)).toBe('20261124010203');
    expect(newVersion(new Set(['20261124010203', '20261124010203-2']), now)).toBe('20261124010203-3');
  });

  it("keeps older versions' fields after the newest version's, inside their group when it still exists", () => {
    const f = (xpath: string) => ({ name: xpath.split('/').pop()!, xpath, type: 'text', label: null });
    const newest = [f('a'), f('g'), f('g/x'), f('c')];
    const older = [f('a'), f('b'), f('g'), f('g/x'), f('g/old'), f('h'), f('h/y')];
    expect(fieldsOfAllVersions([newest, older]).map((x) => x.xpath)).toEqual(['a', 'g', 'g/x', 'g/old', 'c', 'b', 'h', 'h/y']);
    expect(fieldsOfAllVersions([])).toEqual([]);
  });
});
