/**
 * Server-rendered pages of the CAS. No script on any page: forms post back to the server and
 * tokens only ever travel server to server or in redirects to registered callbacks.
 */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;padding:2rem 2.5rem;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15);width:22rem}
h1{font-size:1.3rem;margin-top:0} label{display:block;margin:.8rem 0 .2rem} input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:1.2rem;padding:.55rem 1.2rem;font-size:1rem;cursor:pointer} .error{color:#a40000;background:#fdecec;padding:.5rem .7rem;border-radius:4px}
ul{padding-left:1.2rem} .row{display:flex;gap:.8rem}
</style>
</head>
<body><main>
${body}
</main></body>
</html>`;
}

export function loginPage(opts: { action: string; clientId: string; username?: string; error?: string }): string {
  return page(
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
  return page(
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

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p class="error" role="alert">${escapeHtml(message)}</p>`);
}
