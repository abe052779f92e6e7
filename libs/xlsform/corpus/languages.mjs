// Corpus: translations (itext), guidance hints, media columns, translated messages.

/** @type {import('./types').CorpusForm[]} */
export const languageForms = [
  {
    name: 'translations-default-language',
    covers: ['label::language', 'hint::language', 'default_language'],
    sheets: {
      survey: [
        ['type', 'name', 'label::English (en)', 'label::French (fr)', 'hint::English (en)', 'hint::French (fr)'],
        ['text', 'name', 'Name', 'Nom', 'Full name', 'Nom complet'],
        ['integer', 'age', 'Age', 'Âge'],
      ],
      settings: [['default_language'], ['English (en)']],
    },
    expect: {
      instance: ['/data', '/data/name', '/data/age', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/name': { type: 'string' }, '/data/age': { type: 'int' } },
      body: ['input /data/name', 'input /data/age'],
      labels: { '/data/name': 'itext:/data/name:label', '/data/age': 'itext:/data/age:label' },
      hints: { '/data/name': 'itext:/data/name:hint' },
      itext: {
        'English (en)': { '/data/name:label': { long: 'Name' }, '/data/name:hint': { long: 'Full name' }, '/data/age:label': { long: 'Age' } },
        'French (fr)': { '/data/name:label': { long: 'Nom' }, '/data/name:hint': { long: 'Nom complet' }, '/data/age:label': { long: 'Âge' } },
      },
      defaultLanguage: 'English (en)',
      instances: {},
    },
    answers: { '/data/name': 'Zoé', '/data/age': 3 },
  },
  {
    name: 'translations-mixed-default',
    covers: ['label', 'label::language'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'label::Spanish (es)'],
        ['text', 'q', 'Question', 'Pregunta'],
        ['text', 'only_default', 'Only default'],
      ],
    },
    expect: {
      instance: ['/data', '/data/q', '/data/only_default', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/q': { type: 'string' }, '/data/only_default': { type: 'string' } },
      body: ['input /data/q', 'input /data/only_default'],
      labels: { '/data/q': 'itext:/data/q:label', '/data/only_default': 'Only default' },
      itext: {
        default: { '/data/q:label': { long: 'Question' } },
        'Spanish (es)': { '/data/q:label': { long: 'Pregunta' } },
      },
      defaultLanguage: 'default',
      warnings: [],
      instances: {},
    },
  },
  {
    name: 'guidance-hint',
    covers: ['guidance_hint', 'hint'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'hint', 'guidance_hint'],
        ['text', 'q', 'Question', 'Short hint', 'Longer guidance for the enumerator'],
      ],
    },
    expect: {
      instance: ['/data', '/data/q', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/q': { type: 'string' } },
      body: ['input /data/q'],
      labels: { '/data/q': 'Question' },
      hints: { '/data/q': 'itext:/data/q:hint' },
      itext: { default: { '/data/q:hint': { long: 'Short hint', guidance: 'Longer guidance for the enumerator' } } },
      instances: {},
    },
  },
  {
    name: 'guidance-hint-translated',
    covers: ['guidance_hint::language', 'hint::language'],
    sheets: {
      survey: [
        ['type', 'name', 'label::English (en)', 'label::Hindi (hi)', 'guidance_hint::English (en)', 'guidance_hint::Hindi (hi)'],
        ['integer', 'n', 'Count', 'गिनती', 'Count every person', 'हर व्यक्ति को गिनें'],
      ],
    },
    expect: {
      instance: ['/data', '/data/n', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/n': { type: 'int' } },
      body: ['input /data/n'],
      labels: { '/data/n': 'itext:/data/n:label' },
      hints: { '/data/n': 'itext:/data/n:hint' },
      itext: {
        'English (en)': { '/data/n:label': { long: 'Count' }, '/data/n:hint': { guidance: 'Count every person' } },
        'Hindi (hi)': { '/data/n:label': { long: 'गिनती' }, '/data/n:hint': { guidance: 'हर व्यक्ति को गिनें' } },
      },
      instances: {},
    },
  },
  {
    name: 'media-columns',
    covers: ['image', 'big-image', 'audio', 'video', 'media columns'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'image', 'big-image', 'audio', 'video'],
        ['note', 'intro', 'Welcome', 'logo.png', 'logo-large.png', 'hello.mp3', 'intro.mp4'],
        ['text', 'q', '', 'question.png'],
      ],
    },
    attachments: { 'logo.png': 'x', 'logo-large.png': 'x', 'hello.mp3': 'x', 'intro.mp4': 'x', 'question.png': 'x' },
    expect: {
      instance: ['/data', '/data/intro', '/data/q', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/intro': { readonly: 'true()', type: 'string' }, '/data/q': { type: 'string' } },
      body: ['input /data/intro', 'input /data/q'],
      labels: { '/data/intro': 'itext:/data/intro:label', '/data/q': 'itext:/data/q:label' },
      itext: {
        default: {
          '/data/intro:label': {
            long: 'Welcome', image: 'jr://images/logo.png', 'big-image': 'jr://images/logo-large.png', audio: 'jr://audio/hello.mp3', video: 'jr://video/intro.mp4',
          },
          '/data/q:label': { image: 'jr://images/question.png' },
        },
      },
      instances: {},
    },
  },
  {
    name: 'media-translated',
    covers: ['image::language', 'audio::language'],
    sheets: {
      survey: [
        ['type', 'name', 'label::English (en)', 'label::Luganda (lg)', 'image::English (en)', 'image::Luganda (lg)', 'audio::Luganda (lg)'],
        ['note', 'pic', 'Picture', 'Ekifaananyi', 'pic-en.png', 'pic-lg.png', 'pic-lg.mp3'],
      ],
    },
    expect: {
      instance: ['/data', '/data/pic', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/pic': { readonly: 'true()', type: 'string' } },
      body: ['input /data/pic'],
      itext: {
        'English (en)': { '/data/pic:label': { long: 'Picture', image: 'jr://images/pic-en.png' } },
        'Luganda (lg)': { '/data/pic:label': { long: 'Ekifaananyi', image: 'jr://images/pic-lg.png', audio: 'jr://audio/pic-lg.mp3' } },
      },
      warnings: ["Language 'English (en)' is missing the survey audio column."],
      instances: {},
    },
  },
  {
    name: 'messages-translated',
    covers: ['constraint_message::language', 'required_message::language', 'constraint', 'required'],
    sheets: {
      survey: [
        ['type', 'name', 'label::English (en)', 'label::French (fr)', 'constraint', 'constraint_message::English (en)', 'constraint_message::French (fr)', 'required', 'required_message::English (en)', 'required_message::French (fr)'],
        ['integer', 'kids', 'Children', 'Enfants', '. < 20', 'Too many', 'Trop', 'yes', 'Required', 'Obligatoire'],
      ],
    },
    expect: {
      instance: ['/data', '/data/kids', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/kids': {
          type: 'int', constraint: '. < 20', 'jr:constraintMsg': "jr:itext('/data/kids:jr:constraintMsg')", required: 'true()', 'jr:requiredMsg': "jr:itext('/data/kids:jr:requiredMsg')",
        },
      },
      body: ['input /data/kids'],
      itext: {
        'English (en)': { '/data/kids:jr:constraintMsg': { long: 'Too many' }, '/data/kids:jr:requiredMsg': { long: 'Required' }, '/data/kids:label': { long: 'Children' } },
        'French (fr)': { '/data/kids:jr:constraintMsg': { long: 'Trop' }, '/data/kids:jr:requiredMsg': { long: 'Obligatoire' }, '/data/kids:label': { long: 'Enfants' } },
      },
      instances: {},
    },
    answers: { '/data/kids': 2 },
  },
  {
    name: 'dynamic-choice-labels',
    covers: ['choices label ${ref}', 'select_one'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['text', 'pet', 'Pet name'],
        ['select_one who', 'who', 'Who is it?'],
      ],
      choices: [
        ['list_name', 'name', 'label'],
        ['who', 'me', 'Me'],
        ['who', 'pet', '${pet}'],
      ],
    },
    expect: {
      instance: ['/data', '/data/pet', '/data/who', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/pet': { type: 'string' }, '/data/who': { type: 'string' } },
      body: ['input /data/pet', 'select1 /data/who'],
      itemsets: { '/data/who': "instance('who')/root/item|name|jr:itext(itextId)" },
      itext: { default: { 'who-0': { long: 'Me' }, 'who-1': { long: '<output value=" /data/pet "/>' } } },
      instances: { who: ['me', 'pet'] },
    },
    answers: { '/data/pet': 'Rex', '/data/who': 'pet' },
  },
];
