// An .xlsx whose zip directory understates its entries: refused by the inflate cap, with memory
// growth bounded by the cap rather than by what the entry really inflates to (docs/xlsform.md, "Limits").
import { lyingZip } from '@collect/testing';
import { convertXlsForm, DEFAULT_LIMITS, tablesToXlsx } from '@collect/xlsform';

const MiB = 1024 * 1024;

/** The highest resident set size the process has reached, in bytes. */
const peakRss = () => process.resourceUsage().maxRSS * 1024;

describe('xlsx zip bombs: the inflate cap holds whatever the directory declares', () => {
  it('refuses a workbook declaring 1,000 bytes for a sheet that inflates to 200 MB; memory grows by at most the cap plus a margin', async () => {
    const bomb = await lyingZip([{ name: 'xl/worksheets/sheet1.xml', inflatedBytes: 200 * MiB, declaredBytes: 1000 }]);
    expect(bomb.length).toBeLessThan(MiB);
    const cap = 8 * MiB;
    // Warm up the reader's code paths first so their one-time allocations do not count.
    await convertXlsForm(await tablesToXlsx({ survey: [['type', 'name', 'label'], ['text', 'a', 'A']] }));
    const before = peakRss();
    const result = await convertXlsForm(bomb, { limits: { maxUncompressedBytes: cap } });
    const growth = peakRss() - before;
    expect(growth).toBeLessThan(cap + 48 * MiB);
    expect(result.xml).toBeNull();
    expect(result.errors).toEqual([`The workbook unpacks to more than ${cap} bytes; the limit is ${cap}.`]);
  });

  it('refuses the same bomb under the default limit, with the same message', async () => {
    const bomb = await lyingZip([
      { name: 'xl/workbook.xml', inflatedBytes: 60 * MiB, declaredBytes: 500 },
      { name: 'xl/worksheets/sheet1.xml', inflatedBytes: 60 * MiB, declaredBytes: 500 },
    ]);
    const limit = DEFAULT_LIMITS.maxUncompressedBytes;
    expect((await convertXlsForm(bomb)).errors).toEqual([`The workbook unpacks to more than ${limit} bytes; the limit is ${limit}.`]);
  });

  it('still reads an honest workbook, and refuses one whose deflate data is cut short', async () => {
    const xlsx = await tablesToXlsx({ survey: [['type', 'name', 'label'], ['integer', 'age', 'Age']] });
    expect((await convertXlsForm(xlsx)).xml).toContain('<bind nodeset="/data/age" type="int"/>');
    const cut = Buffer.from(xlsx);
    // Zero the first entry's compressed bytes: it no longer inflates.
    const start = 30 + cut.readUInt16LE(26) + cut.readUInt16LE(28);
    cut.fill(0xff, start, start + Math.min(64, cut.readUInt32LE(18)));
    const errors = (await convertXlsForm(cut)).errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^The file is not an \.xlsx workbook \(an entry does not inflate: .+\)\.$/);
  });
});
