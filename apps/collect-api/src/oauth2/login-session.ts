import { randomBytes } from 'node:crypto';
import { SecretBox } from '../crypto/secrets.js';
import { cookieHeader, readCookie as readRequestCookie } from '../auth/cookies.js';
import type { HttpRequest, HttpResponse } from '../auth/http-types.js';

const SESSION_COOKIE = 'collect_o_session';
const CSRF_COOKIE = 'collect_o_csrf';

/**
 * Cookies of the /o/ pages, signed with COLLECT_SECRET_KEY: the login session (user id and
 * expiry) between the login and consent pages, and a CSRF secret whose HMAC every form carries
 * (double submit, signed). HttpOnly, SameSite=Lax, path /o, Secure behind https.
 */
export class LoginSessions {
  private readonly box: SecretBox;
  private readonly secure: boolean;

  constructor(secret: string, publicBaseUrl: string, private readonly lifetimeSeconds: number) {
    this.box = new SecretBox(secret);
    this.secure = publicBaseUrl.startsWith('https:');
  }

  /** The signed-in user and when the session began (ms), or null. */
  session(req: HttpRequest): { userId: number; issuedAt: number } | null {
    const raw = readCookie(req, SESSION_COOKIE);
    if (!raw) return null;
    const [id, exp, sig] = raw.split('.');
    if (!id || !exp || !sig || !this.box.verify(`session:${id}.${exp}`, sig)) return null;
    if (Number(exp) * 1000 <= Date.now()) return null;
    const userId = Number(id);
    return Number.isSafeInteger(userId) && userId > 0 ? { userId, issuedAt: (Number(exp) - this.lifetimeSeconds) * 1000 } : null;
  }

  start(res: HttpResponse, userId: number): void {
    const exp = Math.floor(Date.now() / 1000) + this.lifetimeSeconds;
    const value = `${userId}.${exp}.${this.box.sign(`session:${userId}.${exp}`)}`;
    res.append('Set-Cookie', this.cookie(SESSION_COOKIE, value, this.lifetimeSeconds));
  }

  /** The CSRF token for a form; sets the CSRF cookie when the browser has none yet. */
  csrfToken(req: HttpRequest, res: HttpResponse): string {
    let secret = readCookie(req, CSRF_COOKIE);
    if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) {
      secret = randomBytes(32).toString('base64url');
      res.append('Set-Cookie', this.cookie(CSRF_COOKIE, secret, 86_400));
      // The same request may render a form right away: remember the fresh value.
      (req as HttpRequest & { csrfSecret?: string }).csrfSecret = secret;
    }
    return this.box.sign(`csrf:${secret}`);
  }

  checkCsrf(req: HttpRequest, submitted: unknown): boolean {
    const secret = readCookie(req, CSRF_COOKIE);
    return typeof submitted === 'string' && !!secret && this.box.verify(`csrf:${secret}`, submitted);
  }

  private cookie(name: string, value: string, maxAge: number): string {
    return cookieHeader(name, value, { path: '/o', maxAge, secure: this.secure });
  }
}

/** The CSRF secret set by this very request wins over the (absent or stale) one the browser sent. */
function readCookie(req: HttpRequest, name: string): string | undefined {
  const fresh = name === CSRF_COOKIE ? (req as HttpRequest & { csrfSecret?: string }).csrfSecret : undefined;
  return fresh ?? readRequestCookie(req, name);
}
