// `pnpm test`: the whole suite, then the parser-complexity checks alone in a process of their own.
// Those checks collect all garbage before each timed run (libs/testing/src/complexity.ts); in a
// Jest worker that has run other test files first the heap holds their leftovers, every full
// collection marks them too, and the suite took over 25 minutes of CPU instead of about one
// (docs/security.md, "Parsers of user input"). With arguments, one Jest run with exactly those.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const jest = (args) => spawnSync(process.execPath, ['--experimental-vm-modules', join(root, 'node_modules/jest/bin/jest.js'), ...args], { cwd: root, stdio: 'inherit' }).status ?? 1;

const args = process.argv.slice(2);
const COMPLEXITY = 'parsers-complexity';
if (args.length) process.exit(jest(args));
const rest = jest(['--testPathIgnorePatterns', COMPLEXITY]);
const complexity = jest([COMPLEXITY]);
process.exit(rest || complexity);
