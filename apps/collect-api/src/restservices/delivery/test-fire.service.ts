import { randomUUID } from 'node:crypto';
import { BadRequestException, Inject, Injectable, Logger } from '@nestjs/common';
import { TooManyRequestsError } from '@collect/contracts';
import { CollectConfig } from '../../config/collect-config.js';
import type { FormEntity, FormField } from '../../forms/form.entity.js';
import { buildSubmissionJson } from '../../submissions/submission-json.js';
import { renderInstanceXml } from '../../submissions/instance-xml.js';
import type { SubmissionEntity, SubmissionRecord } from '../../submissions/submission.entity.js';
import { SubmissionsService } from '../../submissions/submissions.service.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { deliveryHeaders, sendOnce } from './delivery-sender.js';
import { DestinationGate } from '../destinations/destination-gate.js';
import { FORWARDERS } from '../forwarders/index.js';
import type { NetworkGuard } from '../destinations/network-guard.js';
import type { TestFireBody } from '../restservice-bodies.dto.js';
import type { RestServiceEntity } from '../restservice.entities.js';
import { RestServicesRepository } from '../restservices.repository.js';
import { NETWORK_GUARD } from '../restservices.tokens.js';
import { TestFireQuota } from './test-fire-quota.js';
import { maskHeaders, ServiceCredentials, withServiceAuth } from '../service-credentials.js';

/**
 * Test-fire (docs/restservices.md, "Test-fire"): one request exactly as a delivery of the
 * form's newest submission would send it (a made-up one when the form has none), through the
 * SSRF guard and the destination limit. Not a delivery: nothing is written to the outbox or
 * the delivery log, and it is never retried.
 */
@Injectable()
export class TestFireService {
  private readonly logger = new Logger(TestFireService.name);

  constructor(
    private readonly repo: RestServicesRepository,
    private readonly submissions: SubmissionsService,
    private readonly gate: DestinationGate,
    @Inject(NETWORK_GUARD) private readonly guard: NetworkGuard,
    private readonly config: CollectConfig,
    private readonly quota: TestFireQuota,
    private readonly credentials: ServiceCredentials,
  ) {}

  async fire(service: RestServiceEntity, form: FormEntity, userId: number | null): Promise<TestFireBody> {
    const forwarder = FORWARDERS[service.name];
    if (!forwarder) throw new BadRequestException({ detail: `Test-fire is not available for "${service.name}" services.` });
    await this.quota.take(userId === null ? 'anonymous' : String(userId));
    const latest = await this.repo.latestSubmissionId(form.id);
    const loaded = latest === null ? null : await this.submissions.loadSubmissionJson(latest);
    const { submission, json } = loaded ?? syntheticSubmission(form, this.config.PUBLIC_BASE_URL);
    const secrets = this.credentials.secrets(service);
    const request = withServiceAuth(forwarder.build({ service, authToken: secrets.authToken, submission, form, json, event: 'created' }), secrets);
    const headers = deliveryHeaders(request, { deliveryId: randomUUID(), attempt: 1, event: 'created', signingSecret: secrets.signingSecret });
    const shown = {
      method: request.method,
      url: request.url,
      headers: maskHeaders(headers, Object.keys(secrets.headers)),
      body: request.body ? request.body.toString('utf8') : null,
    };
    const gate = await this.gate.admit(service);
    if (!gate.send) throw new TooManyRequestsError("The destination's rate limit allows no request now; try again later.", (gate.retryAt.getTime() - Date.now()) / 1000);
    const result = await sendOnce(request, headers, this.guard, this.config.FORWARD_TIMEOUT_MS);
    await this.gate.settle(service, result);
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    deliveryMetrics.testFires.inc({ service: service.name, outcome: ok ? 'success' : 'failed' });
    this.logger.log({ serviceId: service.id, statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error }, 'test-fire');
    return {
      request: shown,
      response: result.statusCode === null ? null : { status: result.statusCode, body_excerpt: result.responseExcerpt ?? '' },
      error: result.error,
    };
  }
}

/** A sample answer per question type, so a receiver sees a payload of the form's shape. */
function sampleValue(field: FormField): string {
  const type = field.type.toLowerCase();
  if (type === 'integer' || type === 'int') return '1';
  if (type === 'decimal') return '1.5';
  if (type === 'date') return '2026-01-01';
  if (type === 'datetime' || type === 'datetime-local') return '2026-01-01T00:00:00.000Z';
  if (type === 'time') return '12:00:00.000Z';
  if (type === 'geopoint') return '0 0 0 0';
  return 'test';
}

/**
 * A made-up submission of a form with none yet: every question outside repeats answered with
 * a sample, `_id` 0 and a fresh `_uuid`.
 */
export function syntheticSubmission(form: FormEntity, baseUrl: string): { submission: SubmissionEntity; json: ReturnType<typeof buildSubmissionJson> } {
  const record: SubmissionRecord = {};
  for (const f of form.fields) {
    if (f.repeat || ['group', 'repeat', 'note'].includes(f.type) || f.xpath.startsWith('meta/') || f.xpath.startsWith('formhub/')) continue;
    record[f.xpath] = sampleValue(f);
  }
  const uuid = randomUUID();
  const submission: SubmissionEntity = {
    id: 0, formId: form.id, uuid, json: { ...record, 'meta/instanceID': `uuid:${uuid}` }, xml: '', contentHash: '', status: 'submitted_via_web', submittedById: null,
    version: form.version, edited: false, bambooDatasetId: '', dateCreated: new Date(), dateModified: new Date(), deletedAt: null,
  };
  submission.xml = renderInstanceXml(form, submission.json);
  return { submission, json: buildSubmissionJson({ submission, form, attachments: [], submittedBy: null, baseUrl }) };
}
