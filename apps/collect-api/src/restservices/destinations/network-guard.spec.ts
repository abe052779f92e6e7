import { embeddedIPv4, NetworkGuard } from './network-guard.js';

describe('NetworkGuard (SSRF)', () => {
  const strict = new NetworkGuard([]);
  const dev = new NetworkGuard(['127.0.0.0/8', '::1/128']);

  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254'])('refuses %s by default', (a) => {
    expect(strict.refusal(a)).toMatch(/loopback, private/);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111'])('allows public %s', (a) => {
    expect(strict.refusal(a)).toBeNull();
  });

  // IPv6 transition ranges carry an IPv4 address that NAT64 gateways, 6to4 and
  // Teredo relays, or the kernel (mapped) deliver to.
  it.each([
    ['::ffff:7f00:1', 'mapped, hex'],
    ['::ffff:a9fe:a9fe', 'mapped metadata, hex'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::a00:1', 'IPv4-compatible, hex'],
    ['::ffff:0:a9fe:a9fe', 'SIIT'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 to 169.254.169.254'],
    ['64:ff9b::10.0.0.1', 'NAT64 to 10.0.0.1'],
    ['64:ff9b::7f00:1', 'NAT64 to 127.0.0.1'],
    ['64:ff9b:1::8.8.8.8', 'local-use NAT64 (not globally reachable)'],
    ['2002:a9fe:a9fe::1', '6to4 of 169.254.169.254'],
    ['2002:7f00:1::', '6to4 of 127.0.0.1'],
    ['2001:0:a9fe:a9fe::1', 'Teredo server 169.254.169.254'],
    ['2001:0:808:808:0:0:f5ff:fffe', 'Teredo client 10.0.0.1 (inverted)'],
  ])('refuses %s (%s)', (a) => {
    expect(strict.refusal(a)).toMatch(/loopback, private/);
  });

  it('finds the IPv4 address in each transition range, and lets public ones through', () => {
    expect(embeddedIPv4('64:ff9b::a9fe:a9fe')).toEqual(['169.254.169.254']);
    expect(embeddedIPv4('2002:c000:204::1')).toEqual(['192.0.2.4']);
    expect(embeddedIPv4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['65.54.227.120', '192.0.2.45']);
    expect(embeddedIPv4('2606:4700::1111')).toEqual([]);
    for (const a of ['64:ff9b::808:808', '2002:808:808::1', '::ffff:8.8.8.8', '2001:0:4136:e378:8000:63bf:f7f7:f7f7']) expect(strict.refusal(a)).toBeNull();
    expect(dev.refusal('64:ff9b::7f00:1')).toBeNull(); // 127.0.0.0/8 allowed: the same through NAT64
  });

  it('allows only the configured networks', () => {
    expect(dev.refusal('127.0.0.1')).toBeNull();
    expect(dev.refusal('::1')).toBeNull();
    expect(dev.refusal('10.0.0.1')).not.toBeNull();
    expect(dev.refusal('169.254.169.254')).not.toBeNull();
  });

  it('checks what a host name resolves to', async () => {
    expect(await strict.checkUrl(new URL('http://localhost:9/x'))).toMatch(/loopback/);
    expect(await dev.checkUrl(new URL('http://127.0.0.1:9/x'))).toBeNull();
    expect(await strict.checkUrl(new URL('http://[::1]:9/x'))).toMatch(/loopback/);
  });

  it('refuses at connect time through the lookup hook', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => strict.lookup('localhost', {}, (e) => resolve(e)));
    expect(err?.code).toBe('EFORWARDBLOCKED');
  });
});
