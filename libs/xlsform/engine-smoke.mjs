globalThis.__dirname = '/';
const { JSDOM } = await import('jsdom');
const w = new JSDOM('').window;
for (const k of ['DOMParser', 'XMLSerializer', 'document', 'Node', 'Element', 'Document', 'NodeFilter', 'XPathResult']) globalThis[k] = w[k];
const { convertTables } = await import('./dist/index.js');
const { loadForm } = await import('@getodk/xforms-engine');
const r = convertTables({
  survey: [
    ['type', 'name', 'label', 'label::French (fr)', 'hint', 'required', 'relevant', 'constraint', 'constraint_message', 'calculation', 'default', 'appearance', 'repeat_count', 'choice_filter'],
    ['text', 'name', 'Name', 'Nom', 'your name', 'yes'],
    ['integer', 'age', 'Age', 'Âge', '', 'true', '', '. > 0', 'Positive ${name}'],
    ['select_one colors or_other', 'color', 'Color', 'Couleur'],
    ['begin_repeat', 'kids', 'Kids', 'Enfants', '', '', '', '', '', '', '', '', '${age}'],
    ['text', 'kid', 'Kid of ${name}', 'Enfant', '', '', '${age} > 1'],
    ['integer', 'kage', 'Age ${kid}', 'Âge'],
    ['calculate', 'c', '', '', '', '', '', '', '', '${kage} + 1'],
    ['end_repeat'],
    ['select_multiple colors', 'cols', 'Cols', 'Cols', '', '', '', '', '', '', '', 'minimal', '', "name != ${color}"],
    ['date', 'd', 'Date', 'Date', '', '', '', '', '', '', 'today()'],
  ],
  choices: [['list_name', 'name', 'label', 'label::French (fr)'], ['colors', 'red', 'Red', 'Rouge'], ['colors', 'blue', 'Blue', 'Bleu']],
  settings: [['form_title', 'form_id', 'version', 'instance_name'], ['T', 'tid', '3', 'concat(${name}, "x")']],
});
const f = await loadForm(r.xml);
console.log(f.status, f.error?.message, f.warnings);
const inst = f.createInstance();
const root = inst.root;
const walk = (n, d=0) => { console.log(' '.repeat(d) + n.nodeType + ' ' + n.currentState.reference); for (const c of n.currentState.children ?? []) walk(c, d+2); };
walk(root);
const byRef = (ref) => { let found; const go = (n) => { if (n.currentState.reference === ref) found = n; for (const c of n.currentState.children ?? []) go(c); }; go(root); return found; };
byRef('/data/name').setValue('Ann');
byRef('/data/age').setValue('2');
const color = byRef('/data/color'); console.log(color.currentState.valueOptions.map(o => o.value));
color.selectValue(color.currentState.valueOptions[0]);
const payload = await root.prepareInstancePayload();
console.log(payload.status, await payload.data[0].get('xml_submission_file').text());
