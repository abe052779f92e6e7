import { clientAddress, trustedProxyHops } from './client-address.js';

describe('clientAddress (never the left-most X-Forwarded-For)', () => {
  it('takes the entry the trusted proxies wrote, not what the client sent before them', () => {
    // The client sent "X-Forwarded-For: 6.6.6.6"; the ingress (10.0.0.2) appended the real peer 203.0.113.7.
    expect(clientAddress('6.6.6.6, 203.0.113.7', '10.0.0.2', 1)).toBe('203.0.113.7');
    expect(clientAddress('6.6.6.6, 203.0.113.7, 10.0.0.9', '10.0.0.2', 2)).toBe('203.0.113.7');
    expect(clientAddress(['6.6.6.6', '203.0.113.7'], '10.0.0.2', 1)).toBe('203.0.113.7');
  });

  it('uses the socket with no trusted proxy, and never walks past the left end', () => {
    expect(clientAddress('6.6.6.6', '203.0.113.7', 0)).toBe('203.0.113.7');
    expect(clientAddress(undefined, '203.0.113.7', 1)).toBe('203.0.113.7');
    expect(clientAddress('198.51.100.1', '10.0.0.2', 5)).toBe('198.51.100.1');
    expect(clientAddress('', undefined, 1)).toBe('unknown');
  });

  it('reads the hop count, or the older flag as 1 or 0 hops; neither: 0 (the socket address)', () => {
    expect(trustedProxyHops(undefined, undefined)).toBe(0);
    expect(trustedProxyHops(3, 'false')).toBe(3);
    expect(trustedProxyHops(undefined, 'true')).toBe(1);
    expect(trustedProxyHops(undefined, 'false')).toBe(0);
  });
});
