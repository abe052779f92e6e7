// `pnpm xlsform:compare`: writes pyxform's test forms (and the real-world corpus beside the
// repository, when present) with pyxform's conversion of each (collect.py), then compares our
// conversions with them (compare.ts). Not part of CI: it needs a pyxform source tree and
// Debian's python3 with python3-openpyxl, python3-xlrd, python3-defusedxml, python3-lark
// (docs/xlsform.md, "Parity with pyxform").
//   PYXFORM_SRC=/path/to/pyxform pnpm xlsform:compare [-- --details 50]
// PYXFORM_PYTHON (default /usr/bin/python3), COMPARE_OUT (default a fresh temporary folder).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const src = process.env.PYXFORM_SRC;
if (!src || !existsSync(join(src, 'pyxform', 'xls2xform.py'))) {
  console.error('Set PYXFORM_SRC to a pyxform source tree (a copy of github.com/XLSForm/pyxform at the tag to compare with).');
  process.exit(2);
}
const python = process.env.PYXFORM_PYTHON ?? '/usr/bin/python3';
const out = process.env.COMPARE_OUT ?? mkdtempSync(join(tmpdir(), 'pyxform-compare-'));
const realworld = join(root, '..', 'shared', 'corpus', 'realworld-xlsforms');
const collect = [join(here, 'collect.py'), src, out, ...(existsSync(realworld) ? ['--realworld', realworld] : [])];
const run = (cmd, args) => {
  const status = spawnSync(cmd, args, { stdio: 'inherit', cwd: root }).status ?? 1;
  if (status !== 0) process.exit(status);
};
if (!process.env.COMPARE_OUT || !existsSync(join(out, 'pyxform-md'))) run(python, collect);
run(process.execPath, [join(here, 'compare.ts'), out, ...process.argv.slice(2)]);
