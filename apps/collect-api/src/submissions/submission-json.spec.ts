import { buildSubmissionJson } from './submission-json.js';
import type { SubmissionEntity } from './submission.entity.js';

describe('buildSubmissionJson', () => {
  const form = { id: 7, idString: 'household', uuid: '0f3c6a1e-2b7d-4c55-9a8e-1d2c3b4a5f60', fields: [] };
  const submission = (json: Record<string, unknown>): SubmissionEntity => ({
    id: 41, formId: 7, uuid: 'c0ffee00-0000-4000-8000-000000000001', json, xml: '<household/>', contentHash: 'h', status: 'submitted_via_web',
    submittedById: null, version: '202611290001', edited: false, bambooDatasetId: '', dateCreated: new Date('2026-11-29T05:00:00Z'),
    dateModified: new Date('2026-11-29T05:00:00Z'), deletedAt: null,
  });
  // Answers that also hold keys the metadata sets: their place is the answers', their value the metadata's.
  const answers = () => ({ 'hh/size': '4', 'meta/instanceID': 'uuid:stale', name: 'Jane', _id: 'not-an-id' });
  const build = (json: Record<string, unknown>, reuseAnswers: boolean) =>
    buildSubmissionJson({ submission: submission(json), form, attachments: [], submittedBy: 'enumerator', baseUrl: 'https://collect.example.org', reuseAnswers });

  it('gives the same object, key order included, whether it copies the answers or reuses them', () => {
    const copied = build(answers(), false);
    const own = answers();
    const reused = build(own, true);
    expect(JSON.stringify(reused)).toBe(JSON.stringify(copied));
    expect(Object.keys(reused).slice(0, 5)).toEqual(['hh/size', 'meta/instanceID', 'name', '_id', 'formhub/uuid']);
    expect(reused).toMatchObject({ 'meta/instanceID': 'uuid:c0ffee00-0000-4000-8000-000000000001', _id: 41 });
    // Reused: the answers object is the result; copied: the answers are left as they were.
    expect(reused).toBe(own);
    const kept = answers();
    build(kept, false);
    expect(kept).toEqual(answers());
  });
});
