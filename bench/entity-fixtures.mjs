// Forms and OpenRosa bodies of bench/entities.bench.mjs: a registration form and a follow-up
// form of the `plots` list (entities-version 2024.1.0, as pyxform writes them), each also
// without its entity block (the same questions: the baseline of the ratios).
import { randomUUID } from 'node:crypto';

const NS = 'xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:jr="http://openrosa.org/javarosa" xmlns:entities="http://www.opendatakit.org/xforms/entities"';

/**
 * `kind`: 'register' or 'follow-up'; `entities: false` drops the entity block and the list;
 * `photo`: the form also asks for a photo.
 */
export function benchXForm(idString, kind, { entities = true, list = 'plots', photo = false } = {}) {
  const followUp = kind === 'follow-up';
  const block = !entities ? '' : followUp
    ? `<entity dataset="${list}" id="" update="1" baseVersion="" trunkVersion="" branchId=""/>`
    : `<entity dataset="${list}" id="" create="1"><label/></entity>`;
  const binds = !entities ? '' : followUp
    ? `<bind nodeset="/data/meta/entity/@id" type="string" readonly="true()" calculate=" /data/plot "/>
       <bind nodeset="/data/meta/entity/@baseVersion" type="string" readonly="true()" calculate="instance('${list}')/root/item[name= /data/plot ]/__version"/>`
    : `<bind nodeset="/data/meta/entity/@id" type="string" readonly="true()"/>
       <setvalue event="odk-instance-first-load" ref="/data/meta/entity/@id" type="string" readonly="true()" value="uuid()"/>
       <bind nodeset="/data/meta/entity/label" type="string" readonly="true()" calculate="concat('Plot ', /data/crop )"/>`;
  const save = (p) => (entities ? ` entities:saveto="${p}"` : '');
  return `<?xml version="1.0"?>
<h:html ${NS}><h:head><h:title>${idString}</h:title>
<model${entities ? ' entities:entities-version="2024.1.0"' : ''}><instance><data id="${idString}" version="1">
${followUp ? '<plot/>' : ''}<crop/><area/><owner/>${photo ? '<photo/>' : ''}<meta><instanceID/>${block}</meta></data></instance>
${followUp && entities ? `<instance id="${list}" src="jr://file-csv/${list}.csv"/>` : ''}
<bind nodeset="/data/crop" type="string"${save('crop')}/><bind nodeset="/data/area" type="decimal"${save('area_ha')}/><bind nodeset="/data/owner" type="string"${save('owner')}/>
${photo ? '<bind nodeset="/data/photo" type="binary"/>' : ''}<bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>${binds}
</model></h:head><h:body>${followUp ? '<input ref="/data/plot"/>' : ''}<input ref="/data/crop"/><input ref="/data/area"/><input ref="/data/owner"/>${photo ? '<upload ref="/data/photo" mediatype="image/*"/>' : ''}</h:body></h:html>`;
}

/**
 * A multipart OpenRosa body of one instance; `entity`: the entity block's attributes (none: no
 * block); `photo`: the bytes of a JPEG sent as the photo's attachment (the body is then a Buffer).
 */
export function benchInstance(idString, { plot, entity, photo } = {}, boundary = `b${randomUUID().replaceAll('-', '')}`) {
  const attrs = entity ? Object.entries(entity).map(([k, v]) => ` ${k}="${v}"`).join('') : '';
  const block = entity ? `<entity${attrs}>${entity.create ? '<label>Plot maize</label>' : ''}</entity>` : '';
  const uuid = randomUUID();
  const file = `${uuid}.jpg`;
  const xml = `<?xml version="1.0"?><data id="${idString}" version="1">${plot ? `<plot>${plot}</plot>` : ''}<crop>maize</crop><area>1.25</area><owner>Ann</owner>${photo ? `<photo>${file}</photo>` : ''}<meta><instanceID>uuid:${uuid}</instanceID>${block}</meta></data>`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="submission.xml"\r\nContent-Type: text/xml\r\n\r\n${xml}\r\n`;
  const contentType = `multipart/form-data; boundary=${boundary}`;
  if (!photo) return { body: `${head}--${boundary}--\r\n`, contentType };
  const part = `--${boundary}\r\nContent-Disposition: form-data; name="${file}"; filename="${file}"\r\nContent-Type: image/jpeg\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head + part), photo, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType };
}

/** Publishes an XForm (multipart `xml_file`); answers its formid. */
export async function publishXForm(base, token, xml) {
  const form = new FormData();
  form.append('xml_file', new Blob([xml], { type: 'text/xml' }), 'form.xml');
  const res = await fetch(`${base}/api/v1/forms`, { method: 'POST', headers: { authorization: token }, body: form });
  if (res.status !== 201) throw new Error(`publishing ${xml.slice(0, 80)}: ${res.status} ${await res.text()}`);
  return (await res.json()).formid;
}
