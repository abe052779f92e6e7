// How the workbook is read: rows and columns by content rather than by the dimensions a sheet
// declares (docs/xlsform.md, "Reading the spreadsheet"), on made workbooks and on the real-world
// forms beside the repository.
import { existsSync, readFileSync } from 'node:fs';
import { convertXlsForm } from '@collect/xlsform';

const realworld = new URL('../../../../shared/corpus/realworld-xlsforms/', import.meta.url);

async function styledFarCells(): Promise<Buffer> {
  const ExcelJS = (await import('exceljs')).default;
  const workbook = new ExcelJS.Workbook();
  const survey = workbook.addWorksheet('survey');
  survey.addRow(['type', 'name', 'label']);
  survey.addRow(['integer', 'age', 'Age']);
  // What spreadsheet programs write for a formatted column or row: styled cells without values.
  survey.getCell('XFD1').style = { font: { bold: true } };
  survey.getCell('A1048576').style = { font: { bold: true } };
  survey.getCell('C900').value = '';
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

describe('reading the workbook', () => {
  it('counts rows and columns by the cells that hold something, not by styled empty cells far out', async () => {
    const result = await convertXlsForm(await styledFarCells());
    expect(result.errors).toEqual([]);
    expect(result.xml).toContain('<bind nodeset="/data/age" type="int"/>');
  });

  it('writes a date cell as Python prints the datetime openpyxl reads, milliseconds included', async () => {
    const ExcelJS = (await import('exceljs')).default;
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet('survey').addRows([['type', 'name', 'label'], ['text', 'q', 'Q']]);
    const settings = workbook.addWorksheet('settings');
    settings.addRows([['version', 'form_title'], [new Date(Date.UTC(2022, 3, 11, 16, 26, 28, 971)), new Date(Date.UTC(2024, 0, 31))]]);
    const result = await convertXlsForm(Buffer.from(await workbook.xlsx.writeBuffer()));
    expect([result.version, result.title]).toEqual(['2022-04-11 16:26:28.971000', '2024-01-31 00:00:00']);
  });

  const index = existsSync(new URL('index.json', realworld))
    ? (JSON.parse(readFileSync(new URL('index.json', realworld), 'utf8')) as Array<{ file: string; pyxform: string }>)
    : [];

  it('reads every real-world form pyxform converts without a refusal for its size, and refuses none without a message', async () => {
    expect(index.length).toBeGreaterThan(0);
    const sizeRefusals: string[] = [];
    for (const form of index) {
      const result = await convertXlsForm(readFileSync(new URL(`forms/${form.file}`, realworld)), { fallbackFormName: form.file.replace(/\.xlsx$/, '') });
      if (result.xml === null) expect([form.file, result.errors.length > 0]).toEqual([form.file, true]);
      if (form.pyxform === 'ok' && result.errors.some((e) => /sheet has \d+ (rows|columns)/.test(e))) sizeRefusals.push(`${form.file}: ${result.errors[0]}`);
    }
    expect(sizeRefusals).toEqual([]);
  });
});

describe('formula cells', () => {
  it('are read as their cached values, booleans included, as pyxform reads them', async () => {
    const { default: ExcelJS } = await import('exceljs');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('survey');
    ws.addRow(['type', 'name', 'label', 'required']);
    ws.addRow(['text', 'q1', { formula: 'CONCAT("Your ","name")', result: 'Your name' }, { formula: 'FALSE()', result: false }]);
    ws.addRow(['text', { formula: 'LOWER("Q2")', result: 'q2' }, 'Second', { formula: 'TRUE()', result: true }]);
    const result = await convertXlsForm(new Uint8Array(await wb.xlsx.writeBuffer()));
    expect(result.errors).toEqual([]);
    expect(result.xml).toContain('<label>Your name</label>');
    expect(result.xml).toContain('<bind nodeset="/data/q2" type="string" required="true()"/>');
    expect(result.xml).toContain('<bind nodeset="/data/q1" type="string" required="false()"/>');
  });
});
