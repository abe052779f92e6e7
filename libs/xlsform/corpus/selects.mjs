// Corpus: select types, choice lists, choice filters, files and search().

const colors = [
  ['list_name', 'name', 'label'],
  ['colors', 'red', 'Red'],
  ['colors', 'green', 'Green'],
  ['colors', 'blue', 'Blue'],
];

/** @type {import('./types').CorpusForm[]} */
export const selectForms = [
  {
    name: 'select-one',
    covers: ['select_one', 'appearance', 'choices'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'appearance'],
        ['select_one colors', 'color', 'Favourite colour', 'minimal'],
      ],
      choices: colors,
    },
    expect: {
      instance: ['/data', '/data/color', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/color': { type: 'string' } },
      body: ['select1 /data/color appearance=minimal'],
      itemsets: { '/data/color': "instance('colors')/root/item|name|label" },
      instances: { colors: ['red', 'green', 'blue'] },
      choiceLabels: { colors: ['Red', 'Green', 'Blue'] },
    },
    answers: { '/data/color': 'green' },
  },
  {
    name: 'select-multiple',
    covers: ['select_multiple', 'required'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'required'],
        ['select_multiple colors', 'colors_liked', 'Colours you like', 'yes'],
      ],
      choices: colors,
    },
    expect: {
      instance: ['/data', '/data/colors_liked', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/colors_liked': { type: 'string', required: 'true()' } },
      body: ['select /data/colors_liked'],
      itemsets: { '/data/colors_liked': "instance('colors')/root/item|name|label" },
      instances: { colors: ['red', 'green', 'blue'] },
    },
    answers: { '/data/colors_liked': ['red', 'blue'] },
  },
  {
    name: 'or-other',
    covers: ['select_one', 'or_other'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['select_one colors or_other', 'color', 'Colour'],
      ],
      choices: colors,
    },
    expect: {
      instance: ['/data', '/data/color', '/data/color_other', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/color': { type: 'string' },
        '/data/color_other': { type: 'string', relevant: "selected(../color, 'other')" },
      },
      body: ['select1 /data/color', 'input /data/color_other'],
      labels: { '/data/color_other': 'Specify other.' },
      instances: { colors: ['red', 'green', 'blue', 'other'] },
      choiceLabels: { colors: ['Red', 'Green', 'Blue', 'Other'] },
    },
    answers: { '/data/color': 'other', '/data/color_other': 'teal' },
  },
  {
    name: 'choice-filter-cascade',
    covers: ['select_one', 'choice_filter', 'choices extra columns'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'choice_filter'],
        ['select_one countries', 'country', 'Country'],
        ['select_one cities', 'city', 'City', 'country=${country}'],
      ],
      choices: [
        ['list_name', 'name', 'label', 'country'],
        ['countries', 'ke', 'Kenya'],
        ['countries', 'ug', 'Uganda'],
        ['cities', 'nbo', 'Nairobi', 'ke'],
        ['cities', 'msa', 'Mombasa', 'ke'],
        ['cities', 'kla', 'Kampala', 'ug'],
      ],
    },
    expect: {
      instance: ['/data', '/data/country', '/data/city', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/country': { type: 'string' }, '/data/city': { type: 'string' } },
      body: ['select1 /data/country', 'select1 /data/city'],
      itemsets: {
        '/data/country': "instance('countries')/root/item|name|label",
        '/data/city': "instance('cities')/root/item[country= /data/country ]|name|label",
      },
      instances: { countries: ['ke', 'ug'], cities: ['nbo', 'msa', 'kla'] },
      choiceExtra: { cities: { nbo: { country: 'ke' } } },
    },
    answers: { '/data/country': 'ke', '/data/city': 'msa' },
  },
  {
    name: 'select-one-from-file-csv',
    covers: ['select_one_from_file'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['select_one_from_file cities.csv', 'city', 'City'],
      ],
    },
    attachments: { 'cities.csv': 'name,label\nnbo,Nairobi\nmsa,Mombasa\n' },
    expect: {
      instance: ['/data', '/data/city', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/city': { type: 'string' } },
      body: ['select1 /data/city'],
      itemsets: { '/data/city': "instance('cities')/root/item|name|label" },
      instances: { cities: 'jr://file-csv/cities.csv' },
      attachments: ['cities.csv'],
    },
    answers: { '/data/city': 'msa' },
  },
  {
    name: 'select-multiple-from-file-xml',
    covers: ['select_multiple_from_file', 'parameters'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'parameters'],
        ['select_multiple_from_file crops.xml', 'crops', 'Crops grown', 'value=code label=title'],
      ],
    },
    attachments: {
      'crops.xml': '<root><item><code>mz</code><title>Maize</title></item><item><code>bn</code><title>Beans</title></item></root>',
    },
    expect: {
      instance: ['/data', '/data/crops', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/crops': { type: 'string' } },
      body: ['select /data/crops'],
      itemsets: { '/data/crops': "instance('crops')/root/item|code|title" },
      instances: { crops: 'jr://file/crops.xml' },
      attachments: ['crops.xml'],
    },
    answers: { '/data/crops': ['bn'] },
  },
  {
    name: 'rank',
    covers: ['rank'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['rank colors', 'order', 'Rank the colours'],
      ],
      choices: colors,
    },
    expect: {
      instance: ['/data', '/data/order', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/order': { type: 'odk:rank' } },
      body: ['odk:rank /data/order'],
      itemsets: { '/data/order': "instance('colors')/root/item|name|label" },
      instances: { colors: ['red', 'green', 'blue'] },
    },
  },
  {
    name: 'randomize-seed',
    covers: ['select_one', 'parameters'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'parameters', 'calculation'],
        ['calculate', 'seed', '', '', 'once(decimal-date-time(now()))'],
        ['select_one colors', 'shuffled', 'Pick one', 'randomize=true seed=${seed}'],
        ['select_one colors', 'plain_random', 'Pick another', 'randomize=true'],
      ],
      choices: colors,
    },
    expect: {
      instance: ['/data', '/data/seed', '/data/shuffled', '/data/plain_random', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/seed': { type: 'string', calculate: 'once(decimal-date-time(now()))' },
        '/data/shuffled': { type: 'string' },
        '/data/plain_random': { type: 'string' },
      },
      body: ['select1 /data/shuffled', 'select1 /data/plain_random'],
      itemsets: {
        '/data/shuffled': "randomize(instance('colors')/root/item, /data/seed)|name|label",
        '/data/plain_random': "randomize(instance('colors')/root/item)|name|label",
      },
      instances: { colors: ['red', 'green', 'blue'] },
    },
  },
  {
    name: 'search-appearance',
    covers: ['select_one', 'search()', 'appearance'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'appearance'],
        ['select_one fruits', 'fruit', 'Fruit', "search('fruits')"],
      ],
      choices: [
        ['list_name', 'name', 'label'],
        ['fruits', 'name_key', 'name'],
      ],
    },
    attachments: { 'fruits.csv': 'name_key,name\nmango,Mango\n' },
    expect: {
      instance: ['/data', '/data/fruit', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/fruit': { type: 'string' } },
      body: ["select1 /data/fruit appearance=search('fruits')"],
      items: { '/data/fruit': [['name_key', 'name']] },
      instances: {},
    },
  },
  {
    name: 'allow-choice-duplicates',
    covers: ['allow_choice_duplicates', 'select_one'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['select_one answers', 'answer', 'Answer'],
      ],
      choices: [
        ['list_name', 'name', 'label'],
        ['answers', 'yes', 'Yes'],
        ['answers', 'yes', 'Yes, certainly'],
        ['answers', 'no', 'No'],
      ],
      settings: [['allow_choice_duplicates'], ['yes']],
    },
    expect: {
      instance: ['/data', '/data/answer', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/answer': { type: 'string' } },
      body: ['select1 /data/answer'],
      instances: { answers: ['yes', 'yes', 'no'] },
    },
    answers: { '/data/answer': 'no' },
  },
  {
    name: 'choice-media-translations',
    covers: ['choices image', 'choices label::language', 'select_one'],
    sheets: {
      survey: [
        ['type', 'name', 'label::English (en)', 'label::Swahili (sw)'],
        ['select_one animals', 'animal', 'Animal', 'Mnyama'],
      ],
      choices: [
        ['list_name', 'name', 'label::English (en)', 'label::Swahili (sw)', 'image'],
        ['animals', 'cow', 'Cow', 'Ng\'ombe', 'cow.png'],
        ['animals', 'goat', 'Goat', 'Mbuzi'],
      ],
      settings: [['default_language'], ['English (en)']],
    },
    attachments: { 'cow.png': 'not-really-a-png' },
    expect: {
      instance: ['/data', '/data/animal', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/animal': { type: 'string' } },
      body: ['select1 /data/animal'],
      itemsets: { '/data/animal': "instance('animals')/root/item|name|jr:itext(itextId)" },
      instances: { animals: ['cow', 'goat'] },
      itext: {
        'English (en)': { 'animals-0': { long: 'Cow', image: 'jr://images/cow.png' }, 'animals-1': { long: 'Goat' }, '/data/animal:label': { long: 'Animal' } },
        'Swahili (sw)': { 'animals-0': { long: "Ng'ombe" }, 'animals-1': { long: 'Mbuzi' }, '/data/animal:label': { long: 'Mnyama' } },
      },
      defaultLanguage: 'English (en)',
      warnings: [
        "Language 'English (en)' is missing the choices image column.\nLanguage 'Swahili (sw)' is missing the choices image column.\nLanguage 'default' is missing the choices label column.",
      ],
    },
    answers: { '/data/animal': 'goat' },
  },
  {
    name: 'table-list',
    covers: ['table-list', 'select_one', 'appearance'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'appearance'],
        ['begin_group', 'tbl', 'Rate each', 'table-list'],
        ['select_one scale', 'food', 'Food'],
        ['select_one scale', 'service', 'Service'],
        ['end_group'],
      ],
      choices: [
        ['list_name', 'name', 'label'],
        ['scale', 'good', 'Good'],
        ['scale', 'bad', 'Bad'],
      ],
    },
    expect: {
      instance: [
        '/data', '/data/tbl', '/data/tbl/generated_table_list_label_2', '/data/tbl/reserved_name_for_field_list_labels_3', '/data/tbl/food', '/data/tbl/service',
        '/data/meta', '/data/meta/instanceID',
      ],
      binds: {
        '/data/tbl/generated_table_list_label_2': { readonly: 'true()', type: 'string' },
        '/data/tbl/reserved_name_for_field_list_labels_3': { type: 'string' },
        '/data/tbl/food': { type: 'string' },
        '/data/tbl/service': { type: 'string' },
      },
      body: [
        'group /data/tbl appearance=field-list',
        'input /data/tbl/generated_table_list_label_2',
        'select1 /data/tbl/reserved_name_for_field_list_labels_3 appearance=label',
        'select1 /data/tbl/food appearance=list-nolabel',
        'select1 /data/tbl/service appearance=list-nolabel',
      ],
      labels: { '/data/tbl/generated_table_list_label_2': 'Rate each', '/data/tbl/reserved_name_for_field_list_labels_3': '' },
      instances: { scale: ['good', 'bad'] },
    },
  },
  {
    name: 'select-one-external',
    covers: ['select_one_external', 'external_choices', 'choice_filter'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'choice_filter'],
        ['select_one regions', 'region', 'Region'],
        ['select_one_external districts', 'district', 'District', 'region=${region}'],
      ],
      choices: [
        ['list_name', 'name', 'label'],
        ['regions', 'north', 'North'],
        ['regions', 'south', 'South'],
      ],
      external_choices: [
        ['list_name', 'name', 'label', 'region'],
        ['districts', 'd1', 'District 1', 'north'],
        ['districts', 'd2', 'District 2', 'south'],
      ],
    },
    expect: {
      instance: ['/data', '/data/region', '/data/district', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/region': { type: 'string' }, '/data/district': { type: 'string' } },
      body: ['select1 /data/region', "input /data/district query=instance('districts')/root/item[region= /data/region ]"],
      instances: { regions: ['north', 'south'] },
      itemsetsCsv: '"list_name","name","label","region"\r\n"districts","d1","District 1","north"\r\n"districts","d2","District 2","south"\r\n',
    },
    answers: { '/data/region': 'north', '/data/district': 'd1' },
  },
];
