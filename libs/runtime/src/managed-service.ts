import { spawn } from 'node:child_process';
import { GiveUp, trackChild, waitFor, type ServiceProcess } from '@collect/embedded';
import type { ServiceDefinition } from './services.js';

/** Starts one service with its output prefixed by its name, and waits until it is ready. */
export async function startManagedService(def: ServiceDefinition, env: Record<string, string>, log: (m: string) => void): Promise<ServiceProcess> {
  const child = trackChild(spawn(process.execPath, [def.entry], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let tail = '';
  const relay = (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-8000);
    for (const line of text.split('\n')) if (line.trim()) process.stdout.write(`[${def.name}] ${line}\n`);
  };
  child.stdout?.on('data', relay);
  child.stderr?.on('data', relay);
  const url = def.port ? `http://127.0.0.1:${def.port}` : '';
  if (def.port) {
    await waitFor(async () => {
      // GiveUp: a service that exited (a bad variable: exit 78) will not become ready; say so at once.
      if (child.exitCode !== null) throw new GiveUp(`${def.name} exited with code ${child.exitCode} (its output is above)`);
      return (await fetch(`${url}/health/ready`)).status === 200;
    }, 60_000, `${def.name} on port ${def.port}`);
  }
  log(`${def.name} ready${url ? ` on ${url}` : ''}`);
  return {
    child,
    url,
    output: () => tail,
    stop: async () => {
      child.kill('SIGTERM');
      return null;
    },
  };
}
