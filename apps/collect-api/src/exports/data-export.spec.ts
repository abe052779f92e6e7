import { PassThrough } from 'node:stream';
import { writeXlsx, type ExportPlan } from './data-export.js';
import { exportOptions } from './export.dto.js';

/** An export whose client left (docs/security.md, "Streamed reads and heavy queries"). */
describe('writeXlsx to a destination that was destroyed', () => {
  it('returns, and stops reading rows', async () => {
    let batches = 0;
    const plan: ExportPlan = {
      fields: [{ name: 'n', xpath: 'n', type: 'text', label: 'N' }],
      choices: new Map(),
      repeatCounts: new Map(),
      total: 2,
      rows: async function* () {
        for (let i = 1; i <= 2; i++) {
          batches++;
          yield [{ id: i, uuid: `u${i}`, json: JSON.stringify({ n: String(i) }), submission_time: '2026-01-01T00:00:00', version: 'v1', submitted_by: null, form_id: 1 }];
        }
      },
    };
    const out = new PassThrough();
    out.destroy();
    // Generous: the fixed code returns within a few ticks; exceljs alone waited for good.
    const outcome = await Promise.race([
      writeXlsx(plan, exportOptions({}), out).then(() => 'returned'),
      new Promise<string>((r) => setTimeout(() => r('still waiting'), 20_000).unref()),
    ]);
    expect(outcome).toBe('returned');
    expect(batches).toBe(1);
  }, 60_000);
});
