// Corpus: secondary instances from files (pulldata, xml-external, csv-external), selects from
// a repeat, and the settings sheet. Each form is written out whole, its expected XForm beside
// its sheets, so that one case reads on its own: the entries share their shape on purpose.

/** @type {import('./types').CorpusForm[]} */
export const externalForms = [
  {
    name: 'pulldata',
    covers: ['pulldata()', 'calculation', 'note'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'calculation'],
        ['text', 'code', 'Product code'],
        ['calculate', 'price', '', "pulldata('prices', 'price', 'code', ${code})"],
        ['note', 'show', 'Price: ${price}'],
      ],
    },
    attachments: { 'prices.csv': 'code,price\nA1,10\nB2,20\n' },
    expect: {
      instance: ['/data', '/data/code', '/data/price', '/data/show', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/code': { type: 'string' },
        '/data/price': { type: 'string', calculate: "pulldata('prices', 'price', 'code',  /data/code )" },
        '/data/show': { readonly: 'true()', type: 'string' },
      },
      body: ['input /data/code', 'input /data/show'],
      instances: { prices: 'jr://file-csv/prices.csv' },
      attachments: ['prices.csv'],
    },
    answers: { '/data/code': 'B2' },
    submission: { '/data/price': '20' },
  },
  {
    name: 'xml-csv-external',
    covers: ['xml-external', 'csv-external', 'calculation'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'calculation'],
        ['xml-external', 'regions'],
        ['csv-external', 'households'],
        ['integer', 'hh', 'Household number'],
        ['calculate', 'region_name', '', "instance('regions')/root/item[id = 1]/name"],
        ['calculate', 'head', '', "instance('households')/root/item[num = ${hh}]/head"],
      ],
    },
    attachments: {
      'regions.xml': '<root><item><id>1</id><name>North</name></item></root>',
      'households.csv': 'num,head\n7,Ann\n',
    },
    expect: {
      instance: ['/data', '/data/hh', '/data/region_name', '/data/head', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/hh': { type: 'int' },
        '/data/region_name': { type: 'string', calculate: "instance('regions')/root/item[id = 1]/name" },
        '/data/head': { type: 'string', calculate: "instance('households')/root/item[num =  /data/hh ]/head" },
      },
      body: ['input /data/hh'],
      instances: { regions: 'jr://file/regions.xml', households: 'jr://file-csv/households.csv' },
      attachments: ['regions.xml', 'households.csv'],
    },
    answers: { '/data/hh': 7 },
    submission: { '/data/region_name': 'North', '/data/head': 'Ann' },
  },
  {
    name: 'select-from-repeat',
    covers: ['select_one ${ref}', 'begin_repeat'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['begin_repeat', 'member', 'Member'],
        ['text', 'member_name', 'Name'],
        ['end_repeat'],
        ['select_one ${member_name}', 'head', 'Who is the head?'],
      ],
    },
    expect: {
      instance: ['/data', '/data/member', '/data/member/member_name', '/data/head', '/data/meta', '/data/meta/instanceID'],
      templates: ['/data/member'],
      binds: { '/data/member/member_name': { type: 'string' }, '/data/head': { type: 'string' } },
      body: ['group /data/member', 'repeat /data/member', 'input /data/member/member_name', 'select1 /data/head'],
      itemsets: { '/data/head': "/data/member[./member_name != '']|member_name|member_name" },
      instances: {},
    },
  },
  {
    name: 'settings-all',
    covers: ['form_id', 'form_title', 'version', 'instance_name', 'submission_url', 'public_key', 'style'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['text', 'respondent', 'Respondent'],
      ],
      settings: [
        ['form_title', 'form_id', 'version', 'instance_name', 'submission_url', 'public_key', 'style'],
        ['Household survey', 'hh_survey', '2024031501', 'concat(${respondent}, "-", today())', 'https://example.org/submission', 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA', 'pages'],
      ],
    },
    expect: {
      formId: 'hh_survey',
      title: 'Household survey',
      version: '2024031501',
      rootAttributes: { id: 'hh_survey', version: '2024031501' },
      submission: { action: 'https://example.org/submission', method: 'post', base64RsaPublicKey: 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA' },
      bodyClass: 'pages',
      instance: ['/data', '/data/respondent', '/data/meta', '/data/meta/instanceID', '/data/meta/instanceName'],
      binds: {
        '/data/respondent': { type: 'string' },
        '/data/meta/instanceName': { type: 'string', calculate: 'concat( /data/respondent , "-", today())' },
      },
      body: ['input /data/respondent'],
      instances: {},
    },
  },
  {
    name: 'settings-root-name',
    covers: ['form_id', 'version', 'settings name'],
    sheets: {
      survey: [
        ['type', 'name', 'label'],
        ['text', 'q', 'Question'],
      ],
      settings: [
        ['form_id', 'version', 'name'],
        ['my_form', 3, 'household'],
      ],
    },
    expect: {
      formId: 'my_form',
      title: 'my_form',
      version: '3',
      rootAttributes: { id: 'my_form', version: '3' },
      instance: ['/household', '/household/q', '/household/meta', '/household/meta/instanceID'],
      binds: { '/household/q': { type: 'string' } },
      metaRoot: '/household',
      body: ['input /household/q'],
      instances: {},
    },
    answers: { '/household/q': 'yes' },
  },
  {
    name: 'settings-root-extras',
    covers: ['settings bind::', 'attribute::', 'prefix, delimiter', 'client_editable', 'add_none_option', 'instance() in a label'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'constraint'],
        ['select_one crops', 'crop', 'Main crop', ''],
        ['select_multiple problems', 'problems', 'Problems with ${crop}', 'count-selected(.) <= 3'],
        ['select_multiple problems', 'problems_last_year', 'Problems last year', ''],
        ['note', 'summary', "instance('crops')/root/item[name = ${crop}]/label is what you grow.", ''],
      ],
      choices: [
        ['list_name', 'name', 'label'],
        ['crops', 'maize', 'Maize'],
        ['crops', 'beans', 'Beans'],
        ['problems', 'pests', 'Pests'],
        ['problems', 'drought', 'Drought'],
      ],
      settings: [
        ['form_id', 'namespaces', 'bind::ct:icon', 'bind::ct:immersive', 'attribute::origin', 'prefix', 'delimiter', 'client_editable', 'add_none_option'],
        ['crops_sms', 'ct="http://cybertracker.org/xforms"', 'crop.svg', 'yes', 'field-app', 'cr', '+', 'yes', 'yes'],
      ],
    },
    expect: {
      formId: 'crops_sms',
      rootAttributes: { origin: 'field-app', id: 'crops_sms', 'odk:prefix': 'cr', 'odk:delimiter': '+' },
      submission: { 'odk:client-editable': 'true' },
      instance: ['/data', '/data/crop', '/data/problems', '/data/problems_last_year', '/data/summary', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data': { 'ct:icon': 'crop.svg', 'ct:immersive': 'yes' },
        '/data/crop': { type: 'string' },
        // add_none_option: only the list's first select_multiple gets the constraint (pyxform 4.5).
        '/data/problems': { type: 'string', constraint: "count-selected(.) <= 3 and (.='none' or not(selected(., 'none')))" },
        '/data/problems_last_year': { type: 'string' },
        '/data/summary': { readonly: 'true()', type: 'string' },
      },
      body: ['select1 /data/crop', 'select /data/problems', 'select /data/problems_last_year', 'input /data/summary'],
      labels: {
        '/data/problems': 'Problems with <output value=" /data/crop "/>',
        '/data/summary': `<output value="instance('crops')/root/item[name =  /data/crop ]/label"/> is what you grow.`,
      },
      instances: { crops: ['maize', 'beans'], problems: ['pests', 'drought'] },
      choiceLabels: { problems: ['Pests', 'Drought'] },
    },
    answers: { '/data/crop': 'beans', '/data/problems': ['pests'] },
  },
  {
    name: 'last-saved',
    covers: ['default', '${last-saved#name}'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'default'],
        ['text', 'village', 'Village', '${last-saved#village}'],
      ],
    },
    expect: {
      instance: ['/data', '/data/village', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/village': { type: 'string' } },
      modelActions: ["setvalue /data/village event=odk-instance-first-load value= instance('__last-saved')/data/village "],
      body: ['input /data/village'],
      instances: { '__last-saved': 'jr://instance/last-saved' },
    },
  },
];
