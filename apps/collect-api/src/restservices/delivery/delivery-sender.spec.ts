import { createHmac } from 'node:crypto';
import { backoffMs, deliveryHeaders, isRetryable, parseRetryAfter, webhookSignature } from './delivery-sender.js';
import { fillTemplate, templateValues } from '../forwarders/health.forwarder.js';
import { datasetRow } from '../forwarders/dataset.forwarder.js';
import { flowExtra, splitContacts } from '../forwarders/messaging.forwarder.js';

describe('delivery rules', () => {
  it('retries 408, 425, 429, 5xx and transport errors only', () => {
    expect([408, 425, 429, 500, 502, 503, 504, null].every(isRetryable)).toBe(true);
    expect([200, 301, 400, 401, 403, 404, 409, 410, 422].some(isRetryable)).toBe(false);
  });

  it('backs off exponentially with ±25 % jitter, capped; defaults span about a day over 8 attempts', () => {
    expect(backoffMs(1, 4000, 5, 86_400_000, () => 0.5)).toBe(4000);
    expect(backoffMs(3, 4000, 5, 86_400_000, () => 0.5)).toBe(100_000);
    expect(backoffMs(3, 4000, 5, 86_400_000, () => 0)).toBe(75_000);
    expect(backoffMs(3, 4000, 5, 86_400_000, () => 1)).toBe(125_000);
    expect(backoffMs(20, 4000, 5, 60_000, () => 1)).toBe(60_000);
    const total = [1, 2, 3, 4, 5, 6, 7].reduce((n, a) => n + backoffMs(a, 4000, 5, 86_400_000, () => 0.5), 0);
    expect(total / 3_600_000).toBeGreaterThan(20);
    expect(total / 3_600_000).toBeLessThan(28);
  });

  it('reads Retry-After in seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter(undefined)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
    const ms = parseRetryAfter(new Date(Date.now() + 60_000).toUTCString())!;
    expect(ms).toBeGreaterThan(55_000);
    expect(ms).toBeLessThanOrEqual(60_000);
  });

  it('signs like Standard Webhooks (v1, HMAC-SHA256 over id.timestamp.body with the decoded secret)', () => {
    const key = Buffer.alloc(32, 7);
    const body = Buffer.from('{"a":1}');
    const expected = createHmac('sha256', key).update('msg_1.1700000000.{"a":1}').digest('base64');
    expect(webhookSignature(`whsec_${key.toString('base64')}`, 'msg_1', 1700000000, body)).toBe(`v1,${expected}`);
    const h = deliveryHeaders({ method: 'POST', url: 'http://x/', headers: { 'Content-Type': 'application/json' }, body }, { deliveryId: 'msg_1', attempt: 2, event: 'updated', signingSecret: `whsec_${key.toString('base64')}` }, 1700000000_000);
    expect(h).toEqual({
      'Content-Type': 'application/json', 'User-Agent': 'collect-api-restservices/1.0', 'X-Delivery-Id': 'msg_1', 'X-Delivery-Attempt': '2', 'X-Submission-Event': 'updated',
      'Content-Length': '7', 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,${expected}`,
    });
  });
});

describe('forwarder payloads', () => {
  const json = { name: 'A b', 'group/q': 'x/y', _id: 5, _uuid: 'u-1', _deleted_at: null, _geolocation: [1, 2], 'meta/instanceID': 'uuid:u-1' };

  it('health_forwarder fills %(name)s placeholders, URL-encoded', () => {
    expect(fillTemplate('http://h/?i=%(id_string)s&u=%(uuid)s&n=%(name)s&q=%(group_q)s&g=%(_geolocation)s&z=%(zz)s', templateValues(json, 'f'))).toBe(
      'http://h/?i=f&u=u-1&n=A%20b&q=x%2Fy&g=%5B1%2C2%5D&z=',
    );
  });

  it('dataset_service prefixes metadata columns', () => {
    expect(datasetRow(json, 'f', 9, 'ds')).toEqual({ name: 'A b', 'group/q': 'x/y', f_9_id: 5, f_9_uuid: 'u-1', f_9_deleted_at: null, f_9_geolocation: [1, 2], 'f_9_meta/instanceID': 'uuid:u-1', f_9_bamboo_dataset_id: 'ds' });
  });

  it('messaging flattens, drops nulls and JSON-encodes arrays', () => {
    expect(flowExtra(json)).toEqual({ name: 'A b', group_q: 'x/y', _id: 5, _uuid: 'u-1', _geolocation: '[1,2]', meta_instanceID: 'uuid:u-1' });
    expect(splitContacts(' a, b,,c ')).toEqual(['a', 'b', 'c']);
  });
});
