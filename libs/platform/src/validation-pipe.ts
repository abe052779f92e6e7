import 'reflect-metadata';
import { BadRequestException, HttpException, ValidationPipe, type ArgumentMetadata, type PipeTransform, type Type } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { FieldValidationError, opaqueFieldsOf, type ErrorBody, type FieldErrors } from '@collect/contracts';

/** The body of a non-object JSON payload (a list, a string, a number) sent where an object is expected. */
export const EXPECTED_OBJECT = 'Expected a JSON object.';
/**
 * How deep a payload validated against a DTO may nest (objects and lists). class-transformer
 * builds the DTO recursively and overflows the call stack near 2,000 levels (a 500); no form
 * definition or submission comes near 100.
 */
export const MAX_INPUT_DEPTH = 100;
export const TOO_DEEP = `The request nests objects or lists more than ${MAX_INPUT_DEPTH} levels deep.`;

/** At most this many messages in one 400 (a list of 100,000 bad items is one request). */
const MAX_MESSAGES = 50;

/** A field the DTO does not declare, on a DTO marked `@RejectUnknownFields()`. */
export const UNKNOWN_FIELD = 'Unknown field.';

const REJECT_UNKNOWN = Symbol('collect:reject-unknown-fields');

/**
 * Marks a DTO whose endpoint refuses fields it does not declare (400 `{"<field>": ["Unknown
 * field."]}`); other DTOs drop unknown fields silently, as DRF serializers do. Which endpoint
 * groups are strict, and why: docs/security.md "Input validation".
 */
export function RejectUnknownFields(): ClassDecorator {
  return (target) => Reflect.defineMetadata(REJECT_UNKNOWN, true, target);
}

/**
 * class-validator errors in the API's 400 shapes (docs/security.md "Input validation"):
 * `{"<field>": ["message", ...]}` keyed by the top-level field; an error inside a nested
 * object or list stays under its top-level field, its message prefixed with the path inside it
 * (`{"query": ["[0].column: ..."]}`, `{"fields": ["[2].children[0].name: ..."]}`), as DRF keeps
 * nested errors under the field the client sent. A failed check marked `AS_DETAIL` answers
 * `{"detail": "message"}` instead (the first one wins).
 */
export function validationErrorBody(errors: ValidationError[]): ErrorBody {
  const fields: FieldErrors = {};
  const details: string[] = [];
  const pending: Array<{ error: ValidationError; field: string; path: string }> = errors.map((error) => ({ error, field: error.property, path: '' }));
  let messages = 0;
  for (let i = 0; i < pending.length; i++) {
    const { error, field, path } = pending[i]!;
    // The first failed check of a field is its message (checks run in the order the DTO lists them).
    const [name, message] = Object.entries(error.constraints ?? {})[0] ?? [];
    if (name !== undefined) {
      const text = name === 'whitelistValidation' ? UNKNOWN_FIELD : message!;
      if ((error.contexts?.[name] as { asDetail?: boolean } | undefined)?.asDetail) details.push(text);
      else if (++messages <= MAX_MESSAGES) (fields[field] ??= []).push(path ? `${path}: ${text}` : text);
    }
    for (const child of error.children ?? []) {
      pending.push({ error: child, field, path: /^\d+$/.test(child.property) ? `${path}[${child.property}]` : `${path}.${child.property}` });
    }
  }
  if (details.length) return { detail: details[0]! };
  if (messages > MAX_MESSAGES) fields[Object.keys(fields).at(-1)!]!.push(`... and ${messages - MAX_MESSAGES} more errors.`);
  return Object.keys(fields).length ? fields : { detail: 'Invalid input.' };
}

export function validationException(errors: ValidationError[]): HttpException {
  const body = validationErrorBody(errors);
  return 'detail' in body && typeof body.detail === 'string' ? new BadRequestException(body) : new FieldValidationError(body as FieldErrors);
}

const PLAIN_TYPES: unknown[] = [String, Boolean, Number, Array, Object, Buffer, Date];

function isDtoClass(metatype: unknown): metatype is Type {
  return typeof metatype === 'function' && !PLAIN_TYPES.includes(metatype);
}

/**
 * The global pipe of both services: Nest's ValidationPipe over the DTO classes (`transform`,
 * `whitelist`, the first failed check of each field, `forbidNonWhitelisted` for DTOs marked
 * `@RejectUnknownFields()`), with the API's error shapes. A body that is present but not a JSON
 * object answers `{"detail": "Expected a JSON object."}`; a missing body counts as `{}`, so the
 * required fields are named.
 */
export class ApiValidationPipe implements PipeTransform {
  private readonly lenient = new ValidationPipe(pipeOptions(false));
  private readonly strict = new ValidationPipe(pipeOptions(true));

  transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { metatype } = metadata;
    if (metadata.type === 'custom' || !isDtoClass(metatype)) return this.lenient.transform(value, metadata);
    if (value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value))) {
      return Promise.reject(new BadRequestException({ detail: EXPECTED_OBJECT }));
    }
    if (deeperThan(value, MAX_INPUT_DEPTH)) return Promise.reject(new BadRequestException({ detail: TOO_DEEP }));
    const pipe = Reflect.getMetadata(REJECT_UNKNOWN, metatype) ? this.strict : this.lenient;
    const opaque = opaqueFieldsOf(metatype.prototype as object);
    return opaque.length ? this.keepingOpaque(pipe, value as Record<string, unknown> | null | undefined, metadata, opaque) : pipe.transform(value, metadata);
  }

  /**
   * Nest's ValidationPipe deletes `__proto__`, `constructor` and `prototype` keys at every level
   * of the payload before building the DTO. In the data of an `@AnyObject()` field they are
   * answers (valid XML and question names, read into records without prototype, docs/security.md
   * "Parsers of user input"): such a value is set aside while the rest is checked (an empty
   * object stands in for it) and put back on the DTO as it arrived.
   */
  private async keepingOpaque(pipe: ValidationPipe, value: Record<string, unknown> | null | undefined, metadata: ArgumentMetadata, fields: string[]): Promise<unknown> {
    const kept = new Map<string, unknown>();
    for (const field of fields) {
      const v = value && Object.prototype.hasOwnProperty.call(value, field) ? value[field] : undefined;
      if (v && typeof v === 'object' && !Array.isArray(v)) kept.set(field, v);
    }
    for (const field of kept.keys()) value![field] = {};
    try {
      const dto = (await pipe.transform(value, metadata)) as Record<string, unknown>;
      for (const [field, v] of kept) dto[field] = v;
      return dto;
    } finally {
      for (const [field, v] of kept) value![field] = v;
    }
  }
}

/** Iterative (the value may be nested far deeper than the call stack allows), stops at the limit. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const item of Array.isArray(v) ? v : Object.values(v)) if (item && typeof item === 'object') stack.push([item, depth + 1]);
  }
  return false;
}

function pipeOptions(forbidNonWhitelisted: boolean) {
  return {
    transform: true,
    whitelist: true,
    forbidNonWhitelisted,
    // Every check runs (a list's own check does not hide the errors of its items); each field
    // then answers with its first failure (validationErrorBody).
    stopAtFirstError: false,
    forbidUnknownValues: false,
    // Values stay out of the errors (a password must not travel into an exception).
    validationError: { target: false, value: false },
    exceptionFactory: validationException,
  };
}

const shared = new ApiValidationPipe();

/**
 * The global pipe's validation for a payload a controller reads itself: the JSON branch of an
 * endpoint that also takes XML or multipart (forms, submissions), or a PATCH merged with the
 * stored state (rest services). Resolves to the DTO instance or rejects with the 400 above.
 */
export function validateInput<T>(dto: Type<T>, value: unknown): Promise<T> {
  return shared.transform(value, { type: 'body', metatype: dto, data: undefined }) as Promise<T>;
}
