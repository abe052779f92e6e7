// Corpus: groups, field-lists, repeats, repeat_count, nested repeats and references between them.

/** @type {import('./types').CorpusForm[]} */
export const structureForms = [
  {
    name: 'groups-nested',
    covers: ['begin_group', 'relevant', 'label'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'relevant'],
        ['integer', 'age', 'Age'],
        ['begin_group', 'adult', 'Adult questions', '${age} >= 18'],
        ['text', 'job', 'Job'],
        ['begin group', 'contact', ''],
        ['text', 'phone', 'Phone'],
        ['end group'],
        ['end_group'],
      ],
    },
    expect: {
      instance: ['/data', '/data/age', '/data/adult', '/data/adult/job', '/data/adult/contact', '/data/adult/contact/phone', '/data/meta', '/data/meta/instanceID'],
      binds: {
        '/data/age': { type: 'int' },
        '/data/adult': { relevant: ' /data/age  >= 18' },
        '/data/adult/job': { type: 'string' },
        '/data/adult/contact/phone': { type: 'string' },
      },
      body: ['input /data/age', 'group /data/adult', 'input /data/adult/job', 'group /data/adult/contact', 'input /data/adult/contact/phone'],
      labels: { '/data/adult': 'Adult questions' },
      instances: {},
    },
    answers: { '/data/age': 30, '/data/adult/job': 'nurse', '/data/adult/contact/phone': '0700' },
  },
  {
    name: 'field-list',
    covers: ['field-list', 'appearance', 'begin_group'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'appearance'],
        ['begin_group', 'page', 'One page', 'field-list'],
        ['text', 'a', 'A'],
        ['text', 'b', 'B'],
        ['end_group'],
      ],
    },
    expect: {
      instance: ['/data', '/data/page', '/data/page/a', '/data/page/b', '/data/meta', '/data/meta/instanceID'],
      binds: { '/data/page/a': { type: 'string' }, '/data/page/b': { type: 'string' } },
      body: ['group /data/page appearance=field-list', 'input /data/page/a', 'input /data/page/b'],
      instances: {},
    },
    answers: { '/data/page/a': 'x' },
  },
  {
    name: 'repeat-relative-refs',
    covers: ['begin_repeat', 'relative ${ref} in repeat', 'relevant', 'calculation'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'relevant', 'calculation'],
        ['text', 'household', 'Household name'],
        ['begin_repeat', 'member', 'Member'],
        ['text', 'member_name', 'Name'],
        ['integer', 'member_age', 'Age of ${member_name}'],
        ['text', 'school', 'School', '${member_age} < 18'],
        ['calculate', 'tag', '', '', 'concat(${household}, "-", ${member_name})'],
        ['end_repeat'],
        ['calculate', 'count', '', '', 'count(${member})'],
      ],
    },
    expect: {
      instance: ['/data', '/data/household', '/data/member', '/data/member/member_name', '/data/member/member_age', '/data/member/school', '/data/member/tag', '/data/count', '/data/meta', '/data/meta/instanceID'],
      templates: ['/data/member'],
      binds: {
        '/data/household': { type: 'string' },
        '/data/member/member_name': { type: 'string' },
        '/data/member/member_age': { type: 'int' },
        '/data/member/school': { type: 'string', relevant: ' ../member_age  < 18' },
        '/data/member/tag': { type: 'string', calculate: 'concat( /data/household , "-",  ../member_name )' },
        '/data/count': { type: 'string', calculate: 'count( /data/member )' },
      },
      body: ['input /data/household', 'group /data/member', 'repeat /data/member', 'input /data/member/member_name', 'input /data/member/member_age', 'input /data/member/school'],
      labels: { '/data/member': 'Member', '/data/member/member_age': 'Age of <output value=" ../member_name "/>' },
      instances: {},
    },
    answers: { '/data/household': 'Smith' },
  },
  {
    name: 'repeat-count-expression',
    covers: ['repeat_count', 'begin_repeat'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'repeat_count'],
        ['integer', 'n', 'How many visits?'],
        ['begin_repeat', 'visit', 'Visit', '${n} + 1'],
        ['date', 'visit_date', 'Date'],
        ['end_repeat'],
      ],
    },
    expect: {
      instance: ['/data', '/data/n', '/data/visit_count', '/data/visit', '/data/visit/visit_date', '/data/meta', '/data/meta/instanceID'],
      templates: ['/data/visit'],
      binds: {
        '/data/n': { type: 'int' },
        '/data/visit_count': { type: 'string', readonly: 'true()', calculate: ' /data/n  + 1' },
        '/data/visit/visit_date': { type: 'date' },
      },
      body: ['input /data/n', 'group /data/visit', 'repeat /data/visit jr:count= /data/visit_count ', 'input /data/visit/visit_date'],
      instances: {},
    },
    answers: { '/data/n': 1 },
  },
  {
    name: 'repeat-count-reference',
    covers: ['repeat_count', 'begin_repeat', 'appearance'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'repeat_count', 'appearance'],
        ['integer', 'plots', 'Plots'],
        ['begin_repeat', 'plot', 'Plot', '${plots}', 'field-list'],
        ['decimal', 'area', 'Area'],
        ['end_repeat'],
      ],
    },
    expect: {
      instance: ['/data', '/data/plots', '/data/plot', '/data/plot/area', '/data/meta', '/data/meta/instanceID'],
      templates: ['/data/plot'],
      binds: { '/data/plots': { type: 'int' }, '/data/plot/area': { type: 'decimal' } },
      body: ['input /data/plots', 'group /data/plot', 'repeat /data/plot appearance=field-list jr:count= /data/plots ', 'input /data/plot/area'],
      instances: {},
    },
    answers: { '/data/plots': 2 },
  },
  {
    name: 'nested-repeats',
    covers: ['begin_repeat', 'nested repeat', 'relative ${ref} in repeat'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'calculation'],
        ['begin_repeat', 'farm', 'Farm'],
        ['text', 'farm_name', 'Farm name'],
        ['begin_repeat', 'field', 'Field'],
        ['text', 'crop', 'Crop'],
        ['calculate', 'label_of', '', 'concat(${farm_name}, ":", ${crop})'],
        ['end_repeat'],
        ['end_repeat'],
      ],
    },
    expect: {
      instance: ['/data', '/data/farm', '/data/farm/farm_name', '/data/farm/field', '/data/farm/field/crop', '/data/farm/field/label_of', '/data/meta', '/data/meta/instanceID'],
      templates: ['/data/farm', '/data/farm/field'],
      binds: {
        '/data/farm/farm_name': { type: 'string' },
        '/data/farm/field/crop': { type: 'string' },
        '/data/farm/field/label_of': { type: 'string', calculate: 'concat( ../../farm_name , ":",  ../crop )' },
      },
      body: ['group /data/farm', 'repeat /data/farm', 'input /data/farm/farm_name', 'group /data/farm/field', 'repeat /data/farm/field', 'input /data/farm/field/crop'],
      instances: {},
    },
  },
  {
    name: 'repeat-without-label',
    covers: ['begin_repeat', 'appearance'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'appearance'],
        ['begin_repeat', 'items', '', 'minimal'],
        ['text', 'item', 'Item'],
        ['end_repeat'],
      ],
    },
    expect: {
      instance: ['/data', '/data/items', '/data/items/item', '/data/meta', '/data/meta/instanceID'],
      templates: ['/data/items'],
      binds: { '/data/items/item': { type: 'string' } },
      body: ['group /data/items', 'repeat /data/items appearance=minimal', 'input /data/items/item'],
      warnings: ["[row : 2] Repeat has no label: {'name': 'items', 'type': 'begin_repeat'}"],
      instances: {},
    },
  },
  {
    name: 'dynamic-defaults',
    covers: ['default', 'dynamic default', 'begin_repeat'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'default'],
        ['date', 'today_date', 'Date', 'today()'],
        ['integer', 'base', 'Base', '5'],
        ['begin_repeat', 'r', 'Rows'],
        ['integer', 'pos', 'Position', 'position(..)'],
        ['integer', 'offset', 'Offset', '${base} + 1'],
        ['end_repeat'],
      ],
    },
    expect: {
      instance: ['/data', '/data/today_date', '/data/base', '/data/r', '/data/r/pos', '/data/r/offset', '/data/meta', '/data/meta/instanceID'],
      templates: ['/data/r'],
      instanceValues: { '/data/base': '5', '/data/today_date': '', '/data/r/pos': '' },
      binds: {
        '/data/today_date': { type: 'date' },
        '/data/base': { type: 'int' },
        '/data/r/pos': { type: 'int' },
        '/data/r/offset': { type: 'int' },
      },
      modelActions: [
        'setvalue /data/today_date event=odk-instance-first-load value=today()',
        'setvalue /data/r/pos event=odk-instance-first-load value=position(..)',
        'setvalue /data/r/offset event=odk-instance-first-load value= /data/base  + 1',
      ],
      body: [
        'input /data/today_date', 'input /data/base', 'group /data/r', 'repeat /data/r', 'input /data/r/pos', 'input /data/r/offset',
        'setvalue /data/r/pos event=odk-new-repeat value=position(..)',
        'setvalue /data/r/offset event=odk-new-repeat value= /data/base  + 1',
      ],
      instances: {},
    },
  },
  {
    name: 'indexed-repeat',
    covers: ['begin_repeat', 'calculation', 'indexed-repeat'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'calculation'],
        ['begin_repeat', 'person', 'Person'],
        ['text', 'pname', 'Name'],
        ['calculate', 'first_name', '', 'indexed-repeat(${pname}, ${person}, 1)'],
        ['end_repeat'],
      ],
    },
    expect: {
      instance: ['/data', '/data/person', '/data/person/pname', '/data/person/first_name', '/data/meta', '/data/meta/instanceID'],
      templates: ['/data/person'],
      binds: {
        '/data/person/pname': { type: 'string' },
        '/data/person/first_name': { type: 'string', calculate: 'indexed-repeat( /data/person/pname ,  /data/person , 1)' },
      },
      body: ['group /data/person', 'repeat /data/person', 'input /data/person/pname'],
      instances: {},
    },
  },
];
