import type * as oidc from 'openid-client';

/** openid-client loads with the first CAS sign-in or on-boarding call, not at start-up: idle memory (docs/benchmarks.md). */
let oidcModule: Promise<typeof oidc> | undefined;
export const loadOidc = (): Promise<typeof oidc> => (oidcModule ??= import('openid-client'));

/**
 * openid-client configurations for the CAS, one per client of ours (collect-web for sign-in,
 * the on-boarding client for cas-api), discovered lazily so collect-api starts while the CAS
 * is down; a failed discovery is retried on the next use instead of being cached.
 */
export class CasClientDiscovery {
  private pending: Promise<oidc.Configuration> | null = null;

  constructor(
    private readonly issuer: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
    private readonly allowHttp: boolean,
  ) {}

  get(): Promise<oidc.Configuration> {
    if (!this.pending) {
      this.pending = loadOidc().then((oidc) => {
        const options = this.allowHttp ? { execute: [oidc.allowInsecureRequests], timeout: 10 } : { timeout: 10 };
        return oidc.discovery(new URL(this.issuer), this.clientId, this.clientSecret, oidc.ClientSecretBasic(this.clientSecret), options);
      });
      this.pending.catch(() => (this.pending = null));
    }
    return this.pending;
  }
}

/** Plain http is only for development and tests (http://localhost); production needs https. */
export function allowHttpIssuer(nodeEnv: string, issuer: string): boolean {
  return nodeEnv !== 'production' && issuer.startsWith('http:');
}
