import fc from 'fast-check';

/**
 * Generators for hostile request bodies. Every endpoint table picks from these so a new
 * endpoint gets the same treatment by adding one row, not new generator code.
 */

/** Names a plain object inherits: a lookup by a client's key must never find these. */
export const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'isPrototypeOf', 'hasOwnProperty', 'toString', 'valueOf', 'propertyIsEnumerable', '__defineGetter__'];

/** Strings that break naive code: unicode planes, control characters, NULs, huge lengths, SQL/XML/JSON metacharacters. */
export function nastyString(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
    // NUL: PostgreSQL text and jsonb cannot hold it, so every string that reaches a query must be checked.
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((s) => `${s}\u0000${s}`) },
    fc.constantFrom(
      '', ' ', '\u0000', 'a\u0000b', '\uD800', '\uFEFF', 'é', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '🙂'.repeat(50), "'; DROP TABLE users; --", '<x/>', ']]>', '&amp;',
      '{"a":', '%', '%00', '../../etc/passwd', '\r\n\r\n', 'null', 'true', '-1', '0', '1e309', 'NaN',
      // Every name Object.prototype answers to: as keys they must stay data (docs/security.md, "Input validation").
      ...PROTOTYPE_NAMES,
    ),
    // Large strings: well past any column length, well under the body limit.
    fc.integer({ min: 1_000, max: 200_000 }).map((n) => 'x'.repeat(n)),
  );
}

/** Any JSON value, including deeply nested ones, with nasty strings as keys and leaves. */
export function anyJson(): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(nastyString(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => Number(n)));
  return fc.oneof(
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    { weight: 2, arbitrary: fc.dictionary(nastyString(), leaf, { maxKeys: 6 }) },
    { weight: 1, arbitrary: deepNesting() },
    { weight: 1, arbitrary: leaf },
  );
}

/** An array or object nested 50..3000 levels deep (stack-depth bugs in recursive code). */
export function deepNesting(): fc.Arbitrary<unknown> {
  return fc.tuple(fc.integer({ min: 50, max: 3_000 }), fc.boolean()).map(([depth, asArray]) => {
    let v: unknown = 'bottom';
    for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
    return v;
  });
}

/** A value of any JSON type: used to put the wrong type into a known field. */
export function anyType(): fc.Arbitrary<unknown> {
  return fc.oneof(nastyString(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }));
}

/**
 * Mutations of a valid body: each field kept, dropped, or replaced by a value of any type,
 * plus unknown extra fields. Finds the branches that trust a field's type.
 */
export function mutatedObject(valid: Record<string, unknown>, extra: Record<string, fc.Arbitrary<unknown>> = {}): fc.Arbitrary<Record<string, unknown>> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(valid)) {
    const kept = extra[k] ? fc.oneof(fc.constant(v), extra[k]) : fc.constant(v);
    fields[k] = fc.oneof({ weight: 2, arbitrary: kept }, { weight: 2, arbitrary: anyType() }, { weight: 1, arbitrary: fc.constant(undefined) });
  }
  return fc.tuple(fc.record(fields), fc.dictionary(nastyString(), anyType(), { maxKeys: 2 })).map(([obj, more]) => {
    const out: Record<string, unknown> = { ...more };
    for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
    return out;
  });
}

/** Malformed XML documents: unclosed tags, entity bombs, DOCTYPEs, binary, wrong roots, huge text. */
export function malformedXml(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      '', '<', '<a>', '<a></b>', '<?xml version="1.0"?>', '<a><b></a></b>', 'not xml at all', '<a x="1" x="2"/>',
      '<!DOCTYPE a [<!ENTITY e "x"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">]><a>&f;&f;&f;&f;&f;&f;</a>',
      '<!DOCTYPE a [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><a>&xxe;</a>',
      '<h:html xmlns:h="http://www.w3.org/1999/xhtml"><h:head><model><instance></instance></model></h:head></h:html>',
      '<data id="x"><q>1</q></data>', '<data><meta><instanceID>uuid:x</instanceID></meta></data>', '<a>&undefined;</a>', '<a>\u0000</a>',
    ),
    nastyString().map((s) => `<data id="${s.replace(/"/g, '')}"><q>${s}</q></data>`),
    // Sibling (repeat) and leaf elements named after Object.prototype members.
    fc.constantFrom(...PROTOTYPE_NAMES).map((n) => `<data id="f"><${n}><a>1</a></${n}><${n}><a>2</a></${n}><g><${n}>v</${n}></g></data>`),
    fc.integer({ min: 100, max: 5_000 }).map((n) => '<a>'.repeat(n) + '</a>'.repeat(n)),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
  );
}
