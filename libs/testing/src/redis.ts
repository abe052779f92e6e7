import { spawn, spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { freePort, waitFor } from './ports.js';
import { stopChild, trackChild } from './children.js';

export interface RedisHandle {
  port: number;
  url: string;
  stop(): Promise<void>;
}

export const REDIS_INSTALL_HINT = 'redis-server is not installed. Install it with: apt-get update && apt-get install -y redis-server';

export function redisServerAvailable(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Installs Debian's redis-server when we are root and it is missing; otherwise explains how. */
export function ensureRedisServer(log: (line: string) => void = () => undefined): void {
  if (redisServerAvailable()) return;
  if (process.getuid?.() !== 0) throw new Error(REDIS_INSTALL_HINT);
  log('redis-server not found; installing it with apt-get (Debian package redis-server)...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'redis-server']]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed. ${REDIS_INSTALL_HINT}`);
  }
}

/** A throw-away redis-server on loopback: no persistence, no service manager. */
export async function startRedis(options: { port?: number } = {}): Promise<RedisHandle> {
  if (!redisServerAvailable()) throw new Error(REDIS_INSTALL_HINT);
  const port = options.port ?? (await freePort());
  const child = trackChild(
    spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], {
      stdio: 'ignore',
    }),
  );
  await waitFor(() => ping(port), 10_000, `redis-server on port ${port}`);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await stopChild(child, 'SIGTERM', 3000);
    },
  };
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}
