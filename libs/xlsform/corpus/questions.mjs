// Corpus: one question type family per form. Each form holds its sheets as tables (first line =
// headers) and the XForm facts pyxform produces for it (docs/xlsform.md, "Corpus").
// Binds list every bind but /data/meta/instanceID (checked for every form); body lists every
// control in document order as "tag ref attr=value..." (attributes sorted, ref/nodeset left out).

/** @type {import('./types').CorpusForm[]} */
export const questionForms = [
  {
    name: 'type-aliases',
    covers: ['type aliases', 'gps', 'phone number', 'percentage', 'uri:deviceid'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['gps', 'where', 'Where?'],
        ['phone number', 'phone', 'Phone'],
        ['percentage', 'share', 'Share'],
        ['q int', 'count', 'Count'],
        ['uri:deviceid', 'device'],
        ['start time', 'started'],
        ['get today', 'day'],
      ],
    },
    expect: {
      instance: ['/data', '/data/where', '/data/phone', '/data/share', '/data/count', '/data/device', '/data/started', '/data/day', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/where': { type: 'geopoint' },
        '/data/phone': { type: 'string', constraint: "regex(., '^\\d*$')" },
        '/data/share': { type: 'int', constraint: '0 <= . and . <= 100' },
        '/data/count': { type: 'int' },
        '/data/device': { 'jr:preload': 'property', type: 'string', 'jr:preloadParams': 'uri:deviceid' },
        '/data/started': { 'jr:preload': 'timestamp', type: 'dateTime', 'jr:preloadParams': 'start' },
        '/data/day': { 'jr:preload': 'date', type: 'date', 'jr:preloadParams': 'today' },
      },
      body: ['input /data/where', 'input /data/phone', 'input /data/share', 'input /data/count'],
      labels: { '/data/where': 'Where?', '/data/phone': 'Phone', '/data/share': 'Share', '/data/count': 'Count' },
      hints: { '/data/phone': 'Enter numbers only.' },
      instances: {},
    },
    answers: { '/data/phone': '0123456', '/data/share': 40, '/data/count': 3 },
  },
  {
    name: 'text-basic',
    covers: ['text', 'label', 'hint'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'hint'],
        ['text', 'first_name', 'First name', 'As on your ID card'],
        ['text', 'nickname', 'Nickname'],
      ],
    },
    expect: {
      formId: 'data',
      title: 'data',
      instance: ['/data', '/data/first_name', '/data/nickname', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/first_name': { type: 'string' }, '/data/nickname': { type: 'string' } },
      body: ['input /data/first_name', 'input /data/nickname'],
      labels: { '/data/first_name': 'First name', '/data/nickname': 'Nickname' },
      hints: { '/data/first_name': 'As on your ID card' },
      instances: {},
    },
    answers: { '/data/first_name': 'Ada', '/data/nickname': 'A' },
  },
  {
    name: 'numbers-constraint',
    covers: ['integer', 'decimal', 'constraint', 'constraint_message'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'constraint', 'constraint_message'],
        ['integer', 'age', 'Age', '. >= 0 and . < 130', 'Age must be between 0 and 129'],
        ['decimal', 'weight', 'Weight (kg)', '. > 0'],
      ],
    },
    expect: {
      instance: ['/data', '/data/age', '/data/weight', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/age': { type: 'int', constraint: '. >= 0 and . < 130', 'jr:constraintMsg': 'Age must be between 0 and 129' },
        '/data/weight': { type: 'decimal', constraint: '. > 0' },
      },
      body: ['input /data/age', 'input /data/weight'],
      instances: {},
    },
    answers: { '/data/age': 42, '/data/weight': 70.5 },
  },
  {
    name: 'required-messages',
    covers: ['required', 'required_message'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'required', 'required_message'],
        ['text', 'a', 'A', 'yes', 'Please answer A'],
        ['text', 'b', 'B', 'TRUE'],
        ['text', 'c', 'C', 'no'],
        ['text', 'd', 'D', '${a} = \'x\''],
      ],
    },
    expect: {
      instance: ['/data', '/data/a', '/data/b', '/data/c', '/data/d', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/a': { type: 'string', required: 'true()', 'jr:requiredMsg': 'Please answer A' },
        '/data/b': { type: 'string', required: 'true()' },
        '/data/c': { type: 'string', required: 'false()' },
        '/data/d': { type: 'string', required: " /data/a  = 'x'" },
      },
      body: ['input /data/a', 'input /data/b', 'input /data/c', 'input /data/d'],
      instances: {},
    },
    answers: { '/data/a': 'x', '/data/b': 'y', '/data/d': 'z' },
  },
  {
    name: 'relevant-calculation',
    covers: ['relevant', 'calculation', 'calculate', '${ref}'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'relevant', 'calculation'],
        ['integer', 'children', 'How many children?'],
        ['text', 'eldest', 'Name of the eldest', '${children} > 0'],
        ['calculate', 'double', '', '', '${children} * 2'],
        ['note', 'show', 'Twice: ${double}'],
      ],
    },
    expect: {
      instance: ['/data', '/data/children', '/data/eldest', '/data/double', '/data/show', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/children': { type: 'int' },
        '/data/eldest': { type: 'string', relevant: ' /data/children  > 0' },
        '/data/double': { type: 'string', calculate: ' /data/children  * 2' },
        '/data/show': { readonly: 'true()', type: 'string' },
      },
      body: ['input /data/children', 'input /data/eldest', 'input /data/show'],
      labels: { '/data/show': 'Twice: <output value=" /data/double "/>' },
      instances: {},
    },
    answers: { '/data/children': 2, '/data/eldest': 'Bo' },
  },
  {
    name: 'hidden-default',
    covers: ['hidden', 'default', 'calculate'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'default', 'calculation'],
        ['hidden', 'source', '', 'web'],
        ['text', 'city', 'City', 'Nairobi'],
        ['calculate', 'shout', '', '', 'concat(${city}, "!")'],
      ],
    },
    expect: {
      instance: ['/data', '/data/source', '/data/city', '/data/shout', '/data/meta', '/data/meta/instanceID'],
      instanceValues: { '/data/source': 'web', '/data/city': 'Nairobi' },
      binds: {
        '/data/source': { type: 'string' },
        '/data/city': { type: 'string' },
        '/data/shout': { type: 'string', calculate: 'concat( /data/city , "!")' },
      },
      body: ['input /data/city'],
      instances: {},
    },
  },
  {
    name: 'dates-times',
    covers: ['date', 'time', 'dateTime', 'default'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'default', 'appearance'],
        ['date', 'visit', 'Visit date', '2024-01-31'],
        ['time', 'at', 'Time'],
        ['dateTime', 'when', 'Date and time'],
        ['date', 'month', 'Month', '', 'month-year'],
      ],
    },
    expect: {
      instance: ['/data', '/data/visit', '/data/at', '/data/when', '/data/month', '/data/meta', '/data/meta/instanceID'],
      instanceValues: { '/data/visit': '2024-01-31' },
      binds: {
        '/data/visit': { type: 'date' },
        '/data/at': { type: 'time' },
        '/data/when': { type: 'dateTime' },
        '/data/month': { type: 'date' },
      },
      body: ['input /data/visit', 'input /data/at', 'input /data/when', 'input /data/month appearance=month-year'],
      instances: {},
    },
    answers: { '/data/at': '10:30:00.000+00:00' },
  },
  {
    name: 'metadata',
    covers: ['start', 'end', 'today', 'deviceid', 'username'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['start', 'started'],
        ['end', 'ended'],
        ['today', 'day'],
        ['deviceid', 'device'],
        ['username', 'user'],
        ['text', 'q', 'Question'],
      ],
    },
    expect: {
      instance: ['/data', '/data/started', '/data/ended', '/data/day', '/data/device', '/data/user', '/data/q', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/started': { 'jr:preload': 'timestamp', type: 'dateTime', 'jr:preloadParams': 'start' },
        '/data/ended': { 'jr:preload': 'timestamp', type: 'dateTime', 'jr:preloadParams': 'end' },
        '/data/day': { 'jr:preload': 'date', type: 'date', 'jr:preloadParams': 'today' },
        '/data/device': { 'jr:preload': 'property', type: 'string', 'jr:preloadParams': 'deviceid' },
        '/data/user': { 'jr:preload': 'property', type: 'string', 'jr:preloadParams': 'username' },
        '/data/q': { type: 'string' },
      },
      body: ['input /data/q'],
      instances: {},
    },
  },
  {
    name: 'audit',
    covers: ['audit', 'parameters'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'parameters'],
        ['audit', '', '', 'location-priority=balanced location-min-interval=60 location-max-age=300 track-changes=true'],
        ['text', 'q', 'Question'],
      ],
    },
    expect: {
      instance: ['/data', '/data/q', '/data/meta', '/data/meta/audit', '/data/meta/instanceID'],
      binds: {
        '/data/q': { type: 'string' },
        '/data/meta/audit': {
          type: 'binary', 'odk:track-changes': 'true', 'odk:location-max-age': '300', 'odk:location-min-interval': '60', 'odk:location-priority': 'balanced',
        },
      },
      body: ['input /data/q'],
      instances: {},
    },
  },
  {
    name: 'geo',
    covers: ['geopoint', 'geotrace', 'geoshape', 'parameters'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'parameters', 'appearance'],
        ['geopoint', 'point', 'Where?', 'capture-accuracy=5 warning-accuracy=20', 'maps'],
        ['geotrace', 'trace', 'Path', 'allow-mock-accuracy=true'],
        ['geoshape', 'shape', 'Field', 'incremental=true'],
      ],
    },
    expect: {
      instance: ['/data', '/data/point', '/data/trace', '/data/shape', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/point': { type: 'geopoint' },
        '/data/trace': { type: 'geotrace', 'odk:allow-mock-accuracy': 'true' },
        '/data/shape': { type: 'geoshape' },
      },
      body: [
        'input /data/point accuracyThreshold=5 appearance=maps unacceptableAccuracyThreshold=20',
        'input /data/trace',
        'input /data/shape incremental=true',
      ],
      instances: {},
    },
    answers: { '/data/point': '-1.28 36.82 1700.0 5.0' },
  },
  {
    name: 'media-questions',
    covers: ['image', 'audio', 'video', 'file', 'parameters'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'parameters', 'appearance'],
        ['image', 'photo', 'Photo', 'max-pixels=1024', 'annotate'],
        ['audio', 'voice', 'Voice', 'quality=voice-only'],
        ['video', 'clip', 'Clip'],
        ['file', 'doc', 'Document'],
      ],
    },
    expect: {
      instance: ['/data', '/data/photo', '/data/voice', '/data/clip', '/data/doc', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/photo': { type: 'binary', 'orx:max-pixels': '1024' },
        '/data/voice': { type: 'binary', 'odk:quality': 'voice-only' },
        '/data/clip': { type: 'binary' },
        '/data/doc': { type: 'binary' },
      },
      body: [
        'upload /data/photo appearance=annotate mediatype=image/*',
        'upload /data/voice mediatype=audio/*',
        'upload /data/clip mediatype=video/*',
        'upload /data/doc mediatype=application/*',
      ],
      instances: {},
    },
  },
  {
    name: 'barcode-acknowledge-note',
    covers: ['barcode', 'acknowledge', 'trigger (type)', 'note', 'read_only'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'read_only'],
        ['barcode', 'code', 'Scan the code'],
        ['acknowledge', 'ok', 'I agree'],
        ['trigger', 'tap', 'Tap when ready'],
        ['note', 'intro', 'Code: ${code}'],
        ['text', 'fixed', 'Fixed text', 'yes'],
      ],
    },
    expect: {
      instance: ['/data', '/data/code', '/data/ok', '/data/tap', '/data/intro', '/data/fixed', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/code': { type: 'barcode' },
        '/data/ok': { type: 'string' },
        '/data/intro': { readonly: 'true()', type: 'string' },
        '/data/fixed': { type: 'string', readonly: 'true()' },
      },
      body: ['input /data/code', 'trigger /data/ok', 'trigger /data/tap', 'input /data/intro', 'input /data/fixed'],
      labels: { '/data/intro': 'Code: <output value=" /data/code "/>' },
      instances: {},
    },
    answers: { '/data/code': 'ABC-1', '/data/ok': true },
  },
  {
    name: 'range',
    covers: ['range', 'parameters', 'appearance'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'parameters', 'appearance'],
        ['range', 'score', 'Score', 'start=0 end=10 step=1'],
        ['range', 'temp', 'Temperature', 'start=35.5 end=42 step=0.5', 'vertical'],
        ['range', 'plain', 'Default range'],
      ],
    },
    expect: {
      instance: ['/data', '/data/score', '/data/temp', '/data/plain', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/score': { type: 'int' },
        '/data/temp': { type: 'decimal' },
        '/data/plain': { type: 'int' },
      },
      body: ['range /data/score end=10 start=0 step=1', 'range /data/temp appearance=vertical end=42 start=35.5 step=0.5', 'range /data/plain end=10 start=1 step=1'],
      instances: {},
    },
    answers: { '/data/score': 7 },
  },
  {
    name: 'text-parameters',
    covers: ['text', 'parameters', 'appearance'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'parameters', 'appearance'],
        ['text', 'story', 'Tell us', 'rows=5', 'multiline'],
        ['integer', 'phone', 'Phone', '', 'numbers'],
      ],
    },
    expect: {
      instance: ['/data', '/data/story', '/data/phone', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/story': { type: 'string' }, '/data/phone': { type: 'int' } },
      body: ['input /data/story appearance=multiline rows=5', 'input /data/phone appearance=numbers'],
      instances: {},
    },
  },
  {
    name: 'background-audio',
    covers: ['background-audio', 'parameters'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'parameters'],
        ['background-audio', 'recording', '', 'quality=low'],
        ['text', 'q', 'Question'],
      ],
    },
    expect: {
      instance: ['/data', '/data/recording', '/data/q', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/recording': { type: 'binary' }, '/data/q': { type: 'string' } },
      modelActions: ['odk:recordaudio /data/recording event=odk-instance-load odk:quality=low'],
      body: ['input /data/q'],
      instances: {},
    },
  },
  {
    name: 'trigger-calculation',
    covers: ['trigger (column)', 'calculation'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'calculation', 'trigger'],
        ['integer', 'weight', 'Weight'],
        ['dateTime', 'weighed_at', '', 'now()', '${weight}'],
        ['text', 'note_of', 'Note', 'concat("w=", ${weight})', '${weight}'],
      ],
    },
    expect: {
      instance: ['/data', '/data/weight', '/data/weighed_at', '/data/note_of', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/weight': { type: 'int' }, '/data/weighed_at': { type: 'dateTime' }, '/data/note_of': { type: 'string' } },
      body: [
        'input /data/weight',
        'setvalue /data/weighed_at event=xforms-value-changed value=now()',
        'setvalue /data/note_of event=xforms-value-changed value=concat("w=",  /data/weight )',
        'input /data/note_of',
      ],
      instances: {},
    },
    answers: { '/data/weight': 12 },
  },
];
