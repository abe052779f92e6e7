import { effectiveRateLimit } from './destination-limits.js';
import { SERVICE_NAMES } from '../restservice.entities.js';

describe('effectiveRateLimit: every kind of destination is paced unless the operator says otherwise', () => {
  it.each(SERVICE_NAMES.map((name) => [name]))('%s with no limit of its own has one in force', (name) => {
    const limit = effectiveRateLimit({ name, rateLimitPerMinute: null }, 600);
    expect(limit).not.toBeNull();
    expect(limit).toBeLessThanOrEqual(600);
  });

  it('the service setting wins; a default of 0 leaves the kinds without their own default unlimited', () => {
    expect(effectiveRateLimit({ name: 'generic_json', rateLimitPerMinute: 5000 }, 600)).toBe(5000);
    expect(effectiveRateLimit({ name: 'generic_json', rateLimitPerMinute: null }, 0)).toBeNull();
    expect(effectiveRateLimit({ name: 'messaging', rateLimitPerMinute: null }, 0)).toBe(40);
  });
});
