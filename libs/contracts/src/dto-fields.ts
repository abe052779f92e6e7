import 'reflect-metadata';
import { applyDecorators, type Type } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { plainToInstance, Transform, Type as TransformType } from 'class-transformer';
import {
  ArrayMaxSize, ArrayMinSize, IsArray, IsObject, IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateBy, ValidateIf, ValidateNested,
  type ValidationArguments, type ValidationOptions,
} from 'class-validator';

/**
 * Constraint context that makes a failed check a non-field error, `{"detail": message}`, instead
 * of `{"<field>": [message]}` (the media filters keep their documented detail messages,
 * docs/media.md). Pass it as `context` in a decorator's validation options.
 */
export const AS_DETAIL = { asDetail: true } as const;

const OPAQUE_FIELDS = Symbol('collect:opaque-fields');

/** Marks a DTO property whose object value is data the DTO does not describe (`@AnyObject()`). */
export function OpaqueField(): PropertyDecorator {
  return (target, key) => {
    const fields = (Reflect.getOwnMetadata(OPAQUE_FIELDS, target) as string[] | undefined) ?? [...((Reflect.getMetadata(OPAQUE_FIELDS, target) as string[] | undefined) ?? [])];
    fields.push(String(key));
    Reflect.defineMetadata(OPAQUE_FIELDS, fields, target);
  };
}

/** The properties of a DTO prototype marked `@OpaqueField()`; the validation pipe sets their values aside. */
export function opaqueFieldsOf(prototype: object): string[] {
  return (Reflect.getMetadata(OPAQUE_FIELDS, prototype) as string[] | undefined) ?? [];
}

/**
 * Field decorators of the DTOs of both services: each one is the class-validator checks of a
 * field, in the order they run (the first failure is the field's message), the class-transformer step before them, and the field's OpenAPI schema. The
 * messages are DRF's, which the API's clients know (docs/security.md "Input validation").
 */
export const FIELD_MESSAGES = {
  required: 'This field is required.',
  notString: 'Not a valid string.',
  blank: 'This field may not be blank.',
  maxLength: (max: number) => `Ensure this field has no more than ${max} characters.`,
  minLength: (min: number) => `Ensure this field has at least ${min} characters.`,
  notInteger: 'A valid integer is required.',
  min: (min: number) => `Ensure this value is greater than or equal to ${min}.`,
  max: (max: number) => `Ensure this value is less than or equal to ${max}.`,
  notBoolean: 'Must be a valid boolean.',
  notList: 'Expected a list of items.',
  notObject: 'Expected an object.',
  choice: (value: unknown) => `"${String(value).slice(0, 100)}" is not a valid choice.`,
} as const;

/** The largest id of a PostgreSQL `integer` column. */
export const MAX_DB_ID = 2_147_483_647;

type Message = string | ((args: ValidationArguments) => string);

export interface FieldOptions {
  /** Missing (or null) answers "This field is required."; otherwise a missing field skips every check. */
  required?: boolean;
  /** The message when a required field is missing (default "This field is required."). */
  requiredMessage?: string;
  /** One message for every other check of the field (the type and the range alike). */
  message?: string;
  /** The message of the type check alone (a repeated query parameter arrives as a list). */
  typeMessage?: string;
  /** Failed checks answer `{"detail": message}` instead of `{"<field>": [message]}`. */
  asDetail?: boolean;
  /** OpenAPI. */
  description?: string;
  example?: unknown;
  /** null is a value of its own (skips the checks; the service decides what it means); otherwise null fails the type check. */
  nullable?: boolean;
  /** OpenAPI: the default the service applies when the field is missing. */
  default?: unknown;
}

export interface TextOptions extends FieldOptions {
  max?: number;
  min?: number;
  trim?: boolean;
  /** An empty string (after trimming): counted as missing, refused, or a value (default). */
  blank?: 'missing' | 'refuse' | 'allow';
  pattern?: RegExp;
  patternMessage?: Message;
  /** OpenAPI `format` (email, uri, uuid, ...). */
  format?: string;
  /** Further checks on the (string) value, after the others, in order. */
  check?: StringCheck | StringCheck[];
}

export interface StringCheck {
  test: (value: string, object: object) => boolean;
  message: Message;
}

function validation(options: FieldOptions, fallback: Message, extra: ValidationOptions = {}): ValidationOptions {
  return { message: options.message ?? fallback, ...(options.asDetail ? { context: AS_DETAIL } : {}), ...extra };
}

function typeCheck(options: FieldOptions, fallback: string): ValidationOptions {
  const base = validation(options, fallback);
  return options.typeMessage ? { ...base, message: options.typeMessage } : base;
}

function presence(options: FieldOptions): PropertyDecorator {
  if (options.required) return IsDefined({ message: options.requiredMessage ?? FIELD_MESSAGES.required, ...(options.asDetail ? { context: AS_DETAIL } : {}) });
  return options.nullable ? IsOptional() : ValidateIf((_object, value) => value !== undefined);
}

function schema(options: FieldOptions, rest: ApiPropertyOptions): PropertyDecorator {
  const described = {
    required: !!options.required,
    ...(options.description ? { description: options.description } : {}),
    ...(options.example !== undefined ? { example: options.example } : {}),
    ...(options.nullable ? { nullable: true } : {}),
    ...(options.default !== undefined ? { default: options.default } : {}),
  };
  return ApiProperty({ ...described, ...rest } as ApiPropertyOptions);
}

/** A string field. */
export function Text(options: TextOptions = {}): PropertyDecorator {
  const { max, min, trim, blank = 'allow', pattern, patternMessage, check } = options;
  const decorators: PropertyDecorator[] = [];
  if (trim || blank === 'missing') {
    decorators.push(
      Transform(({ value }) => {
        const v = trim && typeof value === 'string' ? value.trim() : value;
        return blank === 'missing' && (v === '' || v === null) ? undefined : v;
      }),
    );
  }
  decorators.push(presence(options), IsString(typeCheck(options, FIELD_MESSAGES.notString)));
  if (blank === 'refuse') decorators.push(MinLength(1, validation(options, FIELD_MESSAGES.blank)));
  if (min !== undefined) decorators.push(MinLength(min, validation(options, FIELD_MESSAGES.minLength(min))));
  if (max !== undefined) decorators.push(MaxLength(max, validation(options, FIELD_MESSAGES.maxLength(max))));
  if (pattern) decorators.push(Matches(pattern, validation(options, patternMessage ?? 'Enter a valid value.')));
  for (const c of check ? [check].flat() : []) decorators.push(Satisfies(c.test, validation(options, c.message)));
  decorators.push(
    schema(options, {
      type: 'string',
      ...(max !== undefined ? { maxLength: max } : {}),
      ...(min !== undefined ? { minLength: min } : blank === 'refuse' ? { minLength: 1 } : {}),
      ...(pattern ? { pattern: pattern.source } : {}),
      ...(options.format ? { format: options.format } : {}),
    }),
  );
  return applyDecorators(...decorators);
}

/** Canonical decimal digits become a number (query strings, form posts); anything else stays for the checks to refuse. */
export function toInteger(value: unknown): unknown {
  return typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
}

/** `"true"` / `"false"` (query strings, form posts) become booleans; anything else stays for the checks to refuse. */
export function toBoolean(value: unknown): unknown {
  return value === 'true' ? true : value === 'false' ? false : value;
}

export interface IntOptions extends FieldOptions {
  min?: number;
  max?: number;
  /** Accept `"12"` as 12 (default true: query strings carry only text). */
  fromString?: boolean;
  /** `""` counts as missing (`?page=`), instead of failing the integer check. */
  blankIsMissing?: boolean;
}

/** An integer field. */
export function Int(options: IntOptions = {}): PropertyDecorator {
  const { min, max, fromString = true, blankIsMissing } = options;
  const decorators: PropertyDecorator[] = [];
  if (fromString || blankIsMissing) decorators.push(Transform(({ value }) => (blankIsMissing && value === '' ? undefined : fromString ? toInteger(value) : value)));
  decorators.push(presence(options), IsInt(typeCheck(options, FIELD_MESSAGES.notInteger)));
  if (min !== undefined) decorators.push(Min(min, validation(options, FIELD_MESSAGES.min(min))));
  if (max !== undefined) decorators.push(Max(max, validation(options, FIELD_MESSAGES.max(max))));
  decorators.push(schema(options, { type: 'integer', ...(min !== undefined ? { minimum: min } : {}), ...(max !== undefined ? { maximum: max } : {}) }));
  return applyDecorators(...decorators);
}

export interface BoolOptions extends FieldOptions {
  /** Accept `"true"` / `"false"` (default false: JSON has booleans). */
  fromString?: boolean;
}

/** A boolean field. */
export function Bool(options: BoolOptions = {}): PropertyDecorator {
  const decorators: PropertyDecorator[] = [];
  if (options.fromString) decorators.push(Transform(({ value }) => toBoolean(value)));
  decorators.push(presence(options), IsBoolean(validation(options, FIELD_MESSAGES.notBoolean)), schema(options, { type: 'boolean' }));
  return applyDecorators(...decorators);
}

export interface ChoiceOptions extends FieldOptions {
  /** Maps a value before the check (aliases, case). Only called on strings. */
  normalise?: (value: string) => string;
  choiceMessage?: Message;
  /** `""` and null count as missing. */
  blankIsMissing?: boolean;
}

/** One of a fixed list of strings. */
export function Choice(choices: readonly string[], options: ChoiceOptions = {}): PropertyDecorator {
  const decorators: PropertyDecorator[] = [];
  const { normalise, blankIsMissing } = options;
  if (normalise || blankIsMissing) {
    decorators.push(
      Transform(({ value }) => {
        if (blankIsMissing && (value === '' || value === null)) return undefined;
        return normalise && typeof value === 'string' ? normalise(value) : value;
      }),
    );
  }
  decorators.push(
    presence(options),
    IsIn([...choices], validation(options, options.choiceMessage ?? ((args) => FIELD_MESSAGES.choice(args.value)))),
    schema(options, { type: 'string', enum: [...choices] }),
  );
  return applyDecorators(...decorators);
}

export interface NestedOptions extends FieldOptions {
  /** A list of objects of the class (default: one object). */
  each?: boolean;
  minItems?: number;
  maxItems?: number;
  /** Accept the JSON text of the value (form posts carry only text). */
  fromJsonText?: boolean;
  /** List items must differ in this key (checked before the items themselves). */
  uniqueBy?: { key: (item: unknown) => unknown; message: Message };
}

/** An object of a DTO class, or a list of them, validated with that class's own rules. */
export function Nested(dto: () => Type, options: NestedOptions = {}): PropertyDecorator {
  const { each, minItems, maxItems, fromJsonText } = options;
  const decorators: PropertyDecorator[] = [];
  // class-transformer builds the DTO instances (the checks and the whitelist read their class); a
  // JSON text is parsed first, then built the same way.
  if (fromJsonText) decorators.push(Transform(({ obj, key }) => toInstances(dto(), parseJsonText((obj as Record<string, unknown>)[key])), { toClassOnly: true }));
  else decorators.push(TransformType(dto));
  decorators.push(presence(options));
  if (each) {
    decorators.push(IsArray(validation(options, FIELD_MESSAGES.notList)));
    if (minItems !== undefined) decorators.push(ArrayMinSize(minItems, validation(options, `Ensure this list has at least ${minItems} item${minItems === 1 ? '' : 's'}.`)));
    if (maxItems !== undefined) decorators.push(ArrayMaxSize(maxItems, validation(options, `Ensure this list has no more than ${maxItems} items.`)));
    if (options.uniqueBy) decorators.push(UniqueItems(options.uniqueBy.key, validation(options, options.uniqueBy.message)));
  }
  decorators.push(
    ValidateNested(validation(options, FIELD_MESSAGES.notObject, { each })),
    schema(options, {
      type: dto,
      ...(each ? { isArray: true } : {}),
      ...(minItems !== undefined ? { minItems } : {}),
      ...(maxItems !== undefined ? { maxItems } : {}),
    }),
  );
  return applyDecorators(...decorators);
}

function toInstances(dto: Type, value: unknown): unknown {
  const build = (item: unknown) => (item && typeof item === 'object' && !Array.isArray(item) ? plainToInstance(dto, item) : item);
  return Array.isArray(value) ? value.map(build) : build(value);
}

/**
 * A JSON object whose content the DTO does not describe (a submission's answers): checked to be
 * an object, passed on exactly as it arrived (class-transformer does not rebuild it, and the
 * pipe does not strip its prototype-named keys: ApiValidationPipe).
 */
export function AnyObject(options: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    OpaqueField(),
    Transform(({ obj, key }) => (obj as Record<string, unknown>)[key], { toClassOnly: true }),
    presence(options),
    IsObject(validation(options, FIELD_MESSAGES.notObject)),
    schema(options, { type: 'object', additionalProperties: true }),
  );
}

/** The value, or what its JSON text encodes; text that is not JSON stays text (and fails the checks). */
export function parseJsonText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** A check of a string written as a predicate (cross-field rules, URL lists): class-validator's ValidateBy. */
export function Satisfies(test: (value: string, object: object) => boolean, options: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'satisfies', validator: { validate: (value, args) => typeof value === 'string' && test(value, args!.object) } }, options);
}

/**
 * The items of a list differ (by `key`): one pass with a Set. Not class-validator's ArrayUnique,
 * which compares every item with every other (indexOf in a filter): a 1 MiB form definition of
 * 30,000 sibling questions held the event loop for seconds (docs/security.md "Parsers of user input").
 */
export function UniqueItems(key: (item: unknown) => unknown, options: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'arrayUnique', validator: { validate: (value) => Array.isArray(value) && allDifferent(value, key) } }, options);
}

export function allDifferent(items: unknown[], key: (item: unknown) => unknown): boolean {
  const seen = new Set<unknown>();
  for (const item of items) {
    const k = item === null || item === undefined ? item : key(item);
    if (seen.has(k)) return false;
    seen.add(k);
  }
  return true;
}

/** A check of any value written as a predicate. */
export function Check(test: (value: unknown, object: object) => boolean, options: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'check', validator: { validate: (value, args) => test(value, args!.object) } }, options);
}

export interface ListOptions extends FieldOptions {
  minItems?: number;
  maxItems?: number;
  unique?: boolean;
  /** Accept the JSON text of the list (form posts carry only text). */
  fromJsonText?: boolean;
}

function listChecks(options: ListOptions): PropertyDecorator[] {
  const { minItems, maxItems, unique } = options;
  const decorators: PropertyDecorator[] = [presence(options), IsArray(validation(options, FIELD_MESSAGES.notList))];
  if (minItems !== undefined) decorators.push(ArrayMinSize(minItems, validation(options, `Ensure this list has at least ${minItems} item${minItems === 1 ? '' : 's'}.`)));
  if (maxItems !== undefined) decorators.push(ArrayMaxSize(maxItems, validation(options, `Ensure this list has no more than ${maxItems} items.`)));
  if (unique) decorators.push(UniqueItems((item) => item, validation(options, 'The items of this list must differ.')));
  return decorators;
}

function listSchema(options: ListOptions, items: Record<string, unknown>): PropertyDecorator {
  return schema(options, {
    type: 'array',
    items,
    ...(options.minItems !== undefined ? { minItems: options.minItems } : {}),
    ...(options.maxItems !== undefined ? { maxItems: options.maxItems } : {}),
    ...(options.unique ? { uniqueItems: true } : {}),
  } as ApiPropertyOptions);
}

/** A list of integers (numbers, or their decimal text). */
export function IntList(options: ListOptions & { min?: number; max?: number } = {}): PropertyDecorator {
  const { min, max } = options;
  const decorators: PropertyDecorator[] = [
    Transform(({ value }) => {
      const list = options.fromJsonText ? parseJsonText(value) : value;
      return Array.isArray(list) ? list.map(toInteger) : list;
    }),
    ...listChecks(options),
    IsInt(validation(options, FIELD_MESSAGES.notInteger, { each: true })),
  ];
  if (min !== undefined) decorators.push(Min(min, validation(options, FIELD_MESSAGES.min(min), { each: true })));
  if (max !== undefined) decorators.push(Max(max, validation(options, FIELD_MESSAGES.max(max), { each: true })));
  decorators.push(listSchema(options, { type: 'integer', ...(min !== undefined ? { minimum: min } : {}), ...(max !== undefined ? { maximum: max } : {}) }));
  return applyDecorators(...decorators);
}

/** A list of strings. */
export function TextList(options: ListOptions & { maxLength?: number; pattern?: RegExp; patternMessage?: Message } = {}): PropertyDecorator {
  const { maxLength, pattern } = options;
  const decorators: PropertyDecorator[] = [];
  if (options.fromJsonText) decorators.push(Transform(({ value }) => parseJsonText(value)));
  decorators.push(...listChecks(options), IsString(validation(options, FIELD_MESSAGES.notString, { each: true })));
  if (maxLength !== undefined) decorators.push(MaxLength(maxLength, validation(options, FIELD_MESSAGES.maxLength(maxLength), { each: true })));
  if (pattern) decorators.push(Matches(pattern, validation(options, options.patternMessage ?? 'Enter a valid value.', { each: true })));
  decorators.push(listSchema(options, { type: 'string', ...(maxLength !== undefined ? { maxLength } : {}), ...(pattern ? { pattern: pattern.source } : {}) }));
  return applyDecorators(...decorators);
}
