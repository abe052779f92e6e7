import { escapeHtml, htmlPage } from '@collect/platform';

/** The "Sign in with the central service" link, shared by /login and the /o/authorize login page. */
export function casSignInButton(returnTo: string): string {
  return `<p><a class="cas-sign-in" href="/auth/login?return_to=${encodeURIComponent(returnTo)}">Sign in with the central service</a></p>`;
}

export function plainLoginPage(opts: { user: { username: string } | null; casEnabled: boolean }): string {
  if (opts.user) {
    return htmlPage(
      'Signed in',
      `<h1>Signed in</h1>
<p>Signed in as <strong id="signed-in-user">${escapeHtml(opts.user.username)}</strong>.</p>
<form method="post" action="/auth/logout"><button type="submit">Sign out</button></form>`,
    );
  }
  return htmlPage(
    'Sign in',
    `<h1>Sign in</h1>
${opts.casEnabled ? casSignInButton('/login') : '<p>Sign-in through the central service is not enabled.</p>'}`,
  );
}

export function logoutConfirmPage(): string {
  return htmlPage('Sign out', `<h1>Sign out?</h1>\n<form method="post" action="/auth/logout"><button type="submit">Sign out</button></form>`);
}

export function refusalPage(message: string): string {
  return htmlPage('Sign-in failed', `<h1>Sign-in failed</h1>\n<p class="error" role="alert">${escapeHtml(message)}</p>\n<p><a href="/login">Back to sign in</a></p>`);
}
