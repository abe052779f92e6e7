import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from './ports.js';

describe('freePort', () => {
  it('answers distinct listenable ports below the ephemeral range, where no outgoing connection takes them', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(200);
    expect(ports.every((p) => p >= 10_000 && p < low)).toBe(true);
    const srv = createServer();
    await new Promise<void>((resolve) => srv.listen(ports[0], '127.0.0.1', resolve));
    await new Promise((resolve) => srv.close(resolve));
  });
});
