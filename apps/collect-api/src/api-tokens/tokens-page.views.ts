import { createHash } from 'node:crypto';
import { escapeHtml, htmlPage } from '@collect/platform';
import { PERSONAL_TOKEN_SCOPES } from '../auth/authenticated-user.js';
import type { ApiTokenBody } from './api-tokens.dto.js';

/**
 * The copy button's script: the only script of the page (its hash is the page's script-src).
 * It reads the token from the page and writes it to the clipboard; nothing is kept anywhere.
 */
export const COPY_SCRIPT = `document.getElementById('copy-token').addEventListener('click',function(){var s=document.getElementById('copy-status');navigator.clipboard.writeText(document.getElementById('new-token').textContent).then(function(){s.textContent='Copied.'},function(){s.textContent='Select the token and copy it.'})});`;
export const COPY_SCRIPT_HASH = `sha256-${createHash('sha256').update(COPY_SCRIPT, 'utf8').digest('base64')}`;

const SCOPE_HELP: Record<(typeof PERSONAL_TOKEN_SCOPES)[number], string> = {
  read: 'read: everything you may read',
  submit: 'submit: what a phone needs (forms, media, sending submissions)',
  write: 'write: everything you may do with your forms',
};

export interface TokensPageModel {
  username: string;
  csrf: string;
  tokens: ApiTokenBody[];
  /** The token just created: shown this once. */
  created?: { name: string; token: string };
  error?: string;
  name?: string;
}

/** The /tokens page (docs/auth.md, "The /tokens page"). */
export function tokensPage(m: TokensPageModel): string {
  const csrf = `<input type="hidden" name="csrf_token" value="${escapeHtml(m.csrf)}">`;
  const created = m.created
    ? `<section id="created" aria-live="polite"><h2>New token “${escapeHtml(m.created.name)}”</h2>
<p>Copy it now: it is shown this once and cannot be shown again.</p>
<p><code id="new-token" style="word-break:break-all">${escapeHtml(m.created.token)}</code></p>
<button type="button" id="copy-token">Copy</button> <span id="copy-status" role="status"></span>
<script>${COPY_SCRIPT}</script></section>`
    : '';
  const rows = m.tokens.map(
    (t) => `<li class="token" data-id="${t.id}"><strong class="token-name">${escapeHtml(t.name)}</strong> <code>${escapeHtml(t.prefix)}…</code> ${escapeHtml(t.scopes.join(', '))}<br>
<small>expires ${escapeHtml(t.expires_at.slice(0, 10))}; last used ${t.last_used_at ? escapeHtml(t.last_used_at.slice(0, 16).replace('T', ' ')) : 'never'}</small>
<form method="post" action="/tokens/${t.id}/revoke">${csrf}<button type="submit" aria-label="Revoke ${escapeHtml(t.name)}">Revoke</button></form></li>`,
  );
  const radios = PERSONAL_TOKEN_SCOPES.map(
    (s, i) => `<label><input type="radio" name="scope" value="${s}"${i === 0 ? ' checked' : ''}> ${escapeHtml(SCOPE_HELP[s])}</label>`,
  ).join('\n');
  return htmlPage(
    'Personal access tokens',
    `<h1>Personal access tokens</h1>
<p>Signed in as <strong id="signed-in-user">${escapeHtml(m.username)}</strong>.</p>
${m.error ? `<p class="error" role="alert">${escapeHtml(m.error)}</p>` : ''}
${created}
<h2>Your tokens</h2>
${rows.length ? `<ul id="tokens">${rows.join('\n')}</ul>` : '<p id="no-tokens">No tokens yet.</p>'}
<h2>Create a token</h2>
<form method="post" action="/tokens" autocomplete="off">${csrf}
<label for="name">Name</label><input type="text" id="name" name="name" maxlength="100" required value="${escapeHtml(m.name ?? '')}">
<fieldset><legend>Scope</legend>
${radios}
</fieldset>
<button type="submit">Create</button></form>
<form method="post" action="/auth/logout"><button type="submit">Sign out</button></form>`,
  );
}
