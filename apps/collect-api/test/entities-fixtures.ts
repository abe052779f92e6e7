/**
 * XForms as pyxform 4.5 writes them for an XLSForm with an `entities` sheet (converted with
 * pyxform 4.5.0 from the sheets named in each comment), and instances as ODK Collect fills them.
 */

/** survey: species (save_to species), circumference (save_to circumference_cm), intake_notes; entities: list_name trees, label concat(...). */
export const REGISTRATION_XFORM = `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:ev="http://www.w3.org/2001/xml-events" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" xmlns:odk="http://www.opendatakit.org/xforms" xmlns:entities="http://www.opendatakit.org/xforms/entities">
  <h:head>
    <h:title>Trees</h:title>
    <model odk:xforms-version="1.0.0" entities:entities-version="2024.1.0">
      <instance>
        <data id="trees_registration" version="1">
          <species/>
          <circumference/>
          <intake_notes/>
          <meta>
            <entity dataset="trees" create="1" id="">
              <label/>
            </entity>
            <instanceID/>
          </meta>
        </data>
      </instance>
      <bind nodeset="/data/species" type="string" entities:saveto="species"/>
      <bind nodeset="/data/circumference" type="int" entities:saveto="circumference_cm"/>
      <bind nodeset="/data/intake_notes" type="string"/>
      <bind nodeset="/data/meta/entity/@id" readonly="true()" type="string"/>
      <setvalue ref="/data/meta/entity/@id" event="odk-instance-first-load" value="uuid()"/>
      <bind nodeset="/data/meta/entity/label" calculate="concat( /data/species , ' ',  /data/circumference )" readonly="true()" type="string"/>
      <bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>
    </model>
  </h:head>
  <h:body>
    <input ref="/data/species">
      <label>Species</label>
    </input>
    <input ref="/data/circumference">
      <label>Circumference</label>
    </input>
    <input ref="/data/intake_notes">
      <label>Notes</label>
    </input>
  </h:body>
</h:html>
`;

/** survey: select_one_from_file trees.csv tree, circumference (save_to circumference_cm), health (save_to health_status); entities: list_name trees, entity_id ${tree}. */
export const FOLLOW_UP_XFORM = `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:ev="http://www.w3.org/2001/xml-events" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" xmlns:odk="http://www.opendatakit.org/xforms" xmlns:entities="http://www.opendatakit.org/xforms/entities">
  <h:head>
    <h:title>Tree follow-up</h:title>
    <model odk:xforms-version="1.0.0" entities:entities-version="2024.1.0">
      <instance>
        <data id="trees_followup" version="1">
          <tree/>
          <circumference/>
          <health/>
          <meta>
            <entity dataset="trees" update="1" baseVersion="" trunkVersion="" branchId="" id=""/>
            <instanceID/>
          </meta>
        </data>
      </instance>
      <instance id="trees" src="jr://file-csv/trees.csv"/>
      <bind nodeset="/data/tree" type="string"/>
      <bind nodeset="/data/circumference" type="int" entities:saveto="circumference_cm"/>
      <bind nodeset="/data/health" type="string" entities:saveto="health_status"/>
      <bind nodeset="/data/meta/entity/@baseVersion" calculate="instance('trees')/root/item[name= /data/tree ]/__version" readonly="true()" type="string"/>
      <bind nodeset="/data/meta/entity/@trunkVersion" calculate="instance('trees')/root/item[name= /data/tree ]/__trunkVersion" readonly="true()" type="string"/>
      <bind nodeset="/data/meta/entity/@branchId" calculate="instance('trees')/root/item[name= /data/tree ]/__branchId" readonly="true()" type="string"/>
      <bind nodeset="/data/meta/entity/@id" readonly="true()" type="string" calculate=" /data/tree "/>
      <bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>
    </model>
  </h:head>
  <h:body>
    <select1 ref="/data/tree">
      <label>Tree</label>
      <itemset nodeset="instance('trees')/root/item">
        <value ref="name"/>
        <label ref="label"/>
      </itemset>
    </select1>
    <input ref="/data/circumference">
      <label>Circumference</label>
    </input>
    <input ref="/data/health">
      <label>Health</label>
    </input>
  </h:body>
</h:html>
`;

/** survey: village, repeat members (member_name save_to full_name, age save_to age); entities: list_name people, label ${member_name}. */
export const REPEAT_XFORM = `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:ev="http://www.w3.org/2001/xml-events" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" xmlns:odk="http://www.opendatakit.org/xforms" xmlns:entities="http://www.opendatakit.org/xforms/entities">
  <h:head>
    <h:title>Household</h:title>
    <model odk:xforms-version="1.0.0" entities:entities-version="2025.1.0">
      <instance>
        <data id="household" version="1">
          <village/>
          <members jr:template="">
            <member_name/>
            <age/>
            <meta>
              <entity dataset="people" create="1" id="">
                <label/>
              </entity>
            </meta>
          </members>
          <members>
            <member_name/>
            <age/>
            <meta>
              <entity dataset="people" create="1" id="">
                <label/>
              </entity>
            </meta>
          </members>
          <meta>
            <instanceID/>
          </meta>
        </data>
      </instance>
      <bind nodeset="/data/village" type="string"/>
      <bind nodeset="/data/members/member_name" type="string" entities:saveto="full_name"/>
      <bind nodeset="/data/members/age" type="int" entities:saveto="age"/>
      <bind nodeset="/data/members/meta/entity/@id" readonly="true()" type="string"/>
      <setvalue ref="/data/members/meta/entity/@id" event="odk-instance-first-load" value="uuid()"/>
      <bind nodeset="/data/members/meta/entity/label" calculate=" ../../../member_name " readonly="true()" type="string"/>
      <bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>
    </model>
  </h:head>
  <h:body>
    <input ref="/data/village">
      <label>Village</label>
    </input>
    <group ref="/data/members">
      <label>Members</label>
      <repeat nodeset="/data/members">
        <input ref="/data/members/member_name">
          <label>Name</label>
        </input>
        <input ref="/data/members/age">
          <label>Age</label>
        </input>
        <setvalue ref="/data/members/meta/entity/@id" event="odk-new-repeat" value="uuid()"/>
      </repeat>
    </group>
  </h:body>
</h:html>
`;

const NS = 'xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms"';

export function registrationInstance(o: { instanceId: string; entityId: string; species: string; circumference: string; label?: string; list?: string; deprecatedId?: string }): string {
  return `<?xml version="1.0"?>
<data ${NS} id="trees_registration" version="1"><species>${o.species}</species><circumference>${o.circumference}</circumference><intake_notes/>
<meta><entity dataset="${o.list ?? 'trees'}" create="1" id="${o.entityId}"><label>${o.label ?? `${o.species} ${o.circumference}`}</label></entity><instanceID>uuid:${o.instanceId}</instanceID>${o.deprecatedId ? `<deprecatedID>uuid:${o.deprecatedId}</deprecatedID>` : ''}</meta></data>`;
}

export function followUpInstance(o: {
  instanceId: string; entityId: string; baseVersion: string; circumference?: string; health?: string; trunkVersion?: string; branchId?: string;
}): string {
  const answers = `${o.circumference !== undefined ? `<circumference>${o.circumference}</circumference>` : ''}${o.health !== undefined ? `<health>${o.health}</health>` : ''}`;
  return `<?xml version="1.0"?>
<data ${NS} id="trees_followup" version="1"><tree>${o.entityId}</tree>${answers}
<meta><entity dataset="trees" update="1" baseVersion="${o.baseVersion}" trunkVersion="${o.trunkVersion ?? ''}" branchId="${o.branchId ?? ''}" id="${o.entityId}"/><instanceID>uuid:${o.instanceId}</instanceID></meta></data>`;
}

export function repeatInstance(instanceId: string, members: Array<{ id: string; name: string; age: string }>): string {
  const items = members.map((m) => `<members><member_name>${m.name}</member_name><age>${m.age}</age><meta><entity dataset="people" create="1" id="${m.id}"><label>${m.name}</label></entity></meta></members>`).join('');
  return `<?xml version="1.0"?>
<data ${NS} id="household" version="1"><village>North</village>${items}<meta><instanceID>uuid:${instanceId}</instanceID></meta></data>`;
}
