import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * SSRF guard for service_url: loopback, private, link-local (cloud metadata), CGNAT, unspecified
 * and multicast addresses are refused unless FORWARD_ALLOW_PRIVATE_NETWORKS allows them. The
 * check runs at create and again on the address each request actually connects to (a `lookup`
 * hook), so a DNS answer that changes after create (rebinding) is caught too. An IPv6 address of
 * a transition range that carries an IPv4 address (mapped, IPv4-compatible, SIIT, NAT64, 6to4,
 * Teredo) is judged by that IPv4 address as well: `64:ff9b::a9fe:a9fe` reaches 169.254.169.254
 * through a NAT64 gateway (docs/restservices.md).
 */
export class NetworkGuard {
  private readonly blocked = new BlockList();
  private readonly allowed = new BlockList();

  constructor(allowCidrs: string[]) {
    for (const [net, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) {
      this.blocked.addSubnet(net, prefix, 'ipv4');
    }
    // 64:ff9b:1::/48 is local-use NAT64 (RFC 8215), not globally reachable: refused whole.
    for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['fec0::', 10], ['64:ff9b:1::', 48]] as const) {
      this.blocked.addSubnet(net, prefix, 'ipv6');
    }
    for (const cidr of allowCidrs) {
      const [net, bits] = cidr.split('/');
      const type = isIP(net) === 6 ? 'ipv6' : 'ipv4';
      if (!isIP(net)) throw new Error(`FORWARD_ALLOW_PRIVATE_NETWORKS: "${cidr}" is not a CIDR`);
      this.allowed.addSubnet(net, bits === undefined ? (type === 'ipv6' ? 128 : 32) : Number(bits), type);
    }
  }

  /** Null when the address may be contacted, else the reason. */
  refusal(address: string): string | null {
    const reason = `${address} is a loopback, private, link-local or reserved address`;
    if (isIP(address) !== 6) {
      if (this.allowed.check(address, 'ipv4')) return null;
      return this.blocked.check(address, 'ipv4') ? reason : null;
    }
    const embedded = embeddedIPv4(address);
    if (this.allowed.check(address, 'ipv6') || embedded.some((v4) => this.allowed.check(v4, 'ipv4'))) return null;
    if (this.blocked.check(address, 'ipv6')) return reason;
    const inner = embedded.find((v4) => this.blocked.check(v4, 'ipv4'));
    return inner ? `${address} carries ${inner}, a loopback, private, link-local or reserved address` : null;
  }

  /** Resolves the URL's host and checks every address; the reason of the first refusal or null. */
  async checkUrl(url: URL): Promise<string | null> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
      } catch {
        return `the host ${host} does not resolve`;
      }
    }
    for (const a of addresses) {
      const reason = this.refusal(a);
      if (reason) return reason;
    }
    return null;
  }

  /** A `lookup` for http.request that refuses blocked addresses at connect time. */
  readonly lookup = (hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    dnsLookup(hostname, { ...options, all: true } as never, (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (err) return callback(err, []);
      for (const a of addresses) {
        const reason = this.refusal(a.address);
        if (reason) return callback(Object.assign(new Error(`refused: ${reason}`), { code: 'EFORWARDBLOCKED' }), []);
      }
      if ((options as { all?: boolean }).all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** The 16 bytes of an IPv6 address (zone id dropped; the URL parser validates and writes dotted quads in hex). */
function ipv6Bytes(address: string): Buffer {
  const host = new URL(`http://[${address.split('%')[0]}]`).hostname.slice(1, -1);
  const [head, tail] = host.includes('::') ? host.split('::') : [host, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

/**
 * The IPv4 addresses an IPv6 address of a transition range carries: IPv4-mapped
 * (`::ffff:0:0/96`), IPv4-compatible (`::/96`), SIIT (`::ffff:0:0:0/96`), NAT64 (`64:ff9b::/96`),
 * 6to4 (`2002::/16`, bits 16-47) and Teredo (`2001::/32`: the server, bits 32-63, and the client,
 * the last 32 bits inverted).
 */
export function embeddedIPv4(address: string): string[] {
  let b: Buffer;
  try {
    b = ipv6Bytes(address);
  } catch {
    return [];
  }
  const v4 = (at: number, invert = false) => [...b.subarray(at, at + 4)].map((x) => (invert ? x ^ 0xff : x)).join('.');
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  const word = (at: number) => b.readUInt16BE(at);
  if (zero(0, 10) && word(10) === 0xffff) return [v4(12)];
  if (zero(0, 12)) return [v4(12)];
  if (zero(0, 8) && word(8) === 0xffff && word(10) === 0) return [v4(12)];
  if (word(0) === 0x64 && word(2) === 0xff9b && zero(4, 12)) return [v4(12)];
  if (word(0) === 0x2002) return [v4(2)];
  if (word(0) === 0x2001 && word(2) === 0) return [v4(4), v4(12, true)];
  return [];
}
