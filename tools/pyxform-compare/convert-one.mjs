// Converts one .xlsx with libs/xlsform and prints the result as JSON; compare.ts runs it in a
// child process with a heap limit so a workbook that floods or stalls ours counts as a crash.
import { readFileSync } from 'node:fs';
import { convertXlsForm } from '../../libs/xlsform/dist/index.js';

const [file, name] = process.argv.slice(2);
process.stdout.write(JSON.stringify(await convertXlsForm(readFileSync(file), { fallbackFormName: name })));
