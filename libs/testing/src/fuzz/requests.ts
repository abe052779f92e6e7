import fc from 'fast-check';
import { anyJson, malformedXml, nastyString } from './arbitraries.js';

/** One generated request body, independent of any HTTP client. */
export type FuzzBody =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; contentType: string | null; text: string }
  | { kind: 'form'; fields: Record<string, string> }
  | { kind: 'multipart'; boundary: string; parts: Array<{ name: string; filename?: string; contentType?: string; data: string }>; truncate?: number };

export interface FuzzRequest {
  body: FuzzBody;
  /** Query string added to the path (without '?'). */
  query?: string;
  /** Replaces the target's path (fuzzed path parameters). */
  path?: string;
  /** Extra headers (e.g. a fuzzed Authorization). */
  headers?: Record<string, string>;
}

/** Encodes a body into fetch() arguments; multipart is written by hand so it can be malformed. */
export function encodeBody(body: FuzzBody): { headers: Record<string, string>; payload?: string | Buffer } {
  switch (body.kind) {
    case 'none':
      return { headers: {} };
    case 'json':
      return { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body.value) ?? 'null' };
    case 'raw':
      return { headers: body.contentType === null ? {} : { 'content-type': body.contentType }, payload: Buffer.from(body.text, 'utf8') };
    case 'form':
      return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(body.fields).toString() };
    case 'multipart': {
      const chunks = body.parts.map((p) => {
        const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
        return `--${body.boundary}\r\nContent-Disposition: ${disposition}\r\n${p.contentType ? `Content-Type: ${p.contentType}\r\n` : ''}\r\n${p.data}\r\n`;
      });
      let text = `${chunks.join('')}--${body.boundary}--\r\n`;
      if (body.truncate !== undefined) text = text.slice(0, body.truncate);
      return { headers: { 'content-type': `multipart/form-data; boundary=${body.boundary}` }, payload: Buffer.from(text, 'utf8') };
    }
  }
}

const CONTENT_TYPES = [
  null, 'application/json', 'text/plain', 'application/xml', 'text/xml', 'multipart/form-data', 'multipart/form-data; boundary=',
  'application/x-www-form-urlencoded', 'application/octet-stream', 'application/json; charset=latin1', 'application/json; charset=utf-16',
  'image/png', '*/*', 'application/merge-patch+json', 'garbage',
];

/** Arbitrary JSON bodies (objects and not), the mutations an endpoint provides, and raw junk. */
export function jsonBodies(mutations?: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<FuzzBody> {
  const arbs: Array<fc.WeightedArbitrary<FuzzBody>> = [
    { weight: 3, arbitrary: anyJson().map((value) => ({ kind: 'json' as const, value })) },
    { weight: 1, arbitrary: wrongContentTypes() },
  ];
  if (mutations) arbs.push({ weight: 6, arbitrary: mutations.map((value) => ({ kind: 'json' as const, value })) });
  return fc.oneof(...arbs);
}

/** A body of the wrong type or malformed: truncated JSON, XML, binary, empty, with any declared content type. */
export function wrongContentTypes(): fc.Arbitrary<FuzzBody> {
  const text = fc.oneof(
    nastyString(),
    fc.constantFrom('{', '{"a":1', '[1,2', '{"a":1}}', '\u0000{}', '{"__proto__":{"x":1}}', 'a=1&b=2', ''),
    malformedXml(),
  );
  return fc.record({ contentType: fc.constantFrom(...CONTENT_TYPES), text }).map(({ contentType, text }) => ({ kind: 'raw' as const, contentType, text }));
}

/** Form-encoded bodies: the given fields with arbitrary values, plus unknown ones, or raw junk. */
export function formBodies(fields: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<FuzzBody> {
  const named = Object.fromEntries(Object.entries(fields).map(([k, a]) => [k, fc.option(fc.oneof({ weight: 3, arbitrary: a }, { weight: 1, arbitrary: nastyString() }), { nil: undefined })]));
  const form = fc.tuple(fc.record(named), fc.dictionary(nastyString(), nastyString(), { maxKeys: 2 })).map(([obj, more]) => {
    const out: Record<string, string> = { ...more };
    for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
    return { kind: 'form' as const, fields: out };
  });
  return fc.oneof({ weight: 5, arbitrary: form }, { weight: 1, arbitrary: wrongContentTypes() }, { weight: 1, arbitrary: anyJson().map((value) => ({ kind: 'json' as const, value })) });
}

/**
 * Multipart bodies carrying `partName` (a file part) with malformed or valid-looking XML,
 * wrong part names, extra parts, broken boundaries and truncation.
 */
export function multipartBodies(partName: string, validXml?: fc.Arbitrary<string>): fc.Arbitrary<FuzzBody> {
  const xml = validXml ? fc.oneof(malformedXml(), validXml) : malformedXml();
  const part = fc.record({
    name: fc.oneof({ weight: 4, arbitrary: fc.constant(partName) }, { weight: 1, arbitrary: nastyString().map((s) => s.replace(/["\r\n]/g, '')) }),
    filename: fc.option(fc.constantFrom('a.xml', 'submission.xml', '../../x', 'é.jpg', ''), { nil: undefined }),
    contentType: fc.option(fc.constantFrom('text/xml', 'application/xml', 'image/jpeg', 'application/octet-stream'), { nil: undefined }),
    data: xml,
  });
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ boundary: fc.constantFrom('fuzzboundary', 'x', '----WebKitFormBoundary7MA4YWxkTrZu0gW'), parts: fc.array(part, { minLength: 0, maxLength: 4 }), truncate: fc.option(fc.nat({ max: 400 }), { nil: undefined }) }).map((m) => ({ kind: 'multipart' as const, ...m })) },
    { weight: 1, arbitrary: wrongContentTypes() },
  );
}

/** Query strings: known parameters with arbitrary values, unknown ones, repeated keys, broken escapes. */
export function queryStrings(params: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const value = (a: fc.Arbitrary<string>) => fc.oneof(a, nastyString(), fc.integer().map(String), fc.constantFrom('-1', '0', '1e9', '99999999999999999999', '1.5', 'abc', ''));
  const known = fc.record(Object.fromEntries(Object.entries(params).map(([k, a]) => [k, fc.option(value(a), { nil: undefined })])));
  return fc
    .tuple(known, fc.dictionary(nastyString(), nastyString(), { maxKeys: 2 }), fc.option(fc.constantFrom('%', '%zz', 'a[b]=1', 'page=1&page=2', 'page_size[]=3', '&&&', '=x'), { nil: undefined }))
    .map(([k, more, raw]) => {
      const sp = new URLSearchParams();
      // Capped so the request line stays under Node's 16 KB header limit (431 is tested on its own).
      for (const [name, v] of Object.entries({ ...more, ...k })) if (v !== undefined) sp.append(name.slice(0, 200), v.slice(0, 2000));
      const q = sp.toString();
      return raw ? (q ? `${q}&${raw}` : raw) : q;
    });
}

/**
 * Query strings of known parameters only (a subset, at most three), with the given values: the
 * cases that get past a strict query DTO and reach the handler.
 */
export function knownQueryStrings(params: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  return fc
    .subarray(Object.keys(params), { maxLength: Math.min(3, Object.keys(params).length) })
    .chain((keys) => fc.tuple(...keys.map((k) => params[k]!.map((v): [string, string] => [k, v]))))
    .map((pairs) => new URLSearchParams(pairs).toString());
}

/** A path segment for fuzzing route parameters: numbers out of range, junk, encoded separators. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function pathSegment(): fc.Arbitrary<string> {
  return fc.oneof(
    // '%ED%A0%80' is the UTF-8 of a lone surrogate, which encodeURIComponent refuses to produce.
    fc.constantFrom('0', '-1', '1.5', '1e3', '99999999999999999999', '2147483648', 'abc', '%00', '%2F', '..', '%E0%A4%A', '%ED%A0%80', ' ', 'null', 'NaN'),
    fc.integer().map(String),
    nastyString().map((s) => encodeURIComponent(s.slice(0, 300).replace(LONE_SURROGATE, '\uFFFD')) || 'x'),
  );
}
