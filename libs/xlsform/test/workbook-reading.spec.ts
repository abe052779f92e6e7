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

describe('cell values as openpyxl gives them to pyxform', () => {
  it('reads dates and times by their number format, rich text joined, and merged ranges as one filled cell', async () => {
    const { default: ExcelJS } = await import('exceljs');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Survey');
    ws.addRow(['type', 'name', 'label', 'default', 'hint']);
    ws.addRow(['date', 'd', 'Day', new Date(Date.UTC(2024, 0, 31))]);
    ws.addRow(['text', 'r', { richText: [{ text: 'Rich ' }, { font: { bold: true }, text: 'label' }] }]);
    ws.addRow(['text', 'm', 'Merged', 'x', '']);
    ws.mergeCells('D4:E4');
    const result = await convertXlsForm(new Uint8Array(await wb.xlsx.writeBuffer()));
    expect(result.errors).toEqual([]);
    expect(result.xml).toContain('<d>2024-01-31 00:00:00</d>');
    expect(result.xml).toContain('<label>Rich label</label>');
    // The other cells of a merged range are empty, as openpyxl reads them: no hint for m.
    expect(result.xml).toMatch(/<input ref="\/data\/m">\s*<label>Merged<\/label>\s*<\/input>/);
  });

  it('refuses malformed sheet XML with one message', async () => {
    const xlsx = await tablesToXlsxRaw('<row r="1"><c r="A1" t="inlineStr"><is><t>type</t></is></c></rowx>');
    const result = await convertXlsForm(xlsx);
    expect(result.xml).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/^Error reading \.xlsx file: /);
  });
});

/** A zip of stored entries (the reader checks no CRC, so none is written). */
function storedZip(files: Array<[string, string]>): Buffer {
  const parts: Buffer[] = [];
  const dirs: Buffer[] = [];
  let at = 0;
  for (const [name, text] of files) {
    const n = Buffer.from(name);
    const data = Buffer.from(text);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt32LE(data.length, 20);
    dir.writeUInt32LE(data.length, 24);
    dir.writeUInt16LE(n.length, 28);
    dir.writeUInt32LE(at, 42);
    parts.push(local, n, data);
    dirs.push(dir, n);
    at += 30 + n.length + data.length;
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(dirs.reduce((n, b) => n + b.length, 0), 12);
  end.writeUInt32LE(at, 16);
  return Buffer.concat([...parts, ...dirs, end]);
}

/** A workbook whose survey sheet holds the given sheetData XML, its workbook part written with an `x:` prefix. */
async function tablesToXlsxRaw(sheetData: string): Promise<Buffer> {
  const main = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const rels = (type: string, target: string) =>
    `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/${type}" Target="${target}"/></Relationships>`;
  return storedZip([
    ['_rels/.rels', rels('officeDocument', 'xl/workbook.xml')],
    ['xl/workbook.xml', `<x:workbook xmlns:x="${main}" xmlns:r="${rel}"><x:sheets><x:sheet name="survey" sheetId="1" r:id="rId1"/></x:sheets></x:workbook>`],
    ['xl/_rels/workbook.xml.rels', rels('worksheet', 'worksheets/sheet1.xml')],
    ['xl/worksheets/sheet1.xml', `<x:worksheet xmlns:x="${main}"><x:sheetData>${sheetData}</x:sheetData></x:worksheet>`],
  ]);
}

describe('a workbook written with namespace prefixes and inline strings', () => {
  it('is read as the same cells', async () => {
    const cell = (ref: string, text: string) => `<x:c r="${ref}" t="inlineStr"><x:is><x:t>${text}</x:t></x:is></x:c>`;
    const xlsx = await tablesToXlsxRaw(
      `<x:row r="1">${cell('A1', 'type')}${cell('B1', 'name')}${cell('C1', 'label')}</x:row>` +
        `<x:row r="3">${cell('A3', 'integer')}${cell('B3', 'age')}<x:c r="C3" t="str"><x:f>"Age"</x:f><x:v>Age &amp; years</x:v></x:c></x:row>`,
    );
    const result = await convertXlsForm(xlsx);
    expect(result.errors).toEqual([]);
    expect(result.xml).toContain('<label>Age &amp; years</label>');
    expect(result.xml).toContain('<bind nodeset="/data/age" type="int"/>');
  });
});
