// XLSForm conversion time of a 5,000-row form ÷ the time of a 500-row form of the same make, in
// the same run (the converter is linear, so the ratio should stay near 10). Each form is
// a real .xlsx (exceljs) mixing types: selects with a choice filter, groups, repeats with
// relative references, relevant/constraint expressions with ${} references, translations.
// Rounds are interleaved and the median of each size is used. Also prints the split between
// reading the workbook and building the XForm.
import { convertXlsForm, readXlsx, tablesToXlsx, DEFAULT_LIMITS, convertWorkbook } from '../libs/xlsform/dist/index.js';
import { median } from './bench-helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SMALL = 500;
const LARGE = 5000;

function tables(rows) {
  const survey = [['type', 'name', 'label::English (en)', 'label::French (fr)', 'hint', 'relevant', 'constraint', 'calculation', 'choice_filter', 'appearance']];
  let n = 0;
  const push = (...r) => {
    survey.push(r);
    n++;
  };
  let block = 0;
  while (n < rows) {
    const b = block++;
    push('begin_group', `g${b}`, `Section ${b}`, `Partie ${b}`, '', '', '', '', '', 'field-list');
    push('integer', `age${b}`, 'Age', 'Âge', 'years', '', '. >= 0 and . < 130');
    push('select_one region', `region${b}`, 'Region', 'Région', '', `\${age${b}} > 17`);
    push('select_one district', `district${b}`, 'District', 'District', '', '', '', '', `region = \${region${b}}`, 'minimal');
    push('end_group', '');
    push('begin_repeat', `r${b}`, 'Members', 'Membres');
    push('text', `m${b}`, 'Name', 'Nom');
    push('integer', `ma${b}`, `Age of \${m${b}}`, 'Âge');
    push('calculate', `c${b}`, '', '', '', '', '', `\${ma${b}} * 2 + \${age${b}}`);
    push('end_repeat', '');
  }
  const choices = [['list_name', 'name', 'label::English (en)', 'label::French (fr)', 'region']];
  for (let i = 0; i < 10; i++) choices.push(['region', `r${i}`, `Region ${i}`, `Région ${i}`, '']);
  for (let i = 0; i < 50; i++) choices.push(['district', `d${i}`, `District ${i}`, `District ${i}`, `r${i % 10}`]);
  return { survey, choices, settings: [['form_id', 'version'], [`bench_${rows}`, '1']] };
}

const files = { [SMALL]: await tablesToXlsx(tables(SMALL)), [LARGE]: await tablesToXlsx(tables(LARGE)) };
const limits = { ...DEFAULT_LIMITS };
for (const size of [SMALL, LARGE]) {
  const r = await convertXlsForm(files[size]);
  if (r.errors.length > 0 || !r.xml) throw new Error(`bench form of ${size} rows did not convert: ${r.errors.join('; ')}`);
  console.log(`${size}-row form: ${files[size].byteLength} bytes of .xlsx, ${r.xml.length} characters of XForm`);
}

const total = { [SMALL]: [], [LARGE]: [] };
const read = { [SMALL]: [], [LARGE]: [] };
const build = { [SMALL]: [], [LARGE]: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const size of [SMALL, LARGE]) {
    const t0 = process.hrtime.bigint();
    const workbook = await readXlsx(files[size], limits);
    const t1 = process.hrtime.bigint();
    const result = convertWorkbook(workbook);
    const t2 = process.hrtime.bigint();
    if (!result.xml) throw new Error('conversion failed');
    read[size].push(Number(t1 - t0) / 1e6);
    build[size].push(Number(t2 - t1) / 1e6);
    total[size].push(Number(t2 - t0) / 1e6);
  }
}
for (const size of [SMALL, LARGE]) {
  console.log(`${size} rows: ${median(total[size]).toFixed(1)} ms (read .xlsx ${median(read[size]).toFixed(1)} ms + build XForm ${median(build[size]).toFixed(1)} ms), median of ${ROUNDS}`);
}
console.log(`ratio ${LARGE}-row/${SMALL}-row conversion time: ${(median(total[LARGE]) / median(total[SMALL])).toFixed(2)} (linear: near 10)`);
console.log(`ratio ${LARGE}-row/${SMALL}-row XForm build only: ${(median(build[LARGE]) / median(build[SMALL])).toFixed(2)} (reference)`);
