// The question types of the XLSForm specification that ODK Collect supports, with the bind
// and body control pyxform gives each one (its question type dictionary), and the aliases
// of types and columns the spreadsheet may use.

export interface QuestionTypeDef {
  /** Body control element; absent for types with no control (calculate, hidden, metadata). */
  control?: { tag: string; mediatype?: string };
  bind?: Record<string, string>;
  /** A hint the question gets when its row has none. */
  hint?: string;
}

const input = (type: string): QuestionTypeDef => ({ control: { tag: 'input' }, bind: { type } });
const upload = (mediatype: string): QuestionTypeDef => ({ control: { tag: 'upload', mediatype }, bind: { type: 'binary' } });
const property = (param: string): QuestionTypeDef => ({ bind: { 'jr:preload': 'property', type: 'string', 'jr:preloadParams': param } });
const timestamp = (param: string): QuestionTypeDef => ({ bind: { 'jr:preload': 'timestamp', type: 'dateTime', 'jr:preloadParams': param } });

export const QUESTION_TYPES: Readonly<Record<string, QuestionTypeDef>> = {
  text: input('string'),
  string: input('string'),
  integer: input('int'),
  int: input('int'),
  decimal: input('decimal'),
  date: input('date'),
  time: input('time'),
  dateTime: input('dateTime'),
  datetime: input('dateTime'),
  geopoint: input('geopoint'),
  geotrace: input('geotrace'),
  geoshape: input('geoshape'),
  barcode: input('barcode'),
  range: { control: { tag: 'range' }, bind: { type: 'int' } },
  photo: upload('image/*'),
  audio: upload('audio/*'),
  video: upload('video/*'),
  file: upload('application/*'),
  acknowledge: { control: { tag: 'trigger' }, bind: { type: 'string' } },
  trigger: { control: { tag: 'trigger' } },
  note: { control: { tag: 'input' }, bind: { readonly: 'true()', type: 'string' } },
  calculate: { bind: { type: 'string' } },
  hidden: { bind: { type: 'string' } },
  start: timestamp('start'),
  end: timestamp('end'),
  today: { bind: { 'jr:preload': 'date', type: 'date', 'jr:preloadParams': 'today' } },
  deviceid: property('deviceid'),
  username: property('username'),
  email: property('email'),
  phonenumber: property('phonenumber'),
  simserial: property('simserial'),
  subscriberid: property('subscriberid'),
  audit: { bind: { type: 'binary' } },
  'background-audio': { control: { tag: 'action' }, bind: { type: 'binary' } },
  'start-geopoint': { control: { tag: 'action' }, bind: { type: 'geopoint' } },
  'background-geopoint': { control: { tag: 'trigger' }, bind: { type: 'geopoint' } },
  'select one': { control: { tag: 'select1' }, bind: { type: 'string' } },
  'select all that apply': { control: { tag: 'select' }, bind: { type: 'string' } },
  'select one external': { control: { tag: 'input' }, bind: { type: 'string' } },
  rank: { control: { tag: 'odk:rank' }, bind: { type: 'odk:rank' } },
  'xml-external': {},
  'csv-external': {},
  // Types of pyxform's table with a check or a hint of their own.
  percentage: { control: { tag: 'input' }, bind: { type: 'int', constraint: '0 <= . and . <= 100' } },
  'phone number': { control: { tag: 'input' }, bind: { type: 'string', constraint: "regex(., '^\\d*$')" }, hint: 'Enter numbers only.' },
  'number of days in last month': { control: { tag: 'input' }, bind: { type: 'int', constraint: '0 <= . and . <= 31' }, hint: 'Enter a number 0-31.' },
  'number of days in last six months': { control: { tag: 'input' }, bind: { type: 'int', constraint: '0 <= . and . <= 183' }, hint: 'Enter a number 0-183.' },
  'number of days in last year': { control: { tag: 'input' }, bind: { type: 'int', constraint: '0 <= . and . <= 365' }, hint: 'Enter a number 0-365.' },
  'uri:deviceid': property('uri:deviceid'),
  'uri:email': property('uri:email'),
  'uri:phonenumber': property('uri:phonenumber'),
  'uri:simserial': property('uri:simserial'),
  'uri:subscriberid': property('uri:subscriberid'),
  'uri:username': property('uri:username'),
  osm: { control: { tag: 'upload', mediatype: 'osm/*' }, bind: { type: 'binary' } },
};

/** Spellings of a type that mean another type (pyxform's `_type_alias_map`). */
export const TYPE_ALIASES: Readonly<Record<string, string>> = {
  imei: 'deviceid',
  image: 'photo',
  'add image prompt': 'photo',
  'add photo prompt': 'photo',
  'add audio prompt': 'audio',
  'add video prompt': 'video',
  'add file prompt': 'file',
  // The other names of pyxform's type table whose bind and control equal those of a type above.
  'add acknowledge prompt': 'acknowledge',
  'add barcode prompt': 'barcode',
  'add calculate prompt': 'calculate',
  'add date prompt': 'date',
  'add date time prompt': 'dateTime',
  'add dateTime prompt': 'dateTime',
  'add decimal prompt': 'decimal',
  'add integer prompt': 'integer',
  'add location prompt': 'geopoint',
  'add note prompt': 'note',
  'add text prompt': 'text',
  'date time': 'dateTime',
  'device id': 'deviceid',
  'end time': 'end',
  'get device id': 'deviceid',
  'get end time': 'end',
  'get phone number': 'phonenumber',
  'get sim id': 'simserial',
  'get start time': 'start',
  'get subscriber id': 'subscriberid',
  'get today': 'today',
  'gps': 'geopoint',
  'location': 'geopoint',
  'q acknowledge': 'acknowledge',
  'q audio': 'audio',
  'q barcode': 'barcode',
  'q calculate': 'calculate',
  'q date': 'date',
  'q date time': 'dateTime',
  'q dateTime': 'dateTime',
  'q decimal': 'decimal',
  'q geopoint': 'geopoint',
  'q geoshape': 'geoshape',
  'q geotrace': 'geotrace',
  'q image': 'photo',
  'q int': 'integer',
  'q location': 'geopoint',
  'q note': 'note',
  'q picture': 'photo',
  'q string': 'text',
  'q video': 'video',
  'sim id': 'simserial',
  'start time': 'start',
  'subscriber id': 'subscriberid',
};

export const SELECT_FROM_FILE: Readonly<Record<string, string>> = {
  select_one_from_file: 'select one',
  select_multiple_from_file: 'select all that apply',
  'select one from file': 'select one',
  'select multiple from file': 'select all that apply',
};

export const SELECT_COMMANDS: Readonly<Record<string, string>> = {
  'add select one prompt using': 'select one',
  'add select multiple prompt using': 'select all that apply',
  'select all that apply from': 'select all that apply',
  'select one from': 'select one',
  select1: 'select one',
  select_one: 'select one',
  'select one': 'select one',
  select_multiple: 'select all that apply',
  'select all that apply': 'select all that apply',
  select_one_external: 'select one external',
  ...SELECT_FROM_FILE,
  rank: 'rank',
};

export const CONTROL_TYPES: Readonly<Record<string, 'group' | 'repeat' | 'loop'>> = {
  group: 'group',
  loop: 'loop',
  lgroup: 'repeat',
  repeat: 'repeat',
  'looped group': 'repeat',
};

/** Types whose value a settings row on the survey sheet sets (pyxform's settings_header). */
export const SETTINGS_ALIASES: Readonly<Record<string, string>> = {
  form_title: 'title',
  set_form_title: 'title',
  form_id: 'id_string',
  set_form_id: 'id_string',
  prefix: 'prefix',
};

/** Survey sheet columns that mean a key inside `bind`, `control` or `media`. */
export const SURVEY_HEADER_ALIASES: Readonly<Record<string, string | readonly string[]>> = {
  read_only: ['bind', 'readonly'],
  readonly: ['bind', 'readonly'],
  relevant: ['bind', 'relevant'],
  relevance: ['bind', 'relevant'],
  caption: 'label',
  appearance: ['control', 'appearance'],
  required: ['bind', 'required'],
  constraint: ['bind', 'constraint'],
  constraining_message: ['bind', 'jr:constraintMsg'],
  constraint_message: ['bind', 'jr:constraintMsg'],
  calculation: ['bind', 'calculate'],
  calculate: ['bind', 'calculate'],
  command: 'type',
  tag: 'name',
  value: 'name',
  image: ['media', 'image'],
  'big-image': ['media', 'big-image'],
  audio: ['media', 'audio'],
  video: ['media', 'video'],
  count: ['control', 'jr:count'],
  repeat_count: ['control', 'jr:count'],
  'jr:count': ['control', 'jr:count'],
  autoplay: ['control', 'autoplay'],
  rows: ['control', 'rows'],
  noapperrorstring: ['bind', 'jr:noAppErrorString'],
  no_app_error_string: ['bind', 'jr:noAppErrorString'],
  requiredmsg: ['bind', 'jr:requiredMsg'],
  required_message: ['bind', 'jr:requiredMsg'],
  body: 'control',
  save_to: ['bind', 'entities:saveto'],
  compact_tag: ['instance', 'odk:tag'],
};

export const SURVEY_COLUMNS: ReadonlySet<string> = new Set([
  'name', 'label', 'hint', 'guidance_hint', 'type', 'bind', 'control', 'media', 'default', 'trigger',
  'choice_filter', 'parameters', 'instance', 'query', 'itemset', 'list_name', 'choices',
]);

export const CHOICES_HEADER_ALIASES: Readonly<Record<string, string | readonly string[]>> = {
  caption: 'label',
  list_name: 'list name',
  value: 'name',
  image: ['media', 'image'],
  'big-image': ['media', 'big-image'],
  audio: ['media', 'audio'],
  video: ['media', 'video'],
};

export const CHOICES_COLUMNS: ReadonlySet<string> = new Set(['name', 'label', 'media', 'sms_option']);

export const SETTINGS_HEADER_ALIASES: Readonly<Record<string, string | readonly string[]>> = SETTINGS_ALIASES;

export const SETTINGS_COLUMNS: ReadonlySet<string> = new Set([
  'title', 'id_string', 'version', 'default_language', 'instance_name', 'public_key', 'submission_url',
  'allow_choice_duplicates', 'style', 'name', 'namespaces', 'omit_instanceID', 'instance_id', 'clean_text_values',
  'auto_send', 'auto_delete', 'attribute', 'instance_xmlns',
]);

/** Cell values the bind attributes readonly/required/relevant/constraint/calculate turn into XPath booleans. */
export const BINDING_CONVERSIONS: Readonly<Record<string, string>> = {
  yes: 'true()', Yes: 'true()', YES: 'true()', true: 'true()', True: 'true()', TRUE: 'true()',
  no: 'false()', No: 'false()', NO: 'false()', false: 'false()', False: 'false()', FALSE: 'false()',
};

export const YES_NO: Readonly<Record<string, boolean>> = {
  yes: true, Yes: true, YES: true, true: true, True: true, TRUE: true, 'true()': true,
  no: false, No: false, NO: false, false: false, False: false, FALSE: false, 'false()': false,
};

export const CONVERTIBLE_BIND_ATTRIBUTES: ReadonlySet<string> = new Set(['readonly', 'required', 'relevant', 'constraint', 'calculate']);
export const SUPPORTED_MEDIA = new Set(['image', 'big-image', 'audio', 'video']);
export const EXTERNAL_FILE_EXTENSIONS = new Set(['.xml', '.csv', '.geojson']);
