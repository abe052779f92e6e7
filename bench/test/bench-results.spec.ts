import { parseResult, summaryTable } from '../bench-results.mjs';

describe('bench result lines', () => {
  it('reads a goal line, its unit and whether the goal is met', () => {
    expect(parseResult('ratio submissions/user: 0.11 (goal >= 0.5)')).toEqual({ label: 'ratio submissions/user', value: '0.11', goal: '>= 0.5', met: false });
    expect(parseResult('p99 submit-to-delivered at half the delivered rate: 46 ms (goal <= 50)')).toEqual({
      label: 'p99 submit-to-delivered at half the delivered rate', value: '46 ms', goal: '<= 50 ms', met: true,
    });
    expect(parseResult('soak accepted at 500/s: 100.0 % (goal >= 99.9)')?.met).toBe(true);
    expect(parseResult('idle RSS cas: 150 MB (goal <= 150)')?.met).toBe(true);
    expect(parseResult('idle RSS cas: 151 MB (goal <= 150)')?.met).toBe(false);
    expect(parseResult('ratio rss-growth/64MB while streaming 1024 MB: 1.00 (goal < 1)')?.met).toBe(false);
  });

  it('finds a goal anywhere in the parenthesis of an older ratio line, and keeps goal-less ratios', () => {
    expect(parseResult('ratio tokens-per-second/raw-signs-per-second: 0.47 (median of 5 rounds; goal >= 0.4)')).toMatchObject({ goal: '>= 0.4', met: true });
    expect(parseResult('ratio jose-jwtVerify/crypto.verify: 0.37 (reference)')).toEqual({ label: 'ratio jose-jwtVerify/crypto.verify', value: '0.37', goal: undefined, met: undefined });
    expect(parseResult('broad search (matches grow with users) 100k/1k: 1.81 (reference, not a goal)')).toBeNull();
  });

  it('keeps a figure printed without a goal, and nothing else', () => {
    expect(parseResult('queries per JSON submission: 9.0 (no goal set)')).toEqual({ label: 'queries per JSON submission', value: '9.0', goal: undefined, met: undefined });
    expect(parseResult('GET /api/v1/user (Token, baseline): 1185 req/s; API event-loop delay p99 55.6 ms (medians of 3 x 3s, 10 connections)')).toBeNull();
    expect(parseResult('statements while idle for 1 s (background): 0')).toBeNull();
    expect(parseResult('   1.00  COMMIT')).toBeNull();
  });

  it('prints one row per result and counts the goals met', () => {
    const rows = [
      { bench: 'submissions', ...parseResult('ratio submissions/user: 0.11 (goal >= 0.5)') },
      { bench: 'queries', ...parseResult('queries per JSON submission: 9.0 (no goal set)') },
      { bench: 'idle-rss', ...parseResult('idle RSS cas: 141 MB (goal <= 150)') },
    ];
    const text = summaryTable(rows);
    expect(text.split('\n')[0].split(/\s{2,}/)).toEqual(['bench', 'measure', 'value', 'goal', 'met']);
    expect(text).toMatch(/submissions\s+ratio submissions\/user\s+0\.11\s+>= 0\.5\s+NO/);
    expect(text).toMatch(/queries\s+queries per JSON submission\s+9\.0\s+-\s+-/);
    expect(text).toMatch(/idle-rss\s+idle RSS cas\s+141 MB\s+<= 150 MB\s+yes/);
    expect(text.trimEnd().split('\n').at(-1)).toBe('1 of 2 goals met');
  });
});

describe('the machine line', () => {
  it('names the CPU model and the cores, and is never read as a result', async () => {
    const { machineLine } = await import('../machine.mjs');
    const line = machineLine();
    expect(line).toMatch(/^machine: .+, \d+ cores?, load average [\d.]+ [\d.]+ [\d.]+$/);
    expect(parseResult(line)).toBeNull();
  });
});
