// The exact text pyxform prints for a small form, the limits, and conversion in a worker thread.
import {
  convertTables, convertXlsForm, convertXlsFormInWorker, convertXlsFormInWorkerOrThrow, convertXlsFormOrThrow, tablesToXlsx, XlsFormConversionError,
  type SheetTable,
} from '@collect/xlsform';

// Written by hand from pyxform's serializer (survey.py/utils.py): namespace order, attributes in
// insertion order, inline text, mixed content padded by one space.
const GREETING_XFORM = `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:ev="http://www.w3.org/2001/xml-events" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" xmlns:odk="http://www.opendatakit.org/xforms">
  <h:head>
    <h:title>greet</h:title>
    <model odk:xforms-version="1.0.0">
      <instance>
        <data id="greet" version="1">
          <name/>
          <greet/>
          <meta>
            <instanceID/>
          </meta>
        </data>
      </instance>
      <bind nodeset="/data/name" type="string" required="true()"/>
      <bind nodeset="/data/greet" readonly="true()" type="string"/>
      <bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>
    </model>
  </h:head>
  <h:body>
    <input ref="/data/name">
      <label>Your name &amp; title</label>
      <hint>First name</hint>
    </input>
    <input ref="/data/greet">
      <label> Hello <output value=" /data/name "/>! </label>
    </input>
  </h:body>
</h:html>
`;

const greeting = {
  survey: [
    ['type', 'name', 'label', 'hint', 'required'],
    ['text', 'name', 'Your name & title', 'First name', 'yes'],
    ['note', 'greet', 'Hello ${name}!'],
  ],
  settings: [['form_id', 'version'], ['greet', 1]],
};

function bigForm(rows: number): Record<string, SheetTable> {
  const survey: Array<Array<string>> = [['type', 'name', 'label', 'relevant']];
  for (let i = 0; i < rows; i++) survey.push(['integer', `q${i}`, `Question ${i}`, i > 0 ? `\${q${i - 1}} > 0` : '']);
  return { survey };
}

describe('XLSForm converter API', () => {
  it('prints the XForm exactly as pyxform does', async () => {
    const result = await convertXlsFormOrThrow(await tablesToXlsx(greeting));
    expect(result.xml).toBe(GREETING_XFORM);
    expect(result).toMatchObject({ formId: 'greet', title: 'greet', version: '1', instanceName: 'data', errors: [], attachments: [] });
  });

  it('uses the fallback form name (the file name, for pyxform) when the settings name no form_id', () => {
    const result = convertTables({ survey: [['type', 'name', 'label'], ['text', 'a', 'A']] }, { fallbackFormName: 'household_2024' });
    expect(result.formId).toBe('household_2024');
    expect(result.xml).toContain('<data id="household_2024">');
  });

  it('refuses a file that is not an .xlsx workbook', async () => {
    const result = await convertXlsForm(new TextEncoder().encode('type,name,label\ntext,a,A\n'));
    expect(result.xml).toBeNull();
    expect(result.errors).toEqual(['The file is not an .xlsx workbook (no zip directory found).']);
    await expect(convertXlsFormOrThrow(new Uint8Array(10))).rejects.toBeInstanceOf(XlsFormConversionError);
  });

  it('enforces the limits with a clear message', async () => {
    const xlsx = await tablesToXlsx(bigForm(50));
    expect((await convertXlsForm(xlsx, { limits: { maxRows: 20 } })).errors).toEqual(["The 'survey' sheet has 51 rows; the limit is 20."]);
    expect((await convertXlsForm(xlsx, { limits: { maxFileBytes: 1000 } })).errors).toEqual([`The file has ${xlsx.byteLength} bytes; the limit is 1000.`]);
    expect((await convertXlsForm(xlsx, { limits: { maxUncompressedBytes: 2000 } })).errors[0]).toMatch(/^The workbook unpacks to \d+ bytes; the limit is 2000\.$/);
    const long = await tablesToXlsx({ survey: [['type', 'name', 'label'], ['text', 'a', 'x'.repeat(200)]] });
    expect((await convertXlsForm(long, { limits: { maxCellLength: 100 } })).errors).toEqual([
      "[row : 2] On the 'survey' sheet, a cell has 200 characters; the limit is 100.",
    ]);
    const wide = await tablesToXlsx({ survey: [Array.from({ length: 30 }, (_, i) => `c${i}`)] });
    expect((await convertXlsForm(wide, { limits: { maxColumns: 10 } })).errors).toEqual(["The 'survey' sheet has 30 columns; the limit is 10."]);
    expect(convertTables({ survey: [['type', 'name', 'type'], ['text', 'a', 'text']] }).errors).toEqual(['Duplicate column header: type']);
  });

  it('converts in a worker thread with the same result, keeping the event loop free', async () => {
    const xlsx = await tablesToXlsx(bigForm(3000));
    const inProcess = await convertXlsForm(xlsx);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const inWorker = await convertXlsFormInWorker(xlsx);
    clearInterval(timer);
    expect(inWorker).toEqual(inProcess);
    expect(inWorker.xml).toContain('<bind nodeset="/data/q2999" type="int" relevant=" /data/q2998  &gt; 0"/>');
    // The caller's timers kept running while the worker converted.
    expect(ticks).toBeGreaterThan(0);
  });

  it('rejects with the messages when the form has errors (worker)', async () => {
    const broken = await tablesToXlsx({ survey: [['type', 'name', 'label'], ['nonsense', 'a', 'A']] });
    const err = await convertXlsFormInWorkerOrThrow(broken).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(XlsFormConversionError);
    expect((err as XlsFormConversionError).errors).toEqual(["[row : 2] Unknown question type 'nonsense'."]);
  });
});
