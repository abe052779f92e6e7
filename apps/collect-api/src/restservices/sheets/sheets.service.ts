import { randomBytes } from 'node:crypto';
import { BadRequestException, Injectable, Logger } from '@nestjs/common';
import { SecretBox } from '../../crypto/secrets.js';
import { CollectConfig } from '../../config/collect-config.js';
import type { FormEntity } from '../../forms/form.entity.js';
import { FormsRepository } from '../../forms/forms.repository.js';
import type { SubmissionJson } from '../../submissions/submission-json.js';
import type { SendResult } from '../delivery/delivery-sender.js';
import type { DeliveryEntity, RestServiceEntity } from '../restservice.entities.js';
import { ReplayService } from '../replay/replay.service.js';
import { RestServicesRepository } from '../restservices.repository.js';
import { firstRowOf, SheetsClient, type SheetsCall } from './sheets-client.js';
import { SheetsRepository } from './sheets.repository.js';

/** Metadata columns after the form's questions. */
export const SHEET_META_COLUMNS = ['_id', '_uuid', '_submission_time', '_submitted_by', '_status', '_version', '_edited'];
const SCOPE = 'https://www.googleapis.com/auth/spreadsheets';
/** Rows per append of a back-fill: one write of the provider's per-minute quota each. */
export const SHEET_APPEND_BATCH = 100;

interface SheetOptions {
  spreadsheet_title?: string;
  send_existing_data?: boolean;
  sync_updates?: boolean;
  redirect_uri?: string;
  spreadsheet_id?: string;
  columns?: string[];
  /** The replay of the last back-fill (GET .../replays/{id}). */
  backfill_replay?: number;
}

/**
 * Spreadsheet sync against a Google-Sheets-v4-shaped provider: the OAuth 2.0 grant per user,
 * linking a sheet (create + header row), the back-fill as a replay (ReplayService; its rows go
 * out SHEET_APPEND_BATCH to an append through `appendRows`), and per-submission append / row
 * rewrite / row clear.
 */
@Injectable()
export class SheetsService {
  private readonly logger = new Logger(SheetsService.name);
  private readonly box: SecretBox;
  private readonly client: SheetsClient;

  constructor(
    private readonly repo: SheetsRepository,
    private readonly services: RestServicesRepository,
    private readonly forms: FormsRepository,
    private readonly replays: ReplayService,
    private readonly config: CollectConfig,
  ) {
    this.box = new SecretBox(config.COLLECT_SECRET_KEY);
    this.client = new SheetsClient(config.SHEETS_API_BASE_URL, config.FORWARD_TIMEOUT_MS);
  }

  get configured(): boolean {
    return Boolean(this.config.SHEETS_CLIENT_ID);
  }

  get defaultRedirectUri(): string {
    return `${this.config.PUBLIC_BASE_URL}/api/v1/restservices/sheets/callback`;
  }

  /**
   * After a spreadsheet service was stored: link the sheet now when the caller has a grant,
   * else park the service (inactive) and answer the consent URL.
   */
  async afterCreate(userId: number, service: RestServiceEntity): Promise<{ authorization_url?: string }> {
    await this.repo.setOwner(service.id, userId);
    if (await this.repo.grant(userId)) {
      await this.link(service.id);
      return {};
    }
    await this.services.deactivate(service.id, 'Waiting for the sheet provider authorization (visit authorization_url).');
    const state = randomBytes(24).toString('base64url');
    const redirectUri = (service.options as SheetOptions).redirect_uri || this.defaultRedirectUri;
    await this.repo.saveState(state, userId, service.id, redirectUri);
    const url = new URL(this.config.SHEETS_OAUTH_AUTHORIZE_URL);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: this.config.SHEETS_CLIENT_ID, redirect_uri: redirectUri, scope: SCOPE, access_type: 'offline', prompt: 'consent', state })) url.searchParams.set(k, v);
    return { authorization_url: url.toString() };
  }

  /**
   * The consent redirect: exchanges the code, stores the grant, links the waiting sheet. The
   * state counts only for the user it was issued to; another user's is "unknown" (and stays
   * usable by its owner).
   */
  async callback(userId: number, code: string, state: string): Promise<{ detail: string; restservice: number | null }> {
    const pending = await this.repo.takeState(state, userId);
    if (!pending) throw new BadRequestException({ detail: 'Unknown or expired state.' });
    const token = await this.tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: pending.redirect_uri });
    await this.saveToken(pending.user_id, token);
    if (pending.service_id) await this.link(pending.service_id);
    return { detail: 'Sheet provider access granted.', restservice: pending.service_id };
  }

  /** PATCH with send_existing_data true on a linked sheet: push every submission the sheet lacks (a replay). */
  async requestBackfill(service: RestServiceEntity, userId: number | null): Promise<void> {
    if (!(service.options as SheetOptions).spreadsheet_id) return; // not linked yet: linking back-fills
    await this.backfill(service, userId);
  }

  private async backfill(service: RestServiceEntity, userId: number | null): Promise<void> {
    const replay = await this.replays.backfillSheet(service, userId);
    await this.repo.patchOptions(service.id, { send_existing_data: true, backfill_replay: replay.id });
    this.logger.log({ event: 'restservice.sheet_backfill', serviceId: service.id, replayId: replay.id, total: replay.total });
  }

  private async link(serviceId: number): Promise<void> {
    const service = (await this.services.findService(serviceId))!;
    const form = (await this.forms.findLive(service.formId))!;
    const token = await this.accessToken(await this.repo.ownerOf(serviceId));
    if (!token) throw new BadRequestException({ detail: 'No sheet provider grant for the owner of this service.' });
    const options = service.options as SheetOptions;
    const created = await this.client.create(token, options.spreadsheet_title ?? form.title);
    const id = created.json?.spreadsheetId;
    if (!ok(created) || typeof id !== 'string') throw new BadRequestException({ detail: `The sheet provider refused to create the sheet (${created.statusCode ?? created.error}).` });
    const columns = sheetColumns(form);
    const header = await this.client.update(token, id, 1, [columns]);
    if (!ok(header)) throw new BadRequestException({ detail: `The sheet provider refused the header row (${header.statusCode ?? header.error}).` });
    const sendExisting = options.send_existing_data !== false;
    await this.repo.patchOptions(serviceId, { spreadsheet_id: id, columns }, true);
    await this.repo.setServiceUrl(serviceId, `${this.config.SHEETS_API_BASE_URL.replace(/\/+$/, '')}/v4/spreadsheets/${encodeURIComponent(id)}`);
    if (sendExisting) await this.backfill(service, await this.repo.ownerOf(serviceId));
  }

  /**
   * Several `created` rows of a back-fill in one append (one write of the quota): the rows go in
   * the order given, and on success each submission's sheet row is remembered (later edits
   * rewrite it, deletes clear it). The caller made sure none of them is in the sheet yet.
   */
  async appendRows(service: RestServiceEntity, rows: Array<{ submissionId: number; json: SubmissionJson }>): Promise<SendResult> {
    const options = service.options as SheetOptions;
    const token = await this.accessToken(await this.repo.ownerOf(service.id));
    if (!options.spreadsheet_id || !token) return { statusCode: null, latencyMs: 0, error: 'the sheet is not linked (no grant)', responseExcerpt: null, retryAfterMs: null };
    const result = await this.client.append(token, options.spreadsheet_id, rows.map((r) => sheetRow(options.columns ?? [], r.json)));
    const first = firstRowOf((result.json?.updates as { updatedRange?: string } | undefined)?.updatedRange);
    if (ok(result) && first !== null) await this.repo.saveRows(service.id, rows.map((r, i) => [r.submissionId, first + i]));
    return result;
  }

  /** Whether the service's sheet has a row for the submission. */
  async hasRow(serviceId: number, submissionId: number): Promise<boolean> {
    return (await this.repo.rowOf(serviceId, submissionId)) !== null;
  }

  /** One delivery of a spreadsheet service: append (or rewrite if already there), rewrite on edit, clear on delete. */
  async deliver(row: DeliveryEntity, service: RestServiceEntity, loaded: { json: SubmissionJson } | null): Promise<SendResult | 'skip'> {
    const options = service.options as SheetOptions;
    const token = await this.accessToken(await this.repo.ownerOf(service.id));
    if (!options.spreadsheet_id || !token) return { statusCode: null, latencyMs: 0, error: 'the sheet is not linked (no grant)', responseExcerpt: null, retryAfterMs: null };
    const existing = await this.repo.rowOf(service.id, row.submissionId);
    if (row.event === 'deleted') {
      if (existing === null) return 'skip';
      return this.client.clearRow(token, options.spreadsheet_id, existing);
    }
    if (!loaded) return 'skip';
    const values = [sheetRow(options.columns ?? [], loaded.json)];
    if (existing !== null) return this.client.update(token, options.spreadsheet_id, existing, values);
    const result = await this.client.append(token, options.spreadsheet_id, values);
    const first = firstRowOf((result.json?.updates as { updatedRange?: string } | undefined)?.updatedRange);
    if (ok(result) && first !== null) await this.repo.saveRows(service.id, [[row.submissionId, first]]);
    return result;
  }

  private async accessToken(userId: number | null): Promise<string | null> {
    if (userId === null) return null;
    const grant = await this.repo.grant(userId);
    if (!grant) return null;
    const access = this.box.decrypt(grant.access_token_enc);
    if (access && (!grant.expires_at || grant.expires_at.getTime() > Date.now() + 60_000)) return access;
    const refresh = grant.refresh_token_enc ? this.box.decrypt(grant.refresh_token_enc) : null;
    if (!refresh) return access;
    const token = await this.tokenRequest({ grant_type: 'refresh_token', refresh_token: refresh }).catch(() => null);
    if (!token) return null;
    await this.saveToken(userId, token);
    return token.access_token;
  }

  private async saveToken(userId: number, t: { access_token: string; refresh_token?: string; expires_in?: number }): Promise<void> {
    await this.repo.saveGrant(userId, this.box.encrypt(t.access_token), t.refresh_token ? this.box.encrypt(t.refresh_token) : null, t.expires_in ? new Date(Date.now() + t.expires_in * 1000) : null);
  }

  private async tokenRequest(params: Record<string, string>): Promise<{ access_token: string; refresh_token?: string; expires_in?: number }> {
    const res = await fetch(this.config.SHEETS_OAUTH_TOKEN_URL, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({ ...params, client_id: this.config.SHEETS_CLIENT_ID, client_secret: this.config.SHEETS_CLIENT_SECRET }).toString(),
      signal: AbortSignal.timeout(this.config.FORWARD_TIMEOUT_MS),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; refresh_token?: string; expires_in?: number; error?: string };
    if (!res.ok || !body.access_token) throw new BadRequestException({ detail: `The sheet provider refused the grant (${body.error ?? res.status}).` });
    return body as { access_token: string };
  }
}

function ok(r: SheetsCall): boolean {
  return r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;
}

/** Header: the form's questions in form order (repeats as one JSON column), then metadata. */
export function sheetColumns(form: Pick<FormEntity, 'fields'>): string[] {
  const questions = form.fields.filter((f) => f.type !== 'group' && !f.repeat).map((f) => f.xpath);
  return [...questions, ...SHEET_META_COLUMNS];
}

export function sheetRow(columns: string[], json: SubmissionJson): string[] {
  return columns.map((c) => {
    // Own answers only: a question named `constructor` must not read Object.prototype's.
    const v = Object.hasOwn(json, c) ? json[c] : undefined;
    if (v === null || v === undefined) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}
