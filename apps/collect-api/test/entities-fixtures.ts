/**
 * XForms as pyxform 4.5 writes them for an XLSForm with an `entities` sheet (converted with
 * pyxform 4.5.0 from the sheets named in each comment), and instances as ODK Collect fills them.
 */
import { readFileSync } from 'node:fs';

/** An XForm of fixtures/entities/ (XForms are data: kept as files, as pyxform writes them). */
const fixture = (name: string) => readFileSync(new URL(`./fixtures/entities/${name}`, import.meta.url), 'utf8');

/** survey: species (save_to species), circumference (save_to circumference_cm), intake_notes; entities: list_name trees, label concat(...). */
export const REGISTRATION_XFORM = fixture('trees-registration.xml');

/** survey: select_one_from_file trees.csv tree, circumference (save_to circumference_cm), health (save_to health_status); entities: list_name trees, entity_id ${tree}. */
export const FOLLOW_UP_XFORM = fixture('trees-follow-up.xml');

/** survey: village, repeat members (member_name save_to full_name, age save_to age); entities: list_name people, label ${member_name}. */
export const REPEAT_XFORM = fixture('household-repeat.xml');

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
