import { JSDOM } from 'jsdom';

/** The document pyxform writes around an entity form's model (instance and binds) and body. */
function entityFormDocument(title: string, model: string, body: string): string {
  return `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:entities="http://www.opendatakit.org/xforms/entities" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:jr="http://openrosa.org/javarosa" xmlns:odk="http://www.opendatakit.org/xforms" xmlns:orx="http://openrosa.org/xforms">
  <h:head>
    <h:title>${title}</h:title>
    <model entities:entities-version="2024.1.0" odk:xforms-version="1.0.0">
${model}
    </model>
  </h:head>
  <h:body>
${body}
  </h:body>
</h:html>`;
}

/**
 * Entity forms written by hand as pyxform 4.x writes them (entities-version 2024.1.0): a
 * registration form that creates a `trees` entity with two saved properties, and a follow-up form
 * that picks a tree from `trees.csv` (select_one_from_file) and updates it. Tests of entity
 * outputs share them (docs/entities.md, "Follow-up forms and their list attachment").
 */
export function registrationXForm(idString = 'tree_registration', list = 'trees', version = '1'): string {
  return entityFormDocument('Tree registration', `      <instance>
        <data id="${idString}" version="${version}">
          <species/>
          <circumference/>
          <meta>
            <instanceID/>
            <entity create="1" dataset="${list}" id="">
              <label/>
            </entity>
          </meta>
        </data>
      </instance>
      <bind nodeset="/data/species" type="string" entities:saveto="species"/>
      <bind nodeset="/data/circumference" type="int" entities:saveto="circumference_cm"/>
      <bind jr:preload="uid" nodeset="/data/meta/instanceID" readonly="true()" type="string"/>
      <bind nodeset="/data/meta/entity/@id" readonly="true()" type="string"/>
      <setvalue event="odk-instance-first-load" readonly="true()" ref="/data/meta/entity/@id" type="string" value="uuid()"/>
      <bind calculate="concat( /data/species , ' ', /data/circumference , 'cm')" nodeset="/data/meta/entity/label" readonly="true()" type="string"/>`, `    <input ref="/data/species"><label>Species</label></input>
    <input ref="/data/circumference"><label>Circumference (cm)</label></input>`);
}

export function followUpXForm(idString = 'tree_followup', list = 'trees', version = '1'): string {
  return entityFormDocument('Tree follow-up', `      <instance>
        <data id="${idString}" version="${version}">
          <tree/>
          <circumference/>
          <meta>
            <instanceID/>
            <entity baseVersion="" branchId="" dataset="${list}" id="" trunkVersion="" update="1"/>
          </meta>
        </data>
      </instance>
      <instance id="${list}" src="jr://file-csv/${list}.csv"/>
      <bind nodeset="/data/tree" type="string"/>
      <bind nodeset="/data/circumference" type="int" entities:saveto="circumference_cm"/>
      <bind jr:preload="uid" nodeset="/data/meta/instanceID" readonly="true()" type="string"/>
      <bind calculate=" /data/tree " nodeset="/data/meta/entity/@id" readonly="true()" type="string"/>
      <bind calculate="instance('${list}')/root/item[name= /data/tree ]/__version" nodeset="/data/meta/entity/@baseVersion" readonly="true()" type="string"/>
      <bind calculate="instance('${list}')/root/item[name= /data/tree ]/__trunkVersion" nodeset="/data/meta/entity/@trunkVersion" readonly="true()" type="string"/>
      <bind calculate="instance('${list}')/root/item[name= /data/tree ]/__branchId" nodeset="/data/meta/entity/@branchId" readonly="true()" type="string"/>`, `    <select1 ref="/data/tree">
      <label>Tree</label>
      <itemset nodeset="instance('${list}')/root/item"><value ref="name"/><label ref="label"/></itemset>
    </select1>
    <input ref="/data/circumference"><label>Circumference now (cm)</label></input>`);
}

/** The follow-up form without its entity block: it only reads `<list>.csv` (a lookup). */
export function lookupXForm(idString: string, list: string): string {
  return followUpXForm(idString, list)
    .replace(/<entity [^>]*\/>/, '')
    .replace(/<bind [^>]*meta\/entity[^>]*\/>/g, '')
    .replace(/ entities:saveto="[^"]*"/g, '');
}

/** A form of the same shape that names no list (the tests' baseline). */
export function plainXForm(idString = 'tree_plain'): string {
  return followUpXForm(idString, 'trees')
    .replace(/ entities:entities-version="[^"]*"/, '')
    .replace(/<entity [^>]*\/>/, '')
    .replace(/<instance id="trees"[^>]*\/>/, '')
    .replace(/<bind [^>]*meta\/entity[^>]*\/>/g, '')
    .replace(/ entities:saveto="[^"]*"/g, '')
    .replace(/<itemset[^]*<\/itemset>/, '<item><label>A</label><value>a</value></item>');
}

/** A registration submission as ODK Collect posts it. */
export function registrationSubmission(o: { uuid: string; species: string; circumference: number; instanceId: string; idString?: string; version?: string }): string {
  return `<?xml version="1.0"?><data xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" id="${o.idString ?? 'tree_registration'}" version="${o.version ?? '1'}">`
    + `<species>${o.species}</species><circumference>${o.circumference}</circumference>`
    + `<meta><instanceID>uuid:${o.instanceId}</instanceID><entity create="1" dataset="trees" id="${o.uuid}"><label>${o.species} ${o.circumference}cm</label></entity></meta></data>`;
}

export interface EngineNode {
  nodeType: string;
  currentState: { reference: string; children?: EngineNode[] | null; value?: unknown; valueOptions?: Array<{ value: string; label?: { asString?: string } | null }> };
  setValue?: (v: unknown) => unknown;
  selectValue?: (v: string) => unknown;
}

/** The engine is written for browsers: jsdom gives it a DOM, as in libs/xlsform/test/engine.spec.ts. */
export function installDom(): void {
  const { window } = new JSDOM('');
  const g = globalThis as Record<string, unknown>;
  g.__dirname = '/';
  for (const k of ['DOMParser', 'XMLSerializer', 'document', 'Node', 'Element', 'Document', 'NodeFilter', 'XPathResult']) g[k] = (window as unknown as Record<string, unknown>)[k];
}

export function engineNodes(root: EngineNode): EngineNode[] {
  return [root, ...(root.currentState.children ?? []).flatMap(engineNodes)];
}

export function engineNode(root: EngineNode, ref: string): EngineNode {
  const found = engineNodes(root).find((n) => n.currentState.reference === ref);
  if (!found) throw new Error(`no engine node ${ref}; have ${engineNodes(root).map((n) => n.currentState.reference).join(', ')}`);
  return found;
}
