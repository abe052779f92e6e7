import { isAllowedRedirectUri } from './redirect-uris.js';
import { redirectWithParams } from './oauth2.service.js';
import { escapeHtml } from '@collect/platform';
import { consentPage, loginPage } from './views.js';

describe('oauth2 helpers', () => {
  it('adds state then code to the redirect URI, keeping its own query', () => {
    expect(redirectWithParams('https://c.example', { state: 'a b&c', code: 'x' })).toBe('https://c.example/?state=a+b%26c&code=x');
    expect(redirectWithParams('https://c.example/cb?keep=1', { state: undefined, code: 'x' })).toBe('https://c.example/cb?keep=1&code=x');
  });

  it('accepts only absolute http(s) redirect URIs without fragment', () => {
    expect(isAllowedRedirectUri('https://c.example/cb')).toBe(true);
    expect(isAllowedRedirectUri('http://127.0.0.1:8080/cb')).toBe(true);
    for (const bad of ['javascript:alert(1)', '/relative', 'https://c.example/#x', 'data:text/html,x', 'not a url']) expect(isAllowedRedirectUri(bad)).toBe(false);
  });

  it('escapes everything it renders', () => {
    expect(escapeHtml(`<a href="x">'&`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;');
    const login = loginPage({ appName: '<script>', next: '/o/authorize?a="b"', csrf: 't', username: '"><img>' });
    expect(login).not.toContain('<script>');
    expect(login).not.toContain('"><img>');
    const consent = consentPage({ appName: 'x', username: 'u', scopes: ['read', 'write'], params: { state: '"><b>' }, csrf: 't' });
    expect(consent).toContain('&quot;&gt;&lt;b&gt;');
    expect(consent).toContain('value="allow"');
  });
});
