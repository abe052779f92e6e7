import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * SSRF guard for service_url: loopback, private, link-local (cloud metadata), CGNAT, unspecified
 * and multicast addresses are refused unless FORWARD_ALLOW_PRIVATE_NETWORKS allows them. The
 * check runs at create and again on the address each request actually connects to (a `lookup`
 * hook), so a DNS answer that changes after create (rebinding) is caught too.
 */
export class NetworkGuard {
  private readonly blocked = new BlockList();
  private readonly allowed = new BlockList();

  constructor(allowCidrs: string[]) {
    for (const [net, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) {
      this.blocked.addSubnet(net, prefix, 'ipv4');
    }
    for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['fec0::', 10]] as const) {
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
    let addr = address;
    let type: 'ipv4' | 'ipv6' = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
    if (mapped) [addr, type] = [mapped[1], 'ipv4'];
    if (this.allowed.check(addr, type)) return null;
    if (this.blocked.check(addr, type)) return `${address} is a loopback, private, link-local or reserved address`;
    return null;
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
