// The result lines benches print and run.mjs's summary of them. A result line is
// `<label>: <value>[ unit] (goal <op> <target>)` (report() in bench-helpers.mjs),
// `<label>: <value>[ unit] (no goal set)`, or a line starting `ratio` (older benches), whose
// parenthesis may name a goal anywhere ("median of 5 rounds; goal >= 0.4").

/** `label: 0.42 unit (goal >= 0.5)` → { label, value, goal, met }; null for any other line. */
export function parseResult(line) {
  const m = /^(.+?): (-?\d+(?:\.\d+)?|NaN)( [^\s(]+)?(?: \((.*)\))?\s*$/.exec(line.trim());
  if (!m) return null;
  const [, label, number, unit = '', note = ''] = m;
  const goal = /\bgoal (<=|>=|<|>) (-?\d+(?:\.\d+)?)/.exec(note);
  if (!goal && !/^ratio /.test(label) && note !== 'no goal set') return null;
  const value = Number(number);
  const target = goal ? Number(goal[2]) : undefined;
  const met = goal ? { '<=': value <= target, '>=': value >= target, '<': value < target, '>': value > target }[goal[1]] : undefined;
  return { label, value: `${number}${unit}`, goal: goal ? `${goal[1]} ${goal[2]}${unit}` : undefined, met };
}

/** The summary: a text table of { bench, label, value, goal, met } rows and "N of M goals met". */
export function summaryTable(rows) {
  const table = [['bench', 'measure', 'value', 'goal', 'met'], ...rows.map((r) => [r.bench, r.label, r.value, r.goal ?? '-', r.met === undefined ? '-' : r.met ? 'yes' : 'NO'])];
  const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
  const lines = [];
  for (const [i, row] of table.entries()) {
    lines.push(row.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd());
    if (i === 0) lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  const withGoal = rows.filter((r) => r.met !== undefined);
  lines.push('', `${withGoal.filter((r) => r.met).length} of ${withGoal.length} goals met`);
  return lines.join('\n');
}
