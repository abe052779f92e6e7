import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { casUserId } from './cas-env.js';
import { demoInstance, demoXForm } from './forms-fixtures.js';

/*
 * The rows of the permission matrix (hardening-permission-matrix.e2e.ts): the kinds of caller,
 * the expected status of each route for each, and the fixtures a row needs.
 */

/** A public key whose private half nobody keeps: the matrix only checks who may set a key. */
export const SELF_PUBLIC_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
/** A private key of no form: a decrypt request carrying it is a 400 for everyone who may read the form. */
export const DECRYPT_PRIVATE_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
export const ROLES = ['owner', 'manager', 'editor', 'dataentry', 'readonly'] as const;
export const ROLE_CALLERS = [...ROLES, 'stranger', 'anonymous', 'service', 'admin'] as const;
export const SCOPE_CALLERS = ['bearer-read', 'bearer-rw', 'token'] as const;
export const PAT_SCOPES = ['read', 'submit', 'write'] as const;
export const PAT_CALLERS = [
  ...PAT_SCOPES.map((s) => `pat-${s}` as const),
  ...PAT_SCOPES.map((s) => `pat-${s}-elsewhere` as const),
  'pat-expired',
  'pat-revoked',
] as const;
/** Scope callers first: the `token` caller's regenerate_auth_token must not follow the owner's. */
export const CALLERS = [...SCOPE_CALLERS, ...PAT_CALLERS, ...ROLE_CALLERS] as const;
export type RoleCaller = (typeof ROLE_CALLERS)[number];
export type ScopeCaller = (typeof SCOPE_CALLERS)[number];
export type PatCaller = (typeof PAT_CALLERS)[number];
export type PatExpect = Record<PatCaller, number>;
/** Callers that send their own credential even where a row asks for Basic. */
export const OWN_CREDENTIAL: ReadonlySet<string> = new Set([...SCOPE_CALLERS, ...PAT_CALLERS]);
export type Caller = (typeof CALLERS)[number];
export type FormRole = (typeof ROLES)[number];
export type Expect = Record<RoleCaller, number>;
export type ScopeExpect = Record<ScopeCaller, number>;
/** Callers whose credential is a scoped Bearer token. */
export const BEARER_CALLERS: ReadonlySet<Caller> = new Set(['bearer-read', 'bearer-rw', 'service']);
/** Callers whose credential is scoped (Bearer or a personal token): no answer to them holds a credential. */
export const SCOPED_CALLERS: ReadonlySet<Caller> = new Set([...BEARER_CALLERS, ...PAT_CALLERS]);
/**
 * Submit-class routes: what a phone needs; a `submit` personal token may call them
 * (auth/scope-class.decorator.ts, docs/auth.md "Scopes of a route").
 */
export const SUBMIT_CLASS: ReadonlySet<string> = new Set([
  'GET /formList', 'GET /:username/formList', 'GET /forms/:pk/form.xml', 'GET /:username/forms/:pk/form.xml', 'GET /api/v1/forms/:pk/form.xml',
  'HEAD /submission', 'HEAD /:username/submission', 'POST /submission', 'POST /:username/submission', 'POST /api/v1/submissions',
  'GET /xformsManifest/:pk', 'GET /:username/xformsManifest/:pk', 'GET /xformsMedia/:pk/:mediaId', 'GET /:username/xformsMedia/:pk/:mediaId',
]);
/** Routes outside the AuthGuard: Swagger's (not Nest routes) and /metrics (METRICS_TOKEN, not user credentials). */
export const GUARD_FREE = /^GET \/(api\/docs|metrics$)/;
/** Account routes: never a personal token, whatever its scopes. */
export const ACCOUNT_CLASS = /^\S+ \/api\/v1\/(api-tokens|oauth-applications|user\/(regenerate_auth_token|expire))/;
/** Keys that carry an unscoped credential. */
export const CREDENTIAL_FIELDS = ['api_token', 'temp_token', 'client_secret', 'token'];
/** Who reads a stored third-party secret (messaging auth_token) in clear: editors and above, by a full credential. */
export const MAY_READ_MESSAGING_SECRET: ReadonlySet<Caller> = new Set(['owner', 'manager', 'editor', 'admin', 'token']);

/**
 * docs/api-conventions.md: a form the caller cannot see is 404, a visible form with too low a role 403, no
 * credentials 401. A platform admin acts as the owner of every form (FormAccessService).
 */
export function atLeast(min: FormRole, ok: number): Expect {
  const rank = (r: FormRole) => ROLES.indexOf(r);
  const out = { stranger: 404, anonymous: 401, service: 404, admin: ok } as Expect;
  for (const r of ROLES) out[r] = rank(r) <= rank(min) ? ok : 403;
  return out;
}
/** Any authenticated caller (not form-scoped). */
export const anyUser = (ok: number): Expect => ({ ...everyone(ok), anonymous: 401 });
/** The same answer whoever asks (public pages, protocol endpoints that ignore user credentials). */
export function everyone(s: number): Expect {
  return Object.fromEntries(ROLE_CALLERS.map((c) => [c, s])) as Expect;
}
/** Only the owner of a per-user object (an OAuth application), or a platform admin. */
export const ownerOnly = (ok: number): Expect => ({ ...everyone(404), owner: ok, admin: ok, anonymous: 401 });
/** Platform admins only (docs/api-conventions.md §Roles and permissions): others 403, anonymous 401. */
export const adminOnly = (ok: number): Expect => ({ ...everyone(403), admin: ok, anonymous: 401 });

export interface Fixture {
  /** The owner's username (owner-scoped OpenRosa paths). */
  owner: string;
  formId: number;
  idString: string;
  otherFormId: number;
  submissionId: number;
  /** The submission's instance id (`_uuid`), for the Briefcase pull's key. */
  submissionUuid: string;
  dataviewId: number;
  mergedId: number;
  appId: number;
  /** An entity list of the owner that the form uses (every role reads it), with one entity. */
  listId: number;
  /** Its name: the form loads it as `<listName>.csv` (its list attachment). */
  listName: string;
  entityId: number;
  /** Only in the shared fixture (the routes that use them have no `fresh` row). */
  shared?: SharedExtras;
}

/** Media and rest-service fixtures of the shared fixture; per-caller ids where a call uses its object up. */
export interface SharedExtras {
  mediaId: number;
  mediaFilename: string;
  /** A generic_json service read, patched and replaced by every caller. */
  serviceId: number;
  /** A messaging service whose `auth_token` (MESSAGING_SECRET) only editors and above read, never through Bearer. */
  messagingId: number;
  /** A service with one finished (failed) delivery per caller: a retried delivery is in progress until sent. */
  retryServiceId: number;
  retryEntry: Record<Caller, number>;
  /** One service per caller for DELETE. */
  deleteServiceId: Record<Caller, number>;
  /** A finished asynchronous CSV export of the owner's. */
  exportId: string;
  /** A finished (empty) replay of serviceId. */
  replayId: number;
  /** A personal token of the owner's per caller, for DELETE. */
  deleteTokenId: Record<Caller, number>;
  /** A form media file of the form, and one per caller for DELETE. */
  metadataId: number;
  deleteMetadataId: Record<Caller, number>;
}

/** CAS subjects and client ids for the platform-admin rows (set up in `beforeAll`). */
export const cas = { onboardId: '', offboardId: '', spareClientId: 'matrix-spare-client' };

export interface Call {
  path: string;
  body?: object;
  /** Raw body with its content type (XML, multipart is built with `attachXml`). */
  raw?: { type: string; text: string };
  attachXml?: { field: string; xml: string };
  /** A multipart form: plain fields and file parts. */
  form?: { fields: Record<string, string>; files: Record<string, { name: string; data: Buffer }> };
  /** Basic credentials instead of the API token (DELETE /user/expire is Basic only). */
  basic?: boolean;
}

export interface RouteCase {
  /** `METHOD /path/:param` exactly as the router lists it. */
  route: string;
  /** A fixture of its own for each caller (the call destroys or changes what it acts on). */
  fresh?: boolean;
  call: (f: Fixture, who: Caller, n: number) => Call;
  expect: Expect;
  /**
   * The owner's answers through each scope caller, where they differ from the default: the
   * owner's own answer, except 403 for a read-only Bearer token on an unsafe method.
   */
  scoped?: Partial<ScopeExpect>;
  /** The owner's answers through personal tokens, where they differ from patExpect's rule. */
  pat?: Partial<PatExpect>;
  /** Credential fields (or `body`: the whole answer is the credential) a `Token` caller gets here. */
  reveals?: string[];
  /** The route never reads the Authorization header (browser pages, the token endpoint). */
  ignoresAuthorization?: boolean;
}

export const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The scope axis of a row: its `scoped` overrides over the default. */
export function scopeExpect(row: RouteCase): ScopeExpect {
  const owner = row.expect.owner;
  const safe = SAFE.has(row.route.split(' ')[0]) || row.ignoresAuthorization;
  return { 'bearer-read': safe ? owner : 403, 'bearer-rw': owner, token: owner, ...row.scoped };
}

/**
 * The personal-token axis of a row: the owner's answer where the token's scope fits the route's
 * class (else 403; an account route 403, or 401 where the owner's own non-Basic credential is), 403 for a
 * narrowed token on a route about one form (a row made by `atLeast`), 401 for an expired or
 * revoked token; the owner's answer where the route never reads the header.
 */
export function patExpect(row: RouteCase): PatExpect {
  const owner = row.expect.owner;
  const out = {} as PatExpect;
  const [method] = row.route.split(' ');
  const accepted: string[] = ['write', ...(SAFE.has(method) ? ['read'] : []), ...(SUBMIT_CLASS.has(row.route) ? ['submit'] : [])];
  const aboutOneForm = row.expect.stranger === 404 && row.expect.readonly !== 404;
  // Routes the AuthGuard never sees (Swagger's, and /metrics with its own token): the owner's answer.
  if (GUARD_FREE.test(row.route)) return Object.fromEntries(PAT_CALLERS.map((who) => [who, owner])) as PatExpect;
  for (const scope of PAT_SCOPES) {
    const s = ACCOUNT_CLASS.test(row.route) ? (owner === 401 || row.route.includes('/user/expire') ? 401 : 403) : accepted.includes(scope) ? owner : 403;
    out[`pat-${scope}`] = s;
    out[`pat-${scope}-elsewhere`] = s < 400 && aboutOneForm ? 403 : s;
  }
  out['pat-expired'] = out['pat-revoked'] = 401;
  if (row.ignoresAuthorization) for (const who of PAT_CALLERS) out[who] = owner;
  return { ...out, ...row.pat };
}

/** Whether a caller gets a fixture of its own on a `fresh` row (personal tokens only where expected to act). */
export function ownFixture(row: RouteCase, who: Caller): boolean {
  return !(PAT_CALLERS as readonly string[]).includes(who) || patExpect(row)[who as PatCaller] < 400;
}

/** The messaging `auth_token` of the shared fixture: a stored third-party secret. */
export const MESSAGING_SECRET = `msg-secret-${randomUUID()}`;

let seq = 0;
export const uniq = () => `${Date.now().toString(36)}${++seq}`;

export const TABLE: RouteCase[] = [
  // Public
  { route: 'GET /api/v1', call: () => ({ path: '/api/v1' }), expect: everyone(200) },
  { route: 'GET /health/live', call: () => ({ path: '/health/live' }), expect: everyone(200) },
  { route: 'GET /health/ready', call: () => ({ path: '/health/ready' }), expect: everyone(200) },
  { route: 'GET /api/docs-json', call: () => ({ path: '/api/docs-json' }), expect: everyone(200) },
  { route: 'GET /api/docs-yaml', call: () => ({ path: '/api/docs-yaml' }), expect: everyone(200) },
  { route: 'GET /api/docs', call: () => ({ path: '/api/docs' }), expect: everyone(200) },
  { route: 'GET /api/docs/swagger-ui-init.js', call: () => ({ path: '/api/docs/swagger-ui-init.js' }), expect: everyone(200) },
  { route: 'GET /api/docs/docs/swagger-ui-init.js', call: () => ({ path: '/api/docs/docs/swagger-ui-init.js' }), expect: everyone(200) },
  { route: 'GET /api/docs/index.html', call: () => ({ path: '/api/docs/index.html' }), expect: everyone(200) },
  // Swagger registers the route but swagger-ui-dist ships no LICENSE file.
  { route: 'GET /api/docs/LICENSE', call: () => ({ path: '/api/docs/LICENSE' }), expect: everyone(404) },
  // Users and profiles
  { route: 'GET /api/v1/user', call: () => ({ path: '/api/v1/user' }), expect: anyUser(200), reveals: ['api_token', 'temp_token'] },
  // GET /api/v1/user (the row above) made each caller a temporary token, so there is one to delete.
  // Basic only: a service account has no password, so it sends its Bearer token and is refused.
  { route: 'DELETE /api/v1/user/expire', call: () => ({ path: '/api/v1/user/expire', basic: true }), expect: { ...anyUser(204), service: 401 }, scoped: { 'bearer-read': 401, 'bearer-rw': 401, token: 401 } },
  // The credential rule: a Bearer token of any scope never mints an API token.
  { route: 'GET /api/v1/user/regenerate_auth_token', call: () => ({ path: '/api/v1/user/regenerate_auth_token', basic: true }), expect: { ...anyUser(201), service: 403 }, scoped: { 'bearer-read': 403, 'bearer-rw': 403 }, reveals: ['body'] },
  { route: 'GET /api/v1/users/:username', call: () => ({ path: '/api/v1/users/admin' }), expect: anyUser(200) },
  { route: 'POST /api/v1/profiles', call: () => { const u = `p${uniq()}`; return { path: '/api/v1/profiles', body: { username: u, password: `${u}-long-password`, email: `${u}@example.org` } }; }, expect: everyone(201) },
  { route: 'GET /api/v1/profiles/:username', call: () => ({ path: '/api/v1/profiles/admin' }), expect: everyone(200) },
  // Local OAuth 2.0 provider
  // A new client and its secret are a credential: not for Bearer callers.
  { route: 'POST /api/v1/oauth-applications', call: () => ({ path: '/api/v1/oauth-applications', body: { name: 'm', redirect_uris: 'https://c.example/cb' } }), expect: { ...anyUser(201), service: 403 }, scoped: { 'bearer-rw': 403 }, reveals: ['client_secret'] },
  { route: 'GET /api/v1/oauth-applications', call: () => ({ path: '/api/v1/oauth-applications' }), expect: anyUser(200) },
  { route: 'GET /api/v1/oauth-applications/:id', call: (f) => ({ path: `/api/v1/oauth-applications/${f.appId}` }), expect: ownerOnly(200) },
  { route: 'DELETE /api/v1/oauth-applications/:id', fresh: true, call: (f) => ({ path: `/api/v1/oauth-applications/${f.appId}` }), expect: ownerOnly(204) },
  // Personal access tokens (docs/auth.md): created with the user's own session only (Bearer: 403), never by a personal token.
  { route: 'POST /api/v1/api-tokens', call: () => ({ path: '/api/v1/api-tokens', body: { name: 'm', scopes: ['read'] } }), expect: { ...anyUser(201), service: 403 }, scoped: { 'bearer-read': 403, 'bearer-rw': 403 }, reveals: ['token'] },
  { route: 'GET /api/v1/api-tokens', call: () => ({ path: '/api/v1/api-tokens' }), expect: anyUser(200) },
  { route: 'DELETE /api/v1/api-tokens/:id', call: (f, who) => ({ path: `/api/v1/api-tokens/${f.shared!.deleteTokenId[who]}` }), expect: ownerOnly(204) },
  // The /tokens page reads the CAS session cookie only: without one, to the sign-in.
  { route: 'GET /tokens', ignoresAuthorization: true, call: () => ({ path: '/tokens' }), expect: everyone(302) },
  { route: 'POST /tokens', ignoresAuthorization: true, call: () => ({ path: '/tokens', body: { name: 'x', scope: 'read' } }), expect: everyone(303) },
  { route: 'POST /tokens/:id/revoke', ignoresAuthorization: true, call: (f, who) => ({ path: `/tokens/${f.shared!.deleteTokenId[who]}/revoke`, body: {} }), expect: everyone(303) },
  // The token endpoint authenticates clients, not users: a user's header is a failed client authentication.
  { route: 'POST /o/token', ignoresAuthorization: true, call: () => ({ path: '/o/token', body: { grant_type: 'refresh_token', refresh_token: 'x' } }), expect: { ...everyone(401), anonymous: 401 } },
  { route: 'GET /o/authorize', ignoresAuthorization: true, call: () => ({ path: '/o/authorize' }), expect: everyone(400) },
  { route: 'POST /o/login', ignoresAuthorization: true, call: () => ({ path: '/o/login', body: {} }), expect: everyone(403) },
  { route: 'POST /o/authorize', ignoresAuthorization: true, call: () => ({ path: '/o/authorize', body: {} }), expect: everyone(403) },
  // Forms
  { route: 'POST /api/v1/forms', call: () => ({ path: '/api/v1/forms', raw: { type: 'application/xml', text: demoXForm(`f${uniq()}`) } }), expect: anyUser(201) },
  { route: 'GET /api/v1/forms', call: () => ({ path: '/api/v1/forms' }), expect: anyUser(200) },
  { route: 'GET /api/v1/forms/:pk', call: (f) => ({ path: `/api/v1/forms/${f.formId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/forms/:pk/form.xml', call: (f) => ({ path: `/api/v1/forms/${f.formId}/form.xml` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/forms/:pk/fields', call: (f) => ({ path: `/api/v1/forms/${f.formId}/fields` }), expect: atLeast('readonly', 200) },
  // The shared form has no key, so reading it is 404 for everyone who can see the form (docs/encryption.md).
  { route: 'GET /api/v1/forms/:pk/encryption', call: (f) => ({ path: `/api/v1/forms/${f.formId}/encryption` }), expect: atLeast('readonly', 404), pat: { 'pat-read-elsewhere': 403, 'pat-write-elsewhere': 403 } },
  { route: 'POST /api/v1/forms/:pk/encryption', fresh: true, call: (f) => ({ path: `/api/v1/forms/${f.formId}/encryption`, body: { mode: 'self', public_key: SELF_PUBLIC_KEY } }), expect: atLeast('manager', 201) },
  // Decrypt exports (docs/encryption.md): readers of the form; the shared form has no key, so a private key is not its key (400).
  { route: 'POST /api/v1/forms/:pk/decrypt', call: (f) => ({ path: `/api/v1/forms/${f.formId}/decrypt`, body: { private_key: DECRYPT_PRIVATE_KEY, format: 'csv' } }), expect: atLeast('readonly', 400), pat: { 'pat-read-elsewhere': 403, 'pat-write-elsewhere': 403 } },
  { route: 'PATCH /api/v1/forms/:pk', fresh: true, call: (f) => ({ path: `/api/v1/forms/${f.formId}`, body: { title: 'New' } }), expect: atLeast('manager', 200) },
  { route: 'DELETE /api/v1/forms/:pk', fresh: true, call: (f) => ({ path: `/api/v1/forms/${f.formId}` }), expect: atLeast('manager', 204) },
  { route: 'PUT /api/v1/forms/:pk/share', fresh: true, call: (f) => ({ path: `/api/v1/forms/${f.formId}/share`, body: { username: 'admin', role: 'readonly' } }), expect: atLeast('manager', 204) },
  // OpenRosa
  { route: 'GET /formList', call: () => ({ path: '/formList' }), expect: anyUser(200) },
  { route: 'GET /forms/:pk/form.xml', call: (f) => ({ path: `/forms/${f.formId}/form.xml` }), expect: atLeast('readonly', 200) },
  // The OpenRosa pre-flight answers 401 with WWW-Authenticate without credentials, as the peers do.
  { route: 'HEAD /submission', call: () => ({ path: '/submission' }), expect: anyUser(204) },
  { route: 'POST /submission', call: (f) => ({ path: '/submission', attachXml: { field: 'xml_submission_file', xml: demoInstance({ instanceId: randomUUID(), idString: f.idString }) } }), expect: atLeast('dataentry', 201) },
  // Owner-scoped OpenRosa paths (docs/forms.md): the list is the owner's forms the caller may submit to (empty for others).
  { route: 'GET /:username/formList', call: (f) => ({ path: `/${f.owner}/formList` }), expect: anyUser(200) },
  { route: 'GET /:username/forms/:pk/form.xml', call: (f) => ({ path: `/${f.owner}/forms/${f.formId}/form.xml` }), expect: atLeast('readonly', 200) },
  { route: 'HEAD /:username/submission', call: (f) => ({ path: `/${f.owner}/submission` }), expect: anyUser(204) },
  { route: 'POST /:username/submission', call: (f) => ({ path: `/${f.owner}/submission`, attachXml: { field: 'xml_submission_file', xml: demoInstance({ instanceId: randomUUID(), idString: f.idString }) } }), expect: atLeast('dataentry', 201) },
  // Form media and the OpenRosa manifest (docs/api-conventions.md §Roles and permissions: editors and above add and delete, readonly reads).
  {
    route: 'POST /api/v1/metadata',
    call: (f) => ({ path: '/api/v1/metadata', form: { fields: { xform: String(f.formId), data_type: 'media', data_value: `m${uniq()}.csv` }, files: { data_file: { name: 'm.csv', data: Buffer.from('a,b\n1,2\n') } } } }),
    expect: atLeast('editor', 201),
  },
  { route: 'GET /api/v1/metadata', call: (f) => ({ path: `/api/v1/metadata?xform=${f.formId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/metadata/:pk', call: (f) => ({ path: `/api/v1/metadata/${f.shared!.metadataId}` }), expect: atLeast('readonly', 200) },
  { route: 'DELETE /api/v1/metadata/:pk', call: (f, who) => ({ path: `/api/v1/metadata/${f.shared!.deleteMetadataId[who]}` }), expect: atLeast('editor', 204) },
  { route: 'GET /xformsManifest/:pk', call: (f) => ({ path: `/xformsManifest/${f.formId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /:username/xformsManifest/:pk', call: (f) => ({ path: `/${f.owner}/xformsManifest/${f.formId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /xformsMedia/:pk/:mediaId', call: (f) => ({ path: `/xformsMedia/${f.formId}/${f.shared!.metadataId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /:username/xformsMedia/:pk/:mediaId', call: (f) => ({ path: `/${f.owner}/xformsMedia/${f.formId}/${f.shared!.metadataId}` }), expect: atLeast('readonly', 200) },
  // Briefcase pull (docs/encryption.md "Briefcase pull"): readers of the form; a form the caller cannot read is not found.
  { route: 'GET /view/submissionList', call: (f) => ({ path: `/view/submissionList?formId=${f.idString}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /:username/view/submissionList', call: (f) => ({ path: `/${f.owner}/view/submissionList?formId=${f.idString}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /view/downloadSubmission', call: (f) => ({ path: `/view/downloadSubmission?formId=${encodeURIComponent(`${f.idString}[@version=null and @uiVersion=null]/data[@key=uuid:${f.submissionUuid}]`)}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /:username/view/downloadSubmission', call: (f) => ({ path: `/${f.owner}/view/downloadSubmission?formId=${encodeURIComponent(`${f.idString}/data[@key=uuid:${f.submissionUuid}]`)}` }), expect: atLeast('readonly', 200) },
  // Submissions and data
  { route: 'POST /api/v1/submissions', call: (f) => ({ path: '/api/v1/submissions', body: { id: f.idString, submission: { name: 'x' } } }), expect: atLeast('dataentry', 201) },
  { route: 'GET /api/v1/data/:formPk', call: (f) => ({ path: `/api/v1/data/${f.formId}` }), expect: atLeast('readonly', 200) },
  // Exports follow the listing they mirror (docs/exports.md); an asynchronous export is its requester's (or an admin's).
  { route: 'GET /api/v1/data/:formPk.csv', call: (f) => ({ path: `/api/v1/data/${f.formId}.csv` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/data/:formPk.xlsx', call: (f) => ({ path: `/api/v1/data/${f.formId}.xlsx` }), expect: atLeast('readonly', 200) },
  { route: 'POST /api/v1/export', call: (f) => ({ path: '/api/v1/export', body: { xform: f.formId, format: 'csv' } }), expect: atLeast('readonly', 202) },
  { route: 'GET /api/v1/export/:id', call: (f) => ({ path: `/api/v1/export/${f.shared!.exportId}` }), expect: ownerOnly(200), pat: { 'pat-read-elsewhere': 403, 'pat-write-elsewhere': 403 } },
  { route: 'GET /api/v1/export/:id/download', call: (f) => ({ path: `/api/v1/export/${f.shared!.exportId}/download` }), expect: ownerOnly(200), pat: { 'pat-read-elsewhere': 403, 'pat-write-elsewhere': 403 } },
  { route: 'GET /api/v1/data/:formPk/:id', call: (f) => ({ path: `/api/v1/data/${f.formId}/${f.submissionId}` }), expect: atLeast('readonly', 200) },
  { route: 'DELETE /api/v1/data/:formPk/:id', fresh: true, call: (f) => ({ path: `/api/v1/data/${f.formId}/${f.submissionId}` }), expect: atLeast('editor', 204) },
  // Merged datasets: need every form visible; delete by the creator or a manager of every form.
  { route: 'POST /api/v1/merged-datasets', call: (f) => ({ path: '/api/v1/merged-datasets', body: { name: 'm', xforms: [f.formId, f.otherFormId] } }), expect: { ...atLeast('readonly', 201), stranger: 400, service: 400 }, pat: { 'pat-write-elsewhere': 403 } },
  { route: 'GET /api/v1/merged-datasets', call: () => ({ path: '/api/v1/merged-datasets' }), expect: anyUser(200) },
  { route: 'GET /api/v1/merged-datasets/:pk', call: (f) => ({ path: `/api/v1/merged-datasets/${f.mergedId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/merged-datasets/:pk/data', call: (f) => ({ path: `/api/v1/merged-datasets/${f.mergedId}/data` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/merged-datasets/:pk/data.csv', call: (f) => ({ path: `/api/v1/merged-datasets/${f.mergedId}/data.csv` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/merged-datasets/:pk/data.xlsx', call: (f) => ({ path: `/api/v1/merged-datasets/${f.mergedId}/data.xlsx` }), expect: atLeast('readonly', 200) },
  { route: 'DELETE /api/v1/merged-datasets/:pk', fresh: true, call: (f) => ({ path: `/api/v1/merged-datasets/${f.mergedId}` }), expect: atLeast('manager', 204) },
  // Dataviews
  { route: 'POST /api/v1/dataviews', call: (f) => ({ path: '/api/v1/dataviews', body: { name: 'v', xform: f.formId, columns: ['name'], query: [] } }), expect: atLeast('editor', 201) },
  { route: 'GET /api/v1/dataviews', call: () => ({ path: '/api/v1/dataviews' }), expect: anyUser(200) },
  // Entity lists (docs/entities.md "Permissions"): a role on a form that uses the list reads; the owner and managers write.
  { route: 'POST /api/v2/entity-lists', call: () => ({ path: '/api/v2/entity-lists', body: { name: `l${uniq()}` } }), expect: anyUser(201) },
  { route: 'GET /api/v2/entity-lists', call: () => ({ path: '/api/v2/entity-lists' }), expect: anyUser(200) },
  { route: 'GET /api/v2/entity-lists/:pk', call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}` }), expect: atLeast('readonly', 200) },
  { route: 'DELETE /api/v2/entity-lists/:pk', fresh: true, call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}` }), expect: atLeast('manager', 204) },
  { route: 'GET /api/v2/entity-lists/:pk/entities', call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}/entities` }), expect: atLeast('readonly', 200) },
  { route: 'POST /api/v2/entity-lists/:pk/entities', call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}/entities`, body: { label: 'tree' } }), expect: atLeast('manager', 201) },
  { route: 'GET /api/v2/entity-lists/:pk/entities/:id', call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}/entities/${f.entityId}` }), expect: atLeast('readonly', 200) },
  { route: 'PATCH /api/v2/entity-lists/:pk/entities/:id', call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}/entities/${f.entityId}`, body: { label: 'renamed' } }), expect: atLeast('manager', 200) },
  { route: 'DELETE /api/v2/entity-lists/:pk/entities/:id', fresh: true, call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}/entities/${f.entityId}` }), expect: atLeast('manager', 204) },
  // An entity list as a file (docs/entities.md): the form's list attachment, readonly and above as the form's media; the downloads, whoever reads the list.
  { route: 'GET /xformsMedia/:pk/entity-list/:file', call: (f) => ({ path: `/xformsMedia/${f.formId}/entity-list/${f.listName}.csv` }), expect: atLeast('readonly', 200) },
  { route: 'GET /:username/xformsMedia/:pk/entity-list/:file', call: (f) => ({ path: `/${f.owner}/xformsMedia/${f.formId}/entity-list/${f.listName}.csv` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v2/entity-lists/:pk.csv', call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}.csv` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v2/entity-lists/:pk/download', call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}/download` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v2/entity-lists/:pk.xlsx', call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}.xlsx` }), expect: atLeast('readonly', 200) },
  { route: 'DELETE /api/v2/entity-lists/:pk/entities', fresh: true, call: (f) => ({ path: `/api/v2/entity-lists/${f.listId}/entities`, body: { entity_ids: [f.entityId] } }), expect: atLeast('manager', 204) },
  { route: 'GET /api/v1/dataviews/:pk', call: (f) => ({ path: `/api/v1/dataviews/${f.dataviewId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/dataviews/:pk/data', call: (f) => ({ path: `/api/v1/dataviews/${f.dataviewId}/data` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/dataviews/:pk/data.csv', call: (f) => ({ path: `/api/v1/dataviews/${f.dataviewId}/data.csv` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/dataviews/:pk/data.xlsx', call: (f) => ({ path: `/api/v1/dataviews/${f.dataviewId}/data.xlsx` }), expect: atLeast('readonly', 200) },
  { route: 'PATCH /api/v1/dataviews/:pk', fresh: true, call: (f) => ({ path: `/api/v1/dataviews/${f.dataviewId}`, body: { name: 'w' } }), expect: atLeast('editor', 200) },
  { route: 'DELETE /api/v1/dataviews/:pk', fresh: true, call: (f) => ({ path: `/api/v1/dataviews/${f.dataviewId}` }), expect: atLeast('editor', 204) },
  // Rest services (docs/api-conventions.md: see readonly, create/change editor, delete manager). Targets are
  // 127.0.0.1:9 (FORWARD_ALLOW_PRIVATE_NETWORKS allows loopback in tests); nothing is sent.
  { route: 'GET /api/v1/restservices', call: (f) => ({ path: `/api/v1/restservices?xform=${f.formId}` }), expect: atLeast('readonly', 200) },
  { route: 'POST /api/v1/restservices', call: (f) => ({ path: '/api/v1/restservices', body: { xform: f.formId, name: 'generic_json', service_url: `http://127.0.0.1:9/c${uniq()}` } }), expect: atLeast('editor', 201) },
  { route: 'GET /api/v1/restservices/:pk', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.serviceId}` }), expect: atLeast('readonly', 200) },
  { route: 'PATCH /api/v1/restservices/:pk', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.serviceId}`, body: { service_url: `http://127.0.0.1:9/p${uniq()}` } }), expect: atLeast('editor', 200) },
  { route: 'PUT /api/v1/restservices/:pk', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.serviceId}`, body: { xform: f.formId, name: 'generic_json', service_url: `http://127.0.0.1:9/u${uniq()}` } }), expect: atLeast('editor', 200) },
  { route: 'DELETE /api/v1/restservices/:pk', call: (f, who) => ({ path: `/api/v1/restservices/${f.shared!.deleteServiceId[who]}` }), expect: atLeast('manager', 204) },
  { route: 'GET /api/v1/restservices/:pk/deliveries', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.retryServiceId}/deliveries` }), expect: atLeast('readonly', 200) },
  { route: 'POST /api/v1/restservices/:pk/deliveries/:id/retry', call: (f, who) => ({ path: `/api/v1/restservices/${f.shared!.retryServiceId}/deliveries/${f.shared!.retryEntry[who]}/retry` }), expect: atLeast('editor', 202) },
  { route: 'POST /api/v1/restservices/:pk/retry-failed', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.serviceId}/retry-failed` }), expect: atLeast('editor', 202) },
  // Test-fire to a closed port: 200 with the connection error.
  { route: 'POST /api/v1/restservices/:pk/test', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.serviceId}/test` }), expect: atLeast('editor', 200) },
  { route: 'POST /api/v1/restservices/:pk/replay', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.serviceId}/replay`, body: { dry_run: true } }), expect: atLeast('editor', 200) },
  { route: 'GET /api/v1/restservices/:pk/replays/:id', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.serviceId}/replays/${f.shared!.replayId}` }), expect: atLeast('readonly', 200) },
  { route: 'DELETE /api/v1/restservices/:pk/replays/:id', call: (f) => ({ path: `/api/v1/restservices/${f.shared!.serviceId}/replays/${f.shared!.replayId}` }), expect: atLeast('editor', 204) },
  // The sheet provider's consent redirect: no credentials needed (the single-use state names the user); without code and state 400.
  { route: 'GET /api/v1/restservices/sheets/callback', call: () => ({ path: '/api/v1/restservices/sheets/callback' }), expect: everyone(400) },
  // Prometheus text; METRICS_TOKEN is unset in tests and NODE_ENV is not production: open.
  { route: 'GET /metrics', call: () => ({ path: '/metrics' }), expect: everyone(200) },
  // Media (docs/api-conventions.md: readonly sees a form's media). Unfiltered listings cover the forms the caller can see (empty for others).
  { route: 'GET /api/v1/media', call: (f) => ({ path: `/api/v1/media?xform=${f.formId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/media.json', call: () => ({ path: '/api/v1/media.json' }), expect: anyUser(200) },
  { route: 'GET /api/v1/media/count', call: (f) => ({ path: `/api/v1/media/count?xform=${f.formId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/media/:pk', call: (f) => ({ path: `/api/v1/media/${f.shared!.mediaId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/media.zip', call: (f) => ({ path: `/api/v1/media.zip?xform=${f.formId}` }), expect: atLeast('readonly', 200) },
  { route: 'GET /api/v1/files/:pk', call: (f) => ({ path: `/api/v1/files/${f.shared!.mediaId}?filename=${encodeURIComponent(f.shared!.mediaFilename)}` }), expect: atLeast('readonly', 200) },
  // On-boarding (docs/api-conventions.md §Roles and permissions: platform admins only), against the real CAS.
  { route: 'GET /api/v1/cas-users', call: () => ({ path: '/api/v1/cas-users?search=a' }), expect: adminOnly(200) },
  { route: 'POST /api/v1/cas-users', call: () => ({ path: '/api/v1/cas-users', body: { cas_user_id: cas.onboardId } }), expect: adminOnly(201) },
  { route: 'DELETE /api/v1/cas-users/:casUserId', call: () => ({ path: `/api/v1/cas-users/${cas.offboardId}` }), expect: adminOnly(204) },
  { route: 'GET /api/v1/service-accounts', call: () => ({ path: '/api/v1/service-accounts' }), expect: adminOnly(200) },
  { route: 'POST /api/v1/service-accounts', call: () => ({ path: '/api/v1/service-accounts', body: { client_id: `matrix-${uniq()}` } }), expect: adminOnly(201) },
  { route: 'DELETE /api/v1/service-accounts/:clientId', call: () => ({ path: `/api/v1/service-accounts/${cas.spareClientId}` }), expect: adminOnly(204) },
  // CAS sign-in pages (browser flow; credentials are not read). Sign-in is on outside production.
  { route: 'GET /', ignoresAuthorization: true, call: () => ({ path: '/' }), expect: everyone(302) },
  { route: 'GET /login', ignoresAuthorization: true, call: () => ({ path: '/login' }), expect: everyone(200) },
  { route: 'GET /auth/login', ignoresAuthorization: true, call: () => ({ path: '/auth/login' }), expect: everyone(302) },
  // No state (and no binding cookie): the refusal page.
  { route: 'GET /auth/callback', ignoresAuthorization: true, call: () => ({ path: '/auth/callback?code=x' }), expect: everyone(400) },
  { route: 'GET /auth/logout', ignoresAuthorization: true, call: () => ({ path: '/auth/logout' }), expect: everyone(200) },
  { route: 'POST /auth/logout', ignoresAuthorization: true, call: () => ({ path: '/auth/logout' }), expect: everyone(303) },
];
