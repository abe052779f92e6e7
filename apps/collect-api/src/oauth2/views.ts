/** Server-rendered pages of /o/ (login, consent, error). Every interpolated value is escaped. */

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;justify-content:center}
main{background:#fff;margin-top:10vh;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;width:22rem}
label{display:block;margin-top:1rem}input[type=text],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1.5rem;padding:.5rem 1.2rem;margin-right:.5rem}.error{color:#b00020}
</style>
</head>
<body><main>
${body}
</main></body>
</html>`;
}

function hidden(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v!)}">`)
    .join('\n');
}

export function loginPage(opts: { appName: string; next: string; csrf: string; error?: string; username?: string; casSignIn?: boolean }): string {
  return layout(
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
  return layout(
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
  return layout('Authorization error', `<h1>Authorization error</h1>\n<p class="error" role="alert">${escapeHtml(message)}</p>`);
}
