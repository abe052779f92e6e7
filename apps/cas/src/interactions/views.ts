import { escapeHtml, htmlPage } from '@collect/platform';

/**
 * Server-rendered pages of the CAS. No script on any page: forms post back to the server and
 * tokens only ever travel server to server or in redirects to registered callbacks.
 */
export function loginPage(opts: { action: string; clientId: string; username?: string; error?: string }): string {
  return htmlPage(
    'Sign in',
    `<h1>Sign in</h1>
<p>to continue to <strong>${escapeHtml(opts.clientId)}</strong></p>
${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
<form method="post" action="${escapeHtml(opts.action)}" autocomplete="on">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" required autofocus value="${escapeHtml(opts.username ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export function consentPage(opts: { action: string; abortAction: string; clientId: string; scopes: string[]; username: string }): string {
  return htmlPage(
    'Allow access',
    `<h1>Allow access?</h1>
<p><strong>${escapeHtml(opts.clientId)}</strong> asks to act for <strong>${escapeHtml(opts.username)}</strong> with these permissions:</p>
<ul id="scopes">${opts.scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join('')}</ul>
<div class="row">
<form method="post" action="${escapeHtml(opts.action)}"><button type="submit" name="decision" value="allow">Allow</button></form>
<form method="post" action="${escapeHtml(opts.abortAction)}"><button type="submit" name="decision" value="deny">Deny</button></form>
</div>`,
  );
}
