import { ApiValidationPipe, MAX_INPUT_DEPTH, RejectUnknownFields, TOO_DEEP, validateInput } from './validation-pipe.js';
import { AnyObject, Bool, Choice, Int, Nested, Text } from '@collect/contracts';

class Filter {
  @Text({ required: true, pattern: /^[a-z]+$/, patternMessage: 'A field name.' })
  column: string;

  @Choice(['=', '<'], { required: true })
  filter: string;
}

class View {
  @Text({ required: true, trim: true, blank: 'missing', max: 5 })
  name: string;

  @Int({ min: 1 })
  xform?: number;

  @Bool({ fromString: true })
  remove?: boolean;

  @Nested(() => Filter, { each: true, maxItems: 3, fromJsonText: true })
  query?: Filter[];
}

@RejectUnknownFields()
class Strict {
  @Text()
  name?: string;
}

class Media {
  @Int({ min: 1, message: 'Invalid value for formid. It must be a positive integer.', asDetail: true })
  xform?: number;

  @Int({ min: 1 })
  page?: number;
}

class Answers {
  @Text({ required: true })
  id: string;

  @AnyObject({ required: true })
  submission: Record<string, unknown>;
}

const failure = (p: Promise<unknown>) => p.then(() => ({ status: 0, body: undefined }), (e: { getStatus(): number; getResponse(): unknown }) => ({ status: e.getStatus(), body: e.getResponse() }));

describe('ApiValidationPipe', () => {
  const sut = new ApiValidationPipe();

  it('names every missing required field of a missing body, and refuses a body that is not an object', async () => {
    expect(await failure(sut.transform(undefined, { type: 'body', metatype: View }))).toEqual({ status: 400, body: { name: ['This field is required.'] } });
    for (const value of [[1], 'text', 3]) {
      expect(await failure(sut.transform(value, { type: 'body', metatype: View }))).toEqual({ status: 400, body: { detail: 'Expected a JSON object.' } });
    }
  });

  it('reports the first failed check of each field in the order the decorator lists them', async () => {
    expect(await failure(validateInput(View, { name: 5, xform: 'x' }))).toEqual({ status: 400, body: { name: ['Not a valid string.'], xform: ['A valid integer is required.'] } });
    expect(await failure(validateInput(View, { name: '   ', xform: '0' }))).toEqual({ status: 400, body: { name: ['This field is required.'], xform: ['Ensure this value is greater than or equal to 1.'] } });
    expect(await failure(validateInput(View, { name: 'toolong' }))).toEqual({ status: 400, body: { name: ['Ensure this field has no more than 5 characters.'] } });
  });

  it('keeps nested errors under their top-level field, prefixed with the path inside it', async () => {
    const res = await failure(validateInput(View, { name: 'v', query: [{ column: 'a', filter: '=' }, 5, { column: 'B', filter: '!' }] }));
    expect(res).toEqual({ status: 400, body: { query: ['[1]: Expected an object.', '[2].column: A field name.', '[2].filter: "!" is not a valid choice.'] } });
    // A list's own check does not hide the problems of its items.
    expect(await failure(validateInput(View, { name: 'v', query: [{ column: 'a', filter: '=' }, { column: 'a', filter: '=' }, { column: 'a', filter: '=' }, {}] }))).toEqual({
      status: 400,
      body: { query: ['Ensure this list has no more than 3 items.', '[3].column: This field is required.', '[3].filter: This field is required.'] },
    });
  });

  it('answers a list of many bad items with at most 50 messages', async () => {
    const res = await failure(validateInput(View, { name: 'v', query: Array.from({ length: 3 }, () => ({})), ...Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x${i}`, 1])) }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ query: ['[0].column: This field is required.', '[0].filter: This field is required.', '[1].column: This field is required.', '[1].filter: This field is required.', '[2].column: This field is required.', '[2].filter: This field is required.'] });
    const strict = await failure(validateInput(Strict, Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x${i}`, 1]))));
    const body = strict.body as Record<string, string[]>;
    expect(Object.values(body).flat()).toHaveLength(51);
    expect(Object.values(body).flat().at(-1)).toBe('... and 150 more errors.');
  });

  it('converts text from query strings and form posts, and builds nested instances from JSON text', async () => {
    const view = await validateInput(View, { name: ' v ', xform: '12', remove: 'true', query: '[{"column":"a","filter":"<"}]' });
    expect(view).toBeInstanceOf(View);
    expect(view).toEqual({ name: 'v', xform: 12, remove: true, query: [{ column: 'a', filter: '<' }] });
    expect(view.query![0]).toBeInstanceOf(Filter);
  });

  it('drops unknown fields, or refuses them on a DTO marked @RejectUnknownFields()', async () => {
    expect(await validateInput(View, { name: 'v', is_superuser: true })).toEqual({ name: 'v' });
    expect(await failure(validateInput(Strict, { name: 'v', is_superuser: true }))).toEqual({ status: 400, body: { is_superuser: ['Unknown field.'] } });
  });

  it('answers {"detail"} for a check marked as a non-field error, before the field errors', async () => {
    expect(await failure(sut.transform({ xform: ['1', '2'], page: '0' }, { type: 'query', metatype: Media }))).toEqual({ status: 400, body: { detail: 'Invalid value for formid. It must be a positive integer.' } });
  });

  it('refuses a payload nested deeper than MAX_INPUT_DEPTH before building the DTO (class-transformer recursion)', async () => {
    const nested = (depth: number) => JSON.parse(`{"name":"v","x":${'['.repeat(depth)}${']'.repeat(depth)}}`) as unknown;
    expect(await validateInput(View, nested(MAX_INPUT_DEPTH - 1))).toEqual({ name: 'v' });
    for (const depth of [MAX_INPUT_DEPTH, 5_000, 400_000]) expect(await failure(validateInput(View, nested(depth)))).toEqual({ status: 400, body: { detail: TOO_DEEP } });
  });

  it('keeps prototype-named keys inside an @AnyObject() value (answers), strips them elsewhere', async () => {
    const body = JSON.parse('{"id":"f","constructor":"x","submission":{"constructor":"c","prototype":"p","__proto__":"q","g":{"__proto__":"in-group"}}}') as Record<string, unknown>;
    const dto = await validateInput(Answers, body);
    expect(dto).toBeInstanceOf(Answers);
    expect(Object.keys(dto.submission)).toEqual(['constructor', 'prototype', '__proto__', 'g']);
    expect(Object.getOwnPropertyDescriptor(dto.submission.g, '__proto__')?.value).toBe('in-group');
    expect(Object.prototype.hasOwnProperty.call(dto, 'constructor')).toBe(false);
    expect(await failure(validateInput(Answers, { id: 'f', submission: ['a'] }))).toMatchObject({ status: 400, body: { submission: [expect.any(String)] } });
  });

  it('leaves primitive parameters to Nest', async () => {
    expect(await sut.transform('12', { type: 'param', metatype: String, data: 'pk' })).toBe('12');
  });
});
