import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The repository describes what is; `git log` keeps the history. Numbered work items and sittings
// mean nothing to a reader outside, so no tracked file may name one, and code cites the
// repository's own docs by section title, never the contract's decision log, which is not in
// the repository (README.md, "Documentation").
const REPO = fileURLToPath(new URL('../..', import.meta.url));

// Built from pieces so that this file's own source never matches what it looks for.
const NUMBERED = `(^|[^A-Za-z])(${['[Ii]ssue', '[Ss]ession', '[Ff]inding', '[Ss]itting'].map((w) => `${w}s?`).join('|')}) #?[0-9]+`;
const DECISION_LOG = ['decisions', 'md'].join('.');

interface Hit {
  file: string;
  line: string;
}

/** `git grep` over the tracked files of `cwd` under `paths`: every line matching the extended regular expression `pattern`. */
function gitGrep(cwd: string, pattern: string, paths: string[], { fixed = false } = {}): Hit[] {
  const r = spawnSync('git', ['grep', '-n', '-I', fixed ? '-F' : '-E', '-e', pattern, '--', ...paths], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`git is needed for this check (a clone of the repository): ${r.error.message}`);
  // git grep: 0 found, 1 nothing found, anything else an error (not a repository, bad pattern).
  if (r.status === 1) return [];
  if (r.status !== 0) throw new Error(`git grep failed (${r.status}): ${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean).map((l) => ({ file: l.slice(0, l.indexOf(':')), line: l.slice(0, 200) }));
}

/** What this check refuses in the repository at `cwd`. */
export function historyMentions(cwd: string): Hit[] {
  return [
    ...gitGrep(cwd, NUMBERED, ['.']),
    ...gitGrep(cwd, DECISION_LOG, ['apps', 'libs', 'bench', 'tools', 'k8s', 'docker'], { fixed: true }),
  ];
}

describe('the repository is free of work history', () => {
  it('names no numbered work item or sitting in any tracked file, and cites no decision log from code', () => {
    const hits = historyMentions(REPO);
    // Each line names the file and line: say why in a sentence and cite docs/<file>.md by section title instead.
    expect(hits.map((h) => h.line)).toEqual([]);
  });

  describe('fails when one is added back (a repository made for the test)', () => {
    let dir: string;
    const git = (...args: string[]) => {
      const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    };
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'history-free-'));
      git('init', '-q');
      mkdirSync(join(dir, 'apps/x/src'), { recursive: true });
      mkdirSync(join(dir, 'docs'), { recursive: true });
      writeFileSync(join(dir, 'docs/clean.md'), '# Clean\n\nThe session cookie is HttpOnly; issue a token; 2 sessions at most.\n');
      writeFileSync(join(dir, 'apps/x/src/clean.ts'), '// Why, in a sentence (docs/clean.md, "Clean").\nexport const sessions = 2;\n');
      git('add', '-A');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const cases: Array<[string, string, string]> = [
      ['a code comment', 'apps/x/src/a.ts', `// Batched (${'iss' + 'ue'} 20, ${'sess' + 'ion'} 11).\n`],
      ['a plural and a possessive', 'apps/x/src/b.ts', `// Since ${'iss' + 'ue'} 20's work; ${'sess' + 'ions'} 16 and 17.\n`],
      ['a test name', 'apps/x/src/c.spec.ts', `it('refuses it (${'Iss' + 'ue'} 17, ${'find' + 'ing'} 8)', () => {});\n`],
      ['a doc heading', 'docs/d.md', `## ${'Sess' + 'ion'} 9: two runs\n`],
      ['a decision-log citation in code', 'apps/x/src/e.ts', `// As ${DECISION_LOG} says.\n`],
    ];
    it.each(cases)('%s', (_what, file, text) => {
      expect(historyMentions(dir)).toEqual([]);
      writeFileSync(join(dir, file), text);
      git('add', file);
      try {
        expect(historyMentions(dir).map((h) => h.file)).toEqual([file]);
      } finally {
        git('rm', '-q', '--cached', file);
        rmSync(join(dir, file));
      }
    });

    it('only tracked files count: an untracked scratch file is not the repository', () => {
      writeFileSync(join(dir, 'docs/scratch.md'), `${'Sess' + 'ion'} 3 notes\n`);
      try {
        expect(historyMentions(dir)).toEqual([]);
      } finally {
        rmSync(join(dir, 'docs/scratch.md'));
      }
    });
  });
});
