// The parameters column: `key=value` pairs, checked per question type as pyxform does, and the
// bind and control attributes each type's parameters become.
import { rowPrefix, XlsFormProblem } from '../errors.js';
import type { FormNode, Survey } from '../model.js';
import { YES_NO } from '../question-types.js';

const RE_PARAMETER_PAIR = /([^\s=,;]+)\s*=\s*([^\s=,;]+)/y;
const RE_PARAMETER_SEP = /[\s,;]*/y;

/** `key=value` pairs separated by spaces, commas or semicolons; keys lower case, values too except label/value. */
export function parseParameters(raw: string | undefined, row: number): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw || !raw.trim()) return out;
  let i = 0;
  while (i < raw.length) {
    RE_PARAMETER_SEP.lastIndex = i;
    RE_PARAMETER_SEP.exec(raw);
    i = RE_PARAMETER_SEP.lastIndex;
    if (i >= raw.length) break;
    RE_PARAMETER_PAIR.lastIndex = i;
    const m = RE_PARAMETER_PAIR.exec(raw);
    if (!m) throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. Parameters must be in the form of 'key1=value1 key2=value2.`);
    const key = m[1].toLowerCase();
    out[key] = key === 'label' || key === 'value' ? m[2] : m[2].toLowerCase();
    i = RE_PARAMETER_PAIR.lastIndex;
  }
  return out;
}

export function validateParameterKeys(parameters: Record<string, string>, accepted: string[], row: number): void {
  const rejected = Object.keys(parameters).filter((k) => !accepted.includes(k)).sort();
  if (rejected.length > 0) {
    throw new XlsFormProblem(
      `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The accepted parameter keys for this question type are '${[...accepted].sort().join(', ')}'. The following are invalid parameter key(s): '${rejected.join(', ')}'.`,
    );
  }
}

const numeric = (v: string) => v.trim() !== '' && Number.isFinite(Number(v));

export function applyAuditParameters(node: FormNode, p: Record<string, string>, row: number): void {
  validateParameterKeys(p, ['identify-user', 'location-max-age', 'location-min-interval', 'location-priority', 'track-changes', 'track-changes-reasons'], row);
  const bind = node.bind!;
  if ('track-changes' in p) {
    if (!['true', 'false'].includes(p['track-changes'])) throw new XlsFormProblem(`track-changes must be set to true or false: '${p['track-changes']}' is an invalid value.`);
    bind['odk:track-changes'] = p['track-changes'];
  }
  if ('track-changes-reasons' in p) {
    if (p['track-changes-reasons'] !== 'on-form-edit') throw new XlsFormProblem('track-changes-reasons must be set to on-form-edit');
    bind['odk:track-changes-reasons'] = 'on-form-edit';
  }
  if ('identify-user' in p) {
    if (!['true', 'false'].includes(p['identify-user'])) throw new XlsFormProblem(`identify-user must be set to true or false: '${p['identify-user']}' is an invalid value.`);
    bind['odk:identify-user'] = p['identify-user'];
  }
  const loc = ['location-priority', 'location-min-interval', 'location-max-age'];
  if (loc.some((k) => k in p)) {
    if (!loc.every((k) => k in p)) {
      throw new XlsFormProblem("To include location information in the audit, 'location-priority', 'location-min-interval', and 'location-max-age' are required parameters.");
    }
    if (!['no-power', 'low-power', 'balanced', 'high-accuracy'].includes(p['location-priority'])) {
      throw new XlsFormProblem(`Parameter location-priority must be set to no-power, low-power, balanced, or high-accuracy:'${p['location-priority']}' is an invalid value`);
    }
    for (const k of ['location-min-interval', 'location-max-age']) {
      if (!/^-?\d+$/.test(p[k])) throw new XlsFormProblem(`Parameter ${k} must have an integer value.`);
      if (Number(p[k]) < 0) throw new XlsFormProblem(`Parameter ${k} must be greater than or equal to zero.`);
    }
    if (Number(p['location-max-age']) < Number(p['location-min-interval'])) {
      throw new XlsFormProblem('Parameter location-max-age must be greater than or equal to location-min-interval.');
    }
    bind['odk:location-max-age'] = p['location-max-age'];
    bind['odk:location-min-interval'] = p['location-min-interval'];
    bind['odk:location-priority'] = p['location-priority'];
  }
}

export function applyTypeParameters(
  node: FormNode,
  type: string,
  p: Record<string, string>,
  appearance: string | undefined,
  row: number,
  survey: Survey,
  warnings: string[],
): void {
  const bind = node.bind ?? (node.bind = {});
  const control = node.control ?? (node.control = {});
  switch (type) {
    case 'range':
      applyRange(node, p, appearance, row, survey);
      return;
    case 'text':
      validateParameterKeys(p, ['rows'], row);
      if ('rows' in p) {
        if (!/^-?\d+$/.test(p.rows)) throw new XlsFormProblem(`${rowPrefix(row)} Parameter rows must have an integer value.`);
        control.rows = p.rows;
      }
      return;
    case 'photo':
      if (node.default && !node.default.includes('jr://images/')) node.default = `jr://images/${node.default}`;
      validateParameterKeys(p, ['app', 'max-pixels'], row);
      if ('max-pixels' in p) {
        if (!/^-?\d+$/.test(p['max-pixels'])) throw new XlsFormProblem('Parameter max-pixels must have an integer value.');
        bind['orx:max-pixels'] = p['max-pixels'];
      } else {
        warnings.push(`${rowPrefix(row)} Use the max-pixels parameter to speed up submission sending and save storage space. Learn more: https://xlsform.org/#image`);
      }
      if ('app' in p && (appearance === undefined || appearance === 'annotate')) {
        const problem = androidPackageProblem(p.app);
        if (problem) throw new XlsFormProblem(`${rowPrefix(row)} Parameter 'app' has an invalid Android package name - ${problem}`);
        control.intent = p.app;
      }
      return;
    case 'audio':
    case 'background-audio': {
      validateParameterKeys(p, ['quality'], row);
      const allowed = type === 'audio' ? ['voice-only', 'low', 'normal', 'external'] : ['voice-only', 'low', 'normal'];
      if ('quality' in p && !allowed.includes(p.quality)) throw new XlsFormProblem('Invalid value for quality.');
      if (type === 'audio') {
        if ('quality' in p) bind['odk:quality'] = p.quality;
      } else {
        node.actions.push({ name: 'odk:recordaudio', event: 'odk-instance-load', quality: p.quality });
      }
      return;
    }
    case 'geopoint':
    case 'geoshape':
    case 'geotrace': {
      if (type === 'geopoint') {
        validateParameterKeys(p, ['allow-mock-accuracy', 'capture-accuracy', 'reference-geometry', 'warning-accuracy'], row);
        if ('capture-accuracy' in p) {
          if (!numeric(p['capture-accuracy'])) throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The 'capture-accuracy' parameter must have a numeric value.`);
          control.accuracyThreshold = p['capture-accuracy'];
        }
        if ('warning-accuracy' in p) {
          if (!numeric(p['warning-accuracy'])) throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The 'warning-accuracy' parameter must have a numeric value.`);
          control.unacceptableAccuracyThreshold = p['warning-accuracy'];
        }
      } else {
        validateParameterKeys(p, ['allow-mock-accuracy', 'incremental', 'reference-geometry'], row);
        if ('incremental' in p) {
          if (YES_NO[p.incremental] !== true) {
            throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. For geoshape and geotrace questions, the 'incremental' parameter may either be 'true' or not included.`);
          }
          control.incremental = 'true';
        }
      }
      if ('allow-mock-accuracy' in p) {
        if (!['true', 'false'].includes(p['allow-mock-accuracy'])) {
          throw new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. The 'allow-mock-accuracy' parameter must be either 'true' or 'false'.`);
        }
        bind['odk:allow-mock-accuracy'] = p['allow-mock-accuracy'];
      }
      if ('reference-geometry' in p) node.itemset = p['reference-geometry'];
      return;
    }
    case 'start-geopoint':
      node.actions.push({ name: 'odk:setgeopoint', event: 'odk-instance-first-load' });
      return;
  }
}

function applyRange(node: FormNode, p: Record<string, string>, appearance: string | undefined, row: number, survey: Survey): void {
  validateParameterKeys(p, ['end', 'placeholder', 'start', 'step', 'tick_interval', 'tick_labelset'], row);
  const problem = (name: string, what: string) => new XlsFormProblem(`${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. For the 'range' question type, the parameter '${name}' ${what}`);
  if (appearance && !appearance.includes('vertical') && !appearance.includes('no-ticks') && ['tick_interval', 'placeholder', 'tick_labelset'].some((k) => k in p)) {
    throw new XlsFormProblem(
      `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. For the 'range' question type, the parameters 'tick_interval', 'placeholder', and 'tick_labelset' are only supported for the appearances 'vertical', 'no-ticks', 'vertical no-ticks', and the default (empty) horizontal.`,
    );
  }
  for (const [k, v] of [['start', '1'], ['end', '10'], ['step', '1']]) if (!(k in p)) p[k] = v;
  const num = (name: string): number | undefined => {
    if (!(name in p)) return undefined;
    if (!numeric(p[name])) throw problem(name, 'must be a number.');
    return Number(p[name]);
  };
  const start = num('start')!;
  const end = num('end')!;
  const step = num('step')!;
  const tick = num('tick_interval');
  const placeholder = num('placeholder');
  const width = Math.abs(end - start);
  const isMultiple = (a: number, b: number) => Math.abs(a / b - Math.round(a / b)) < 1e-9;
  if (step === 0) throw problem('step', "must not be '0' (zero).");
  if (step > width) throw problem('step', "must not be larger than the range (the difference between 'start' and 'end').");
  const control = node.control!;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) out[k] = v;
  if (tick !== undefined) {
    if (tick === 0) throw problem('tick_interval', "must not be '0' (zero).");
    if (tick > width) throw problem('tick_interval', "must not be larger than the range (the difference between 'start' and 'end').");
    if (!isMultiple(tick, step)) throw problem('tick_interval', "must be a multiple of 'step'.");
    delete out.tick_interval;
    out['odk:tick-interval'] = p.tick_interval;
  }
  if (placeholder !== undefined) {
    if (!isMultiple(placeholder - start, step)) throw problem('placeholder', "must be a multiple of 'step'.");
    if (placeholder < Math.min(start, end) || placeholder > Math.max(start, end)) throw problem('placeholder', "must be between the 'start' and 'end' values, inclusive.");
    delete out.placeholder;
    out['odk:placeholder'] = p.placeholder;
  }
  const labelset = p.tick_labelset;
  if (labelset) {
    const list = survey.choices.get(labelset);
    if (!list) {
      throw new XlsFormProblem(
        `${rowPrefix(row)} On the 'survey' sheet, the 'parameters' value is invalid. For the 'range' question type, the parameter 'tick_labelset' must be a choice list name from the 'list_name' column on the choices sheet.`,
      );
    }
    const noTicksLabels = new Set<number>();
    for (const c of list.choices) {
      if (!numeric(c.name)) throw problem(labelset, 'choice values must all be numbers.');
      const v = Number(c.name);
      if (v < Math.min(start, end) || v > Math.max(start, end)) throw problem('tick_labelset', "choices must be between the 'start' and 'end' values, inclusive.");
      if (tick !== undefined ? !isMultiple(v - start, tick) : !isMultiple(v - start, step)) {
        throw problem('tick_labelset', `choices' values must be equal to the start of the range plus a multiple of '${tick !== undefined ? 'tick_interval' : 'step'}'.`);
      }
      noTicksLabels.add(v);
    }
    if (appearance?.includes('no-ticks')) {
      if (noTicksLabels.size > 2) throw problem('tick_labelset', "choice list must have only 2 items when the 'appearance' is 'no-ticks'.");
      // pyxform's wording, its missing space included.
      if (noTicksLabels.size !== new Set([start, end]).size || !noTicksLabels.has(start) || !noTicksLabels.has(end)) {
        throw problem('tick_labelset', "choice list values may onlymatch the range 'start' and 'end' values when the 'appearance' is 'no-ticks'.");
      }
    }
    delete out.tick_labelset;
    node.itemset = labelset;
  }
  if ([start, end, step, tick, placeholder].some((v) => v !== undefined && !Number.isInteger(v))) node.bind!.type = 'decimal';
  Object.assign(control, out);
  node.parameters = p;
}

/** What is wrong with an image question's `app=` Android package name, as pyxform words it; undefined when it is valid. */
function androidPackageProblem(name: string): string | undefined {
  if (!name.trim()) return 'package name is missing.';
  if (!name.includes('.')) return "the package name must have at least one '.' separator.";
  if (name.endsWith('.')) return "the package name cannot end in a '.' separator.";
  const segments = name.split('.');
  if (segments.some((x) => x === '')) return 'package segments must be of non-zero length.';
  if (segments.some((x) => x.startsWith('_'))) return "the character '_' cannot be the first character in a package name segment.";
  if (segments.some((x) => /^\p{Nd}/u.test(x))) return 'a digit cannot be the first character in a package name segment.';
  if (segments.some((x) => /[^a-zA-Z0-9._]/.test(x))) return 'the package name can only include letters (a-z, A-Z), numbers (0-9), dots (.), and underscores (_).';
  return undefined;
}
