/**
 * Drives the CAS login and consent pages over plain HTTP (a cookie jar and the same form posts a
 * browser makes): fast enough for the many code-flow refusal tests. The browser test
 * (authorization-code.e2e.ts) covers the same pages in Chromium.
 */
export class FormLogin {
  private readonly cookies = new Map<string, string>();
  /** Every response on the way, for assertions. */
  readonly trail: Array<{ url: string; status: number; body: string }> = [];

  constructor(private readonly base: string) {}

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(new URL(url, this.base), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  /** Follows redirects inside the CAS; stops at a page (2xx/4xx) or at a redirect leaving it. */
  async follow(url: string, init: RequestInit = {}): Promise<{ url: string; status: number; body: string; location?: string }> {
    let current = new URL(url, this.base).toString();
    let res = await this.fetch(current, init);
    for (let hops = 0; hops < 10 && res.status >= 300 && res.status < 400; hops++) {
      const next = new URL(res.headers.get('location')!, current).toString();
      if (!next.startsWith(this.base)) return { url: current, status: res.status, body: '', location: next };
      current = next;
      res = await this.fetch(current);
    }
    const body = await res.text();
    this.trail.push({ url: current, status: res.status, body });
    return { url: current, status: res.status, body };
  }

  submit(action: string, form: Record<string, string>) {
    return this.follow(action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  }

  /** Authorization URL → login → consent (Allow) → the redirect to the client (its URL). */
  async authorize(authorizationUrl: string, username: string, password: string, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
    let step = await this.follow(authorizationUrl);
    if (step.location) return new URL(step.location); // error redirect, or an existing session + grant
    let action = formAction(step.body);
    if (action?.endsWith('/login')) {
      step = await this.submit(action, { username, password });
      if (step.location) return new URL(step.location);
      action = formAction(step.body, decision === 'allow' ? '/confirm' : '/abort');
    } else if (action && decision === 'deny') {
      action = formAction(step.body, '/abort');
    }
    if (!action) throw new Error(`no form on ${step.url} (${step.status}): ${step.body.slice(-400)}`);
    step = await this.submit(action, {});
    if (!step.location) throw new Error(`consent did not redirect: ${step.status} ${step.body.slice(0, 300)}`);
    return new URL(step.location);
  }
}

export function formAction(html: string, endsWith = ''): string | undefined {
  return [...html.matchAll(/<form[^>]*action="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&')).find((a) => a.endsWith(endsWith));
}
