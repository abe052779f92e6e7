import { XlsFormConversion } from './dist/forms/xlsform-conversion.js';
const n = 20000;
const q = Array.from({ length: n }, (_, i) => `q${i}`);
const xml = `<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml"><h:head><h:title>B</h:title><model><instance><data id="big">${q.map((x) => `<${x}/>`).join('')}</data></instance></model></h:head><h:body/></h:html>`;
const c = new XlsFormConversion({ INPUT_MAX_NODES: 500000, INPUT_MAX_DEPTH: 64, FORM_MAX_FIELDS: 1000, XLSFORM_CONVERT_TIMEOUT_MS: 60000, XLSFORM_CONVERT_MAX_HEAP_MB: 512, XLSFORM_CONVERT_CONCURRENCY: 2 });
console.log('chars', xml.length);
try { await c.parse(xml); console.log('parsed?!'); } catch (e) { console.log(e.constructor.name, e.getStatus?.(), JSON.stringify(e.getResponse?.() ?? e.message)); }
