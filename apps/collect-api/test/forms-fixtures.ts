import sharp from 'sharp';
import { demoWav } from '../src/seed/demo-media.js';

/** An XForm with a group, a repeat, a geopoint and image/audio questions (ODK XForms shape). */
export function demoXForm(idString = 'household_survey', title = 'Household survey'): string {
  return `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms">
  <h:head>
    <h:title>${title}</h:title>
    <model>
      <instance>
        <data id="${idString}" version="2026110101">
          <name/>
          <age/>
          <location/>
          <household>
            <size/>
            <photo/>
          </household>
          <photo2/>
          <voice/>
          <member jr:template="">
            <member_name/>
          </member>
          <meta><instanceID/></meta>
        </data>
      </instance>
      <bind nodeset="/data/name" type="string"/>
      <bind nodeset="/data/age" type="int"/>
      <bind nodeset="/data/location" type="geopoint"/>
      <bind nodeset="/data/household/size" type="int"/>
      <bind nodeset="/data/household/photo" type="binary"/>
      <bind nodeset="/data/photo2" type="binary"/>
      <bind nodeset="/data/voice" type="binary"/>
      <bind nodeset="/data/member/member_name" type="string"/>
      <bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>
    </model>
  </h:head>
  <h:body>
    <input ref="/data/name"><label>Name &amp; surname</label></input>
    <input ref="/data/age"><label>Age</label></input>
    <input ref="/data/location"><label>Location</label></input>
    <group ref="/data/household"><label>Household</label>
      <input ref="/data/household/size"><label>Size</label></input>
      <upload ref="/data/household/photo" mediatype="image/*"><label>Photo</label></upload>
    </group>
    <upload ref="/data/photo2" mediatype="image/*"><label>Second photo</label></upload>
    <upload ref="/data/voice" mediatype="audio/*"><label>Voice</label></upload>
    <group ref="/data/member"><label>Members</label>
      <repeat nodeset="/data/member"><input ref="/data/member/member_name"><label>Member name</label></input></repeat>
    </group>
  </h:body>
</h:html>`;
}

export interface InstanceOptions {
  instanceId: string;
  deprecatedId?: string;
  name?: string;
  age?: string;
  size?: string;
  idString?: string;
  members?: string[];
}

export function demoInstance(o: InstanceOptions): string {
  const members = (o.members ?? ['Ann', 'Bob']).map((m) => `<member><member_name>${m}</member_name></member>`).join('');
  return `<?xml version="1.0"?><data xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" id="${o.idString ?? 'household_survey'}" version="2026110101">
<name>${o.name ?? 'Jane'}</name><age>${o.age ?? '34'}</age><location>-1.2864 36.8172 1700 5</location>
<household><size>${o.size ?? '4'}</size><photo>house.jpg</photo></household><photo2>yard.png</photo2><voice>voice.wav</voice>${members}
<meta><instanceID>uuid:${o.instanceId}</instanceID>${o.deprecatedId ? `<deprecatedID>uuid:${o.deprecatedId}</deprecatedID>` : ''}</meta></data>`;
}

export async function jpeg(): Promise<Buffer> {
  return sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 30 } } }).jpeg().toBuffer();
}

export async function png(): Promise<Buffer> {
  return sharp({ create: { width: 32, height: 32, channels: 4, background: { r: 0, g: 90, b: 200, alpha: 1 } } }).png().toBuffer();
}

/** A real 0.1 s mono 8 kHz PCM WAV file (the demo seed's generator). */
export function wav(): Buffer {
  return demoWav(1, 0.1);
}
