import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, GiveUp, stopChild, trackChild, waitFor } from '@collect/testing';

const START = fileURLToPath(new URL('../dist/start.js', import.meta.url));

function processesUsing(dir: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(dir) && !line.includes('ps -eo'));
}

async function launch(dataDir: string, casPort: number, collectPort: number, workerPort: number) {
  const child = trackChild(
    spawn(process.execPath, [START], {
      env: { ...process.env, DATA_DIR: dataDir, CAS_PORT: String(casPort), COLLECT_PORT: String(collectPort), WORKER_PORT: String(workerPort), LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  await waitFor(async () => {
    if (child.exitCode !== null) throw new GiveUp(`launcher exited ${child.exitCode}: ${out}`);
    return out.includes('Ctrl-C stops everything.');
  }, 120_000, 'launcher to start both services');
  return { child, output: () => out };
}

describe('pnpm start launcher', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'collect-start-'));
  // PostgreSQL runs as an unprivileged user when tests run as root; it must reach its data dir.
  chmodSync(dataDir, 0o755);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts both services and the delivery worker on embedded defaults, stops cleanly on Ctrl-C and reuses .data on the next run', async () => {
    const [casPort, collectPort, workerPort] = [await freePort(), await freePort(), await freePort()];
    const first = await launch(dataDir, casPort, collectPort, workerPort);
    for (const port of [casPort, collectPort, workerPort]) {
      const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/json/);
    }
    expect(first.output()).toMatch(/new data/);
    expect(first.output()).toMatch(/demo data: form demo_media_survey for admin \(3 submissions added, 0 already there\)/);
    const admin = { Authorization: `Basic ${Buffer.from('admin:admin-password').toString('base64')}` };
    const forms = (await (await fetch(`http://127.0.0.1:${collectPort}/api/v1/forms`, { headers: admin })).json()) as Array<{ id_string: string; num_of_submissions: number }>;
    expect(forms).toEqual([expect.objectContaining({ id_string: 'demo_media_survey', num_of_submissions: 3 })]);
    const media = (await (await fetch(`http://127.0.0.1:${collectPort}/api/v1/media/count`, { headers: admin })).json()) as { count: number };
    expect(media.count).toBe(9);
    expect([0, 130]).toContain(await stopChild(first.child, 'SIGINT', 30_000));
    expect(processesUsing(dataDir)).toEqual([]);

    const second = await launch(dataDir, casPort, collectPort, workerPort);
    expect(second.output()).toMatch(/reusing data/);
    expect(second.output()).toMatch(/demo data: form demo_media_survey for admin \(0 submissions added, 3 already there\)/);
    expect([0, 130]).toContain(await stopChild(second.child, 'SIGINT', 30_000));
    expect(processesUsing(dataDir)).toEqual([]);
  }, 240_000);
});
