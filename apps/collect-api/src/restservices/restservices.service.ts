import { BadRequestException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { FieldValidationError, NOT_FOUND_DETAIL } from '@collect/contracts';
import { validateInput } from '@collect/platform';
import { holdsScopedCredential, type AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import { EnvelopeForwarding } from '../encrypted-submissions/envelope-forwarding.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { FormsRepository } from '../forms/forms.repository.js';
import { MIN_ROLE, roleAtLeast, type FormRole } from '../forms/roles.js';
import type { PageRequest } from '../submissions/submissions.service.js';
import { defaultEvents, isEntityEvent } from './delivery/delivery-events.js';
import { DeliveryOutbox } from './delivery/delivery-outbox.js';
import { FORWARDERS } from './forwarders/index.js';
import type { NetworkGuard } from './destinations/network-guard.js';
import type { DeliveryLogEntry, RestServiceBody, RetryAck, RetryFailedAck, TestFireBody } from './restservice-bodies.dto.js';
import { RestServiceDto, restServiceInput, type RestServiceInput, type RestServicePatchDto } from './restservice.dto.js';
import type { AttemptStatus, DeliveryAttemptEntity, RestServiceEntity } from './restservice.entities.js';
import { RestServicesRepository, type ServiceHealth } from './restservices.repository.js';
import { effectiveRateLimit } from './destinations/destination-limits.js';
import { MASKED_SECRET, ServiceCredentials } from './service-credentials.js';
import { NETWORK_GUARD } from './restservices.tokens.js';
import { SheetsService } from './sheets/sheets.service.js';
import { TestFireService } from './delivery/test-fire.service.js';
import type { ReplayBody, ReplayDto } from './replay/replay.dto.js';
import { ReplayService } from './replay/replay.service.js';

/**
 * What a stored third-party secret (messaging `auth_token`) reads as for a caller who may not
 * see it; sent back unchanged in a PUT or PATCH it keeps the stored value.
 */
export { MASKED_SECRET };

/** CRUD of rest services, their delivery log and manual retries; roles per docs/api-conventions.md §Roles and permissions. */
@Injectable()
export class RestServicesService {
  constructor(
    private readonly repo: RestServicesRepository,
    private readonly access: FormAccessService,
    private readonly forms: FormsRepository,
    private readonly outbox: DeliveryOutbox,
    private readonly sheets: SheetsService,
    private readonly testFires: TestFireService,
    private readonly envelopeForwarding: EnvelopeForwarding,
    private readonly replays: ReplayService,
    private readonly box: ServiceCredentials,
    @Inject(NETWORK_GUARD) private readonly guard: NetworkGuard,
    private readonly config: CollectConfig,
  ) {}

  async list(user: AuthenticatedUser | undefined, xform: number | undefined): Promise<RestServiceBody[]> {
    const formIds = xform !== undefined ? [(await this.access.requireRole(user, xform, MIN_ROLE.view)).form.id] : await this.access.visibleFormIds(user);
    const services = await this.repo.listServices(formIds);
    const roles = new Map<number, FormRole | null>();
    for (const formId of new Set(services.map((s) => s.formId))) roles.set(formId, await this.access.roleOf(user, formId));
    const health = await this.repo.health24h(services.map((s) => s.id));
    return services.map((s) => this.present(s, { showSecrets: mayReadSecrets(user, roles.get(s.formId) ?? null), health: health.get(s.id) }));
  }

  async get(user: AuthenticatedUser | undefined, pk: string): Promise<RestServiceBody> {
    const { service, role } = await this.load(user, pk, MIN_ROLE.view);
    return this.present(service, { showSecrets: mayReadSecrets(user, role), health: (await this.repo.health24h([service.id])).get(service.id) });
  }

  async create(user: AuthenticatedUser | undefined, body: RestServiceDto): Promise<RestServiceBody> {
    await this.requireXform(user, body.xform);
    const input = this.available(restServiceInput(body));
    await this.checkTarget(input);
    await this.checkShaping(user, input, null);
    const saved = await this.save({}, input);
    // The creator just sent the secret: echoing it reveals nothing new.
    if (saved.name !== 'spreadsheet') return this.present(saved, { showSecrets: true });
    let extra: { authorization_url?: string };
    try {
      extra = await this.sheets.afterCreate(user!.id, saved);
    } catch (err) {
      // The provider refused to create the sheet: store nothing (no service that never syncs).
      await this.repo.deleteService(saved.id);
      throw err;
    }
    return { ...this.present((await this.repo.findService(saved.id))!, { showSecrets: true }), ...extra };
  }

  /**
   * PATCH merges into the stored service, PUT replaces it; the merged result is checked as a whole
   * by RestServiceDto (a PATCH to `messaging` must bring what `messaging` needs).
   */
  async update(user: AuthenticatedUser | undefined, pk: string, body: RestServiceDto | RestServicePatchDto, partial: boolean): Promise<RestServiceBody> {
    const { service, role } = await this.load(user, pk, MIN_ROLE.manageRestServices);
    const sent = { ...body };
    // A spreadsheet's default events follow sync_updates: a PATCH of sync_updates alone re-derives them.
    const rederive = partial && sent.events === undefined && sent.sync_updates !== undefined && sameEvents(service.events, defaultEvents(service.name, service.options));
    // A body read back with the secret masked and sent again keeps the stored secret.
    if (sent.auth_token === MASKED_SECRET && service.authTokenEnc) sent.auth_token = this.box.decrypt(service.authTokenEnc) ?? undefined;
    const whole = partial ? await validateInput(RestServiceDto, { ...this.present(service, { forMerge: true, showSecrets: true }), ...(rederive ? { events: null } : {}), ...sent }) : (sent as RestServiceDto);
    if (whole.xform !== service.formId) await this.requireXform(user, whole.xform);
    const input = this.available(restServiceInput(whole));
    if (input.name === 'spreadsheet' && service.name === 'spreadsheet') {
      // The sheet link (id, columns, back-fill cursor) is ours, not the client's.
      input.serviceUrl = service.serviceUrl;
      input.options = { ...service.options, ...input.options };
    }
    if (input.serviceUrl !== service.serviceUrl || input.name !== service.name || input.xform !== service.formId) await this.checkTarget(input);
    await this.checkShaping(user, input, service);
    const saved = await this.save(service, input);
    if (input.active === true && !service.active) {
      // Re-enabled: what waited while the service was off goes out now, with a fresh attempt budget.
      await this.repo.resumeHeld(saved.id);
      await this.outbox.wake();
    }
    if (saved.name === 'spreadsheet' && body.send_existing_data === true) await this.sheets.requestBackfill(saved, user?.id ?? null);
    return this.present((await this.repo.findService(saved.id))!, { showSecrets: mayReadSecrets(user, role) });
  }

  async remove(user: AuthenticatedUser | undefined, pk: string): Promise<void> {
    const { service } = await this.load(user, pk, MIN_ROLE.view);
    await this.access.requireRole(user, service.formId, MIN_ROLE.deleteRestService);
    await this.repo.deleteService(service.id);
  }

  async deliveries(user: AuthenticatedUser | undefined, pk: string, status: AttemptStatus | undefined, page: PageRequest): Promise<{ items: DeliveryLogEntry[]; total: number }> {
    const { service } = await this.load(user, pk, MIN_ROLE.view);
    const [rows, total] = await this.repo.listAttempts(service.id, status ?? null, (page.page - 1) * page.pageSize, page.pageSize);
    if (page.page > 1 && !rows.length) throw new NotFoundException({ detail: 'Invalid page.' });
    return { items: rows.map(logEntry), total };
  }

  async retryDelivery(user: AuthenticatedUser | undefined, pk: string, ref: string): Promise<RetryAck> {
    const { service } = await this.load(user, pk, MIN_ROLE.manageRestServices);
    const delivery = await this.repo.findDeliveryForRetry(service.id, ref);
    if (!delivery) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    if (!['success', 'failed', 'skipped'].includes(delivery.status)) throw new BadRequestException({ detail: 'This delivery is still in progress.' });
    if (!service.active) throw new BadRequestException({ detail: 'The service is inactive; PATCH it with "active": true first.' });
    await this.repo.requeue([delivery.id]);
    await this.outbox.wake();
    return { detail: 'Delivery queued.', delivery_id: delivery.deliveryId };
  }

  async retryFailed(user: AuthenticatedUser | undefined, pk: string): Promise<RetryFailedAck> {
    const { service } = await this.load(user, pk, MIN_ROLE.manageRestServices);
    if (!service.active) throw new BadRequestException({ detail: 'The service is inactive; PATCH it with "active": true first.' });
    const count = await this.repo.requeueFailed(service.id);
    await this.outbox.wake();
    return { detail: 'Failed deliveries queued.', count };
  }

  /** One request as a delivery would send it; needs the role that may change the service. */
  async testFire(user: AuthenticatedUser | undefined, pk: string): Promise<TestFireBody> {
    const { service } = await this.load(user, pk, MIN_ROLE.manageRestServices);
    const { form } = await this.access.requireRole(user, service.formId, MIN_ROLE.manageRestServices);
    return this.testFires.fire(service, form, user?.id ?? null);
  }

  /** Replay / back-fill: needs the role that may change the service (docs/restservices.md). */
  async replay(user: AuthenticatedUser | undefined, pk: string, body: ReplayDto): Promise<{ count: number } | ReplayBody> {
    const { service } = await this.load(user, pk, MIN_ROLE.manageRestServices);
    return this.replays.request(service, body, user?.id ?? null);
  }

  async replayProgress(user: AuthenticatedUser | undefined, pk: string, id: string): Promise<ReplayBody> {
    const { service } = await this.load(user, pk, MIN_ROLE.view);
    return this.replays.get(service, id);
  }

  async cancelReplay(user: AuthenticatedUser | undefined, pk: string, id: string): Promise<void> {
    const { service } = await this.load(user, pk, MIN_ROLE.manageRestServices);
    await this.replays.cancel(service, id);
  }

  /** 404 when the service is missing or its form not visible; 403 below `role`. */
  private async load(user: AuthenticatedUser | undefined, pk: string, role: (typeof MIN_ROLE)[keyof typeof MIN_ROLE]) {
    const service = /^\d{1,10}$/.test(pk) ? await this.repo.findService(Number(pk)) : null;
    if (!service) throw new NotFoundException({ detail: NOT_FOUND_DETAIL });
    const { role: callerRole } = await this.access.requireRole(user, service.formId, MIN_ROLE.view);
    if (role !== MIN_ROLE.view) await this.access.requireRole(user, service.formId, role);
    return { service, role: callerRole };
  }

  /** The form must be one the caller may see (404) and edit (403). */
  private async requireXform(user: AuthenticatedUser | undefined, xform: number): Promise<void> {
    await this.access.requireRole(user, xform, MIN_ROLE.manageRestServices);
  }

  /** What this server can forward to: `spreadsheet` needs a sheet provider client, the others their forwarder. */
  private available(input: RestServiceInput): RestServiceInput {
    if (input.name === 'spreadsheet') {
      if (!this.sheets.configured) throw new FieldValidationError({ name: ['"spreadsheet" needs a sheet provider client (SHEETS_CLIENT_ID) on this server.'] });
      input.serviceUrl ||= `${this.config.SHEETS_API_BASE_URL.replace(/\/+$/, '')}/v4/spreadsheets`;
    } else if (!FORWARDERS[input.name]) {
      throw new FieldValidationError({ name: [`"${input.name}" is not available on this server.`] });
    }
    return input;
  }

  /** SSRF guard at create/change, and the (xform, name, service_url) uniqueness. */
  private async checkTarget(input: RestServiceInput): Promise<void> {
    if (input.name === 'spreadsheet') return; // the operator's SHEETS_API_BASE_URL, not a client's address
    const refusal = await this.guard.checkUrl(new URL(input.serviceUrl));
    if (refusal) throw new FieldValidationError({ service_url: [`Refused: ${refusal}. Ask the operator to allow it in FORWARD_ALLOW_PRIVATE_NETWORKS.`] });
  }

  /**
   * `fields` must name fields of the form; Basic credentials come as a pair; an `Authorization`
   * extra header would fight with Basic credentials or the messaging token (one of them would
   * silently win), so it is refused beside them.
   */
  private async checkShaping(user: AuthenticatedUser | undefined, input: RestServiceInput, current: RestServiceEntity | null): Promise<void> {
    if (input.fields) {
      const { form } = await this.access.requireRole(user, input.xform, MIN_ROLE.view);
      const known = new Set(form.fields.map((f) => f.xpath));
      const unknown = input.fields.filter((f) => !known.has(f));
      if (unknown.length) throw new FieldValidationError({ fields: [`Not fields of this form: ${unknown.slice(0, 10).join(', ')}.`] });
    }
    // Entity events have one wire format, the entity object as JSON (docs/entities.md, "Entity events to rest services").
    if (input.name !== 'generic_json' && input.events.some(isEntityEvent)) throw new FieldValidationError({ events: ['Entity events (entity_created, entity_updated, entity_deleted) go to generic_json services only.'] });
    if (input.encryptedSubmissions) {
      const { form } = await this.access.requireRole(user, input.xform, MIN_ROLE.view);
      const problem = await this.envelopeForwarding.policyProblem(input.encryptedSubmissions, input.name, form);
      if (problem) throw new FieldValidationError({ encrypted_submissions: [problem] });
    }
    if (input.basicAuth && !input.basicAuth.username) throw new FieldValidationError({ basic_auth_username: ['This field is required with basic_auth_password.'] });
    if (input.basicAuth && !input.basicAuth.password) throw new FieldValidationError({ basic_auth_password: ['This field is required with basic_auth_username.'] });
    const headerNames = input.headers !== undefined ? Object.keys(input.headers ?? {}) : (current?.headerNames ?? []);
    const hasBasic = input.basicAuth !== undefined ? input.basicAuth !== null : Boolean(current?.basicAuthEnc);
    if (headerNames.some((n) => n.toLowerCase() === 'authorization') && (hasBasic || input.name === 'messaging')) {
      throw new FieldValidationError({ headers: [input.name === 'messaging' ? 'messaging sends its auth_token as Authorization; it cannot be set here.' : 'Authorization cannot be set together with Basic credentials.'] });
    }
  }

  private async save(current: Partial<RestServiceEntity>, input: RestServiceInput): Promise<RestServiceEntity> {
    const row: Partial<RestServiceEntity> = {
      ...current,
      formId: input.xform,
      name: input.name,
      serviceUrl: input.serviceUrl,
      options: input.options,
      authTokenEnc: input.name === 'messaging' && input.authToken ? this.box.encrypt(input.authToken) : null,
      events: input.events,
    };
    if (input.signingSecret !== undefined) row.signingSecretEnc = input.signingSecret ? this.box.encrypt(input.signingSecret) : null;
    row.fields = input.fields;
    row.rateLimitPerMinute = input.rateLimitPerMinute;
    row.encryptedSubmissions = input.encryptedSubmissions;
    if (input.headers !== undefined) {
      const names = input.headers ? Object.keys(input.headers) : [];
      row.headersEnc = names.length ? this.box.encryptHeaders(input.headers!) : null;
      row.headerNames = names;
    }
    if (input.basicAuth !== undefined) row.basicAuthEnc = input.basicAuth ? this.box.encryptBasic(input.basicAuth.username, input.basicAuth.password) : null;
    if (input.active !== undefined) {
      if (input.active && current.active === false) row.activeSince = new Date();
      row.active = input.active;
      if (input.active) row.inactiveReason = null;
      else row.inactiveReason ??= 'Deactivated by a user.';
    }
    const saved = await this.repo.saveService(row);
    if (!saved) throw new BadRequestException({ detail: 'A rest service with this xform, name and service_url already exists.' });
    // A configured dataset id is the form's from now on (docs/restservices.md, "`_bamboo_dataset_id`").
    if (input.name === 'dataset_service' && input.options.dataset_id) await this.forms.setBambooDatasetId(input.xform, input.options.dataset_id);
    return (await this.repo.findService(saved.id))!;
  }

  /**
   * The wire shape. `showSecrets` decides whether the messaging `auth_token` reads in clear or
   * masked; `forMerge` (the base a PATCH merges into) keeps every field a PUT would need.
   */
  private present(s: RestServiceEntity, opts: { showSecrets: boolean; forMerge?: boolean; health?: ServiceHealth }): RestServiceBody {
    const body: RestServiceBody = { id: s.id, xform: s.formId, name: s.name, service_url: s.serviceUrl, events: s.events };
    if (s.name === 'messaging') {
      body.auth_token = !s.authTokenEnc ? null : opts.showSecrets ? this.box.decrypt(s.authTokenEnc) : MASKED_SECRET;
      body.flow_title = s.options.flow_title ?? '';
      body.flow_uuid = s.options.flow_uuid ?? '';
      body.contacts = s.options.contacts ?? '';
    }
    if (s.name === 'spreadsheet') {
      body.spreadsheet_title = s.options.spreadsheet_title ?? '';
      body.send_existing_data = s.options.send_existing_data ?? true;
      body.sync_updates = s.options.sync_updates ?? true;
      body.redirect_uri = s.options.redirect_uri ?? null;
      body.spreadsheet_id = (s.options as { spreadsheet_id?: string }).spreadsheet_id ?? null;
      if (!opts.forMerge) body.backfill_replay = (s.options as { backfill_replay?: number }).backfill_replay ?? null;
    }
    if (s.name === 'dataset_service') body.dataset_id = s.options.dataset_id ?? '';
    if (s.name === 'generic_json' || s.name === 'generic_xml') body.fields = s.fields;
    body.rate_limit_per_minute = s.rateLimitPerMinute;
    body.encrypted_submissions = s.encryptedSubmissions;
    if (opts.forMerge) return body;
    return {
      ...body,
      header_names: s.headerNames ?? [],
      basic_auth_enabled: s.basicAuthEnc !== null,
      effective_rate_limit_per_minute: effectiveRateLimit(s, this.config.FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE),
      success_rate_24h: opts.health?.successRate ?? null,
      p95_latency_ms_24h: opts.health?.p95LatencyMs ?? null,
      signing_enabled: s.signingSecretEnc !== null,
      active: s.active,
      inactive_reason: s.inactiveReason,
      last_delivery_at: s.lastDeliveryAt ? s.lastDeliveryAt.toISOString() : null,
      last_status: s.lastStatus,
      failure_count: s.failureCount,
      date_created: s.dateCreated.toISOString(),
      date_modified: s.dateModified.toISOString(),
    };
  }
}

/**
 * A stored third-party secret reads in clear for editors and above (who may change it anyway),
 * never for lower roles nor for a scoped (Bearer) caller (docs/security.md, "The credential rule").
 */
function mayReadSecrets(user: AuthenticatedUser | undefined, role: FormRole | null): boolean {
  return roleAtLeast(role, MIN_ROLE.manageRestServices) && !holdsScopedCredential(user);
}

function sameEvents(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((e) => b.includes(e));
}

function logEntry(a: DeliveryAttemptEntity & { deliveryUuid: string }): DeliveryLogEntry {
  return {
    id: a.id, delivery_id: a.deliveryUuid, attempt: a.attempt, status: a.status, status_code: a.statusCode, latency_ms: a.latencyMs,
    error: a.error, response_excerpt: a.responseExcerpt, event: a.event, created_at: a.createdAt.toISOString(),
  };
}
