import { FieldValidationError } from '@collect/contracts';
import type { FormField } from '../forms/form.entity.js';
import type { SubmissionRecord } from './submission.entity.js';

/**
 * Numbers in stored answers (docs/security.md, "Numbers, formulas and names"). Answers are text;
 * a read that compares or sorts them as numbers casts them in SQL, and PostgreSQL's `numeric`
 * refuses a value such as `1e999999` with an error that would fail the whole statement, for
 * every reader of the form. So a cast only happens on text of bounded size: at most
 * NUMBER_MAX_DIGITS digits before and after the point and an exponent of at most three digits
 * (|e| <= 999), all far inside `numeric`'s range (131,072 digits before the point, 16,383
 * after); any other text reads as NULL (a missing number). Intake of JSON submissions accepts on
 * integer and decimal questions exactly what this cast reads.
 */
export const NUMBER_MAX_DIGITS = 100;

const D = NUMBER_MAX_DIGITS;
/** A number answer: optional sign, digits with an optional fraction, optional exponent; surrounding blanks allowed. */
const NUMBER_ANSWER = `^\\s*[-+]?(\\d{1,${D}}(\\.\\d{0,${D}})?|\\.\\d{1,${D}})([eE][-+]?\\d{1,3})?\\s*$`;
/** An integer answer: optional sign and digits. */
const INTEGER_ANSWER = `^\\s*[-+]?\\d{1,${D}}\\s*$`;

const NUMBER_ANSWER_RE = new RegExp(NUMBER_ANSWER);
const INTEGER_ANSWER_RE = new RegExp(INTEGER_ANSWER);

/** Whether `text` is a number the SQL cast reads (else it reads as NULL). */
export function isNumberAnswer(text: string): boolean {
  return NUMBER_ANSWER_RE.test(text);
}

/**
 * `text` (an SQL expression of type text) as `numeric`, or NULL when it is not a bounded number:
 * never an error, whatever the stored answer. The same pattern as isNumberAnswer, as a constant
 * SQL literal (PostgreSQL's regular expressions take the same syntax for these).
 */
export function safeNumericSql(text: string): string {
  return `(CASE WHEN ${text} ~ '${NUMBER_ANSWER}' THEN CAST(${text} AS numeric) END)`;
}

/** By form field type; a Map, since types are names from the client (`constructor`, `toString`). */
const NUMBER_TYPES = new Map<string, { re: RegExp; message: string }>([
  ['integer', { re: INTEGER_ANSWER_RE, message: `an integer question takes a whole number of at most ${D} digits` }],
  ['decimal', { re: NUMBER_ANSWER_RE, message: `a decimal question takes a number (at most ${D} digits before and after the point, an exponent of at most 3 digits)` }],
]);

/**
 * Refuses a JSON submission whose answer to an integer or decimal question (repeats included)
 * is not a number the reads can use: 400 `{"submission": ["<xpath>: ..."]}`, as recordFromJson
 * names its other problems. OpenRosa instances are stored as the phone sent them (ODK Central
 * does the same; docs/forms.md, "Submissions"), and a bad number there reads as missing.
 */
export function checkNumberAnswers(record: SubmissionRecord, fields: readonly FormField[]): void {
  const typed = new Map<string, { re: RegExp; message: string }>();
  for (const f of fields) {
    const rule = NUMBER_TYPES.get(f.type);
    if (rule) typed.set(f.xpath, rule);
  }
  if (!typed.size) return;
  const problems: string[] = [];
  const walk = (rec: SubmissionRecord) => {
    for (const key in rec) {
      const value = rec[key];
      if (Array.isArray(value)) {
        for (const item of value) if (item && typeof item === 'object') walk(item as SubmissionRecord);
        continue;
      }
      const rule = typed.get(key);
      if (rule && typeof value === 'string' && !rule.re.test(value) && problems.length < 50) problems.push(`${key}: ${rule.message}.`);
    }
  };
  walk(record);
  if (problems.length) throw new FieldValidationError({ submission: problems });
}
