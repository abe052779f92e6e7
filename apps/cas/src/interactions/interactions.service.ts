import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { messagePage, WorkLimiterFullError } from '@collect/platform';
import { AccountsService } from '../accounts/accounts.service.js';
import { LoginThrottleService } from '../accounts/login-throttle.service.js';
import { OidcService } from '../oidc/oidc.service.js';
import { resourceName } from '../oidc/provider-factory.js';
import type { InteractionLoginDto } from './interactions.dto.js';
import { consentPage, loginPage } from './views.js';

export interface Rendered {
  status: number;
  html: string;
  headers?: Record<string, string>;
}

type Details = Awaited<ReturnType<OidcService['provider']['interactionDetails']>>;

/** Rules of the login and consent steps; oidc-provider keeps the interaction state. */
@Injectable()
export class InteractionsService {
  constructor(
    private readonly oidc: OidcService,
    private readonly accounts: AccountsService,
    private readonly throttle: LoginThrottleService,
  ) {}

  /** The page for the current step, or null when the interaction is gone (expired, other browser). */
  async show(req: IncomingMessage, res: ServerResponse): Promise<Rendered> {
    const details = await this.details(req, res);
    if (!details) return expired();
    if (details.prompt.name === 'login') return { status: 200, html: loginPage({ action: `/interaction/${details.uid}/login`, clientId: String(details.params.client_id) }) };
    const account = details.session?.accountId ? await this.accounts.findById(details.session.accountId) : null;
    return {
      status: 200,
      html: consentPage({
        action: `/interaction/${details.uid}/confirm`,
        abortAction: `/interaction/${details.uid}/abort`,
        clientId: String(details.params.client_id),
        username: account?.username ?? '',
        scopes: requestedScopes(details),
      }),
    };
  }

  /** Checks lockout, then credentials; finishes the login step or answers with the page again. */
  async login(req: IncomingMessage, res: ServerResponse, form: InteractionLoginDto, ip: string): Promise<Rendered | null> {
    const details = await this.details(req, res);
    if (!details) return expired();
    if (details.prompt.name !== 'login') return { status: 400, html: messagePage('Sign-in failed', 'This step is not a login step.') };
    const username = (form.username ?? '').slice(0, 150);
    const password = (form.password ?? '').slice(0, 1024);
    const page = (status: number, error: string, headers?: Record<string, string>): Rendered => ({
      status,
      headers,
      html: loginPage({ action: `/interaction/${details.uid}/login`, clientId: String(details.params.client_id), username, error }),
    });
    if (!username || !password) return page(400, 'Enter your username and password.');
    // Counted before the password is checked (LoginThrottleService): parallel guesses get at most the limit.
    const verdict = await this.throttle.begin(username, ip);
    if (!verdict.allowed) {
      const minutes = Math.ceil(verdict.retryAfterSeconds / 60);
      return page(429, `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, { 'Retry-After': String(verdict.retryAfterSeconds) });
    }
    let account;
    try {
      account = await this.accounts.checkCredentials(username, password);
    } catch (err) {
      if (!(err instanceof WorkLimiterFullError)) throw err;
      return page(503, 'The sign-in service is busy. Try again in a moment.', { 'Retry-After': '1' });
    }
    if (!account) {
      this.throttle.failed(username, ip);
      return page(401, 'Wrong username or password.');
    }
    await this.throttle.succeeded(username, ip, account.id);
    await this.oidc.provider.interactionFinished(req, res, { login: { accountId: account.id } }, { mergeWithLastSubmission: false });
    return null;
  }

  /** "Allow": records the grant for exactly what was asked and not yet granted. */
  async confirm(req: IncomingMessage, res: ServerResponse): Promise<Rendered | null> {
    const details = await this.details(req, res);
    if (!details) return expired();
    if (details.prompt.name !== 'consent' || !details.session?.accountId) return { status: 400, html: messagePage('Sign-in failed', 'Nothing to confirm.') };
    const { Grant } = this.oidc.provider;
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    const grant = details.grantId
      ? await Grant.find(details.grantId)
      : new Grant({ accountId: details.session.accountId, clientId: String(details.params.client_id) });
    if (!grant) return expired();
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await this.oidc.provider.interactionFinished(req, res, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
    return null;
  }

  /** "Deny" (or leaving the login): the client gets `access_denied`. */
  async abort(req: IncomingMessage, res: ServerResponse): Promise<Rendered | null> {
    const details = await this.details(req, res);
    if (!details) return expired();
    await this.oidc.provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user denied the request.' }, { mergeWithLastSubmission: false });
    return null;
  }

  private async details(req: IncomingMessage, res: ServerResponse): Promise<Details | null> {
    try {
      return await this.oidc.provider.interactionDetails(req, res);
    } catch {
      return null; // no or expired interaction cookie: say so instead of a 500
    }
  }
}

function expired(): Rendered {
  return { status: 400, html: messagePage('Sign-in expired', 'This sign-in request has expired or was opened in another browser. Go back to the application and start again.') };
}

/** What the consent page lists: OIDC scopes, then each resource's scopes as `resource: scope`. */
function requestedScopes(details: Details): string[] {
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  const oidcScopes = (missing.missingOIDCScope ?? []).filter((s) => s !== 'openid');
  const resourceScopes = Object.entries(missing.missingResourceScopes ?? {}).flatMap(([indicator, scopes]) => scopes.map((s) => `${resourceName(indicator)}: ${s}`));
  const list = [...oidcScopes, ...resourceScopes];
  return list.length ? list : ['sign you in'];
}
