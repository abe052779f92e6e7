import type { HttpRequest } from './http-types.js';

/** The value of one cookie from the Cookie header (no cookie-parser in this app). */
export function readCookie(req: HttpRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function cookieHeader(name: string, value: string, opts: { path: string; maxAge: number; secure: boolean }): string {
  return `${name}=${value}; Path=${opts.path}; Max-Age=${opts.maxAge}; HttpOnly; SameSite=Lax${opts.secure ? '; Secure' : ''}`;
}
