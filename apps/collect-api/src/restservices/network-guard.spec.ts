import { NetworkGuard } from './network-guard.js';

describe('NetworkGuard (SSRF)', () => {
  const strict = new NetworkGuard([]);
  const dev = new NetworkGuard(['127.0.0.0/8', '::1/128']);

  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254'])('refuses %s by default', (a) => {
    expect(strict.refusal(a)).toMatch(/loopback, private/);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111'])('allows public %s', (a) => {
    expect(strict.refusal(a)).toBeNull();
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
