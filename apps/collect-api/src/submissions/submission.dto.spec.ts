import { validateInput } from '@collect/platform';
import { certainJsonSubmission, JsonSubmissionDto } from './submission.dto.js';

/** What the validation pipe makes of `body`: the DTO's fields, or the 400's body. */
async function throughPipe(body: unknown): Promise<{ ok: unknown } | { refused: unknown }> {
  try {
    const dto = await validateInput(JsonSubmissionDto, body);
    return { ok: { ...dto } };
  } catch (err) {
    return { refused: (err as { getResponse(): unknown }).getResponse() };
  }
}

describe('certainJsonSubmission (the JSON intake without the validation pipe)', () => {
  const bodies: unknown[] = [
    { id: 'f', submission: { a: '1' } },
    { id: ' ', submission: {} },
    { id: 'f', submission: { a: { b: [1, 2] } }, extra: 'dropped', _meta: 1 },
    { id: '', submission: { a: '1' } },
    { id: null, submission: { a: '1' } },
    { id: 3, submission: { a: '1' } },
    { id: ['f'], submission: { a: '1' } },
    { submission: { a: '1' } },
    { id: 'f' },
    { id: 'f', submission: null },
    { id: 'f', submission: 'text' },
    { id: 'f', submission: [{ a: '1' }] },
    { id: 'f', submission: Buffer.from('x') },
    null,
    [],
    'text',
  ];

  it.each(bodies.map((b) => [JSON.stringify(b) ?? String(b), b]))('%s: the same DTO as the pipe, or none (the pipe answers)', async (_name, body) => {
    const fast = certainJsonSubmission(body);
    const piped = await throughPipe(body);
    if (fast) {
      expect(fast).toBeInstanceOf(JsonSubmissionDto);
      expect(piped).toEqual({ ok: { ...fast } });
    } else if ('ok' in piped) {
      // Only bodies the pipe takes apart from the plain shape (a Buffer as the answers) may go the long way and pass.
      expect(Buffer.isBuffer((body as { submission?: unknown }).submission)).toBe(true);
    }
  });

  it('takes the plain shape, and only it', () => {
    expect(certainJsonSubmission({ id: 'f', submission: { a: '1' }, x: 1 })).toEqual({ id: 'f', submission: { a: '1' } });
    expect(certainJsonSubmission({ id: '', submission: {} })).toBeNull();
    expect(certainJsonSubmission({ id: 'f', submission: [] })).toBeNull();
  });
});
