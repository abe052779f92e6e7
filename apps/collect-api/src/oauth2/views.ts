import { escapeHtml, htmlPage, messagePage } from '@collect/platform';

/** Server-rendered pages of /o/ (login, consent, error). Every interpolated value is escaped. */

function hidden(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v!)}">`)
    .join('\n');
}

export function loginPage(opts: { appName: string; next: string; csrf: string; error?: string; username?: string; casSignIn?: boolean }): string {
  return htmlPage(
    'Sign in',
    `<h1>Sign in</h1>
<p>to continue to <strong>${escapeHtml(opts.appName)}</strong></p>
${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
<form method="post" action="/o/login">
${hidden({ csrf_token: opts.csrf, next: opts.next })}
<label>Username <input type="text" name="username" autocomplete="username" required value="${escapeHtml(opts.username ?? '')}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>${opts.casSignIn ? `\n<p>or</p>\n<p><a class="cas-sign-in" href="/auth/login?return_to=${escapeHtml(encodeURIComponent(opts.next))}">Sign in with the central service</a></p>` : ''}`,
  );
}

export function consentPage(opts: { appName: string; username: string; scopes: string[]; params: Record<string, string | undefined>; csrf: string }): string {
  const described: Record<string, string> = { read: 'Read your data', write: 'Change your data', groups: 'Access your groups' };
  return htmlPage(
    'Authorize',
    `<h1>Authorize ${escapeHtml(opts.appName)}?</h1>
<p>Signed in as <strong>${escapeHtml(opts.username)}</strong>. The application asks for:</p>
<ul>${opts.scopes.map((s) => `<li>${escapeHtml(described[s] ?? s)} (${escapeHtml(s)})</li>`).join('')}</ul>
<form method="post" action="/o/authorize">
${hidden({ ...opts.params, csrf_token: opts.csrf })}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function errorPage(message: string): string {
  return messagePage('Authorization error', message);
}
