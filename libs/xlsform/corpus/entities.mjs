// Corpus: entities, as pyxform 4.5 writes them: an entity created from a submission, one
// updated (entity_id, update_if), one created or updated (create_if + update_if), and one list
// per repeat instance beside a survey-level list (entities spec 2025.1.0). The engine test loads
// each; the update forms read the list from trees.csv, as a server serves it
// (docs/xlsform.md, "Entities").

/** The attributes pyxform writes on `/data/meta/entity` of a form that may update an entity of `list` (`flags`: create, update). */
const updatingAttributes = (list, ...flags) => [
  `/data/meta/entity@dataset=${list}`,
  ...flags.map((flag) => `/data/meta/entity@${flag}=1`),
  ...['baseVersion', 'trunkVersion', 'branchId', 'id'].map((name) => `/data/meta/entity@${name}=`),
];

/** The binds that read the updated entity's versions from the list's instance, keyed by the entity id's reference `ref`. */
const versionBinds = (list, ref) =>
  Object.fromEntries(
    [['baseVersion', '__version'], ['trunkVersion', '__trunkVersion'], ['branchId', '__branchId']].map(([attribute, column]) => [
      `/data/meta/entity/@${attribute}`,
      { calculate: `instance('${list}')/root/item[name= ${ref} ]/${column}`, readonly: 'true()', type: 'string' },
    ]),
  );

/** The binds of an entity the form creates at `entity` (its meta/entity path): an id set on load, and the label's calculation. */
const createdBinds = (entity, label) => ({
  [`${entity}/@id`]: { readonly: 'true()', type: 'string' },
  [`${entity}/label`]: { calculate: label, readonly: 'true()', type: 'string' },
});

/** The list of trees the update forms choose from, as a server serves it (name, label, __version). */
const TREES = { 'trees.csv': 'name,label,__version\nt1,Oak by the gate,3\n' };
const TREES_EXPECTED = { instances: { trees: 'jr://file-csv/trees.csv' }, attachments: ['trees.csv'] };

/** @type {import('./types').CorpusForm[]} */
export const entityForms = [
  {
    name: 'entities-create',
    covers: ['entities', 'save_to', 'entities create'],
    sheets: {
      survey: [['type', 'name', 'label', 'save_to'], ['text', 'species', 'Species', 'species'], ['integer', 'height', 'Height (m)', 'height_m']],
      entities: [['list_name', 'label'], ['trees', "concat('Tree: ', ${species})"]],
    },
    expect: {
      instance: ['/data', '/data/species', '/data/height', '/data/meta', '/data/meta/entity', '/data/meta/entity/label', '/data/meta/instanceID'],
      instanceAttributes: ['/data/meta/entity@dataset=trees', '/data/meta/entity@create=1', '/data/meta/entity@id='],
      modelAttributes: { 'odk:xforms-version': '1.0.0', 'entities:entities-version': '2024.1.0' },
      binds: {
        '/data/species': { type: 'string', 'entities:saveto': 'species' },
        '/data/height': { type: 'int', 'entities:saveto': 'height_m' },
        ...createdBinds('/data/meta/entity', "concat('Tree: ',  /data/species )"),
      },
      body: ['input /data/species', 'input /data/height'],
      instances: {},
      modelActions: ['setvalue /data/meta/entity/@id event=odk-instance-first-load value=uuid()'],
    },
    answers: { '/data/species': 'oak', '/data/height': 12 },
    submission: { '/data/meta/entity/label': 'Tree: oak' },
  },
  {
    name: 'entities-update',
    covers: ['entities update', 'entity_id', 'update_if', 'select_one_from_file'],
    sheets: {
      survey: [['type', 'name', 'label', 'save_to'], ['select_one_from_file trees.csv', 'tree', 'Tree'], ['integer', 'height', 'New height (m)', 'height_m']],
      entities: [['list_name', 'entity_id', 'update_if'], ['trees', '${tree}', '${height} > 0']],
    },
    attachments: TREES,
    expect: {
      instance: ['/data', '/data/tree', '/data/height', '/data/meta', '/data/meta/entity', '/data/meta/instanceID'],
      instanceAttributes: updatingAttributes('trees', 'update'),
      modelAttributes: { 'odk:xforms-version': '1.0.0', 'entities:entities-version': '2024.1.0' },
      binds: {
        '/data/tree': { type: 'string' },
        '/data/height': { type: 'int', 'entities:saveto': 'height_m' },
        '/data/meta/entity/@update': { calculate: ' /data/height  > 0', readonly: 'true()', type: 'string' },
        ...versionBinds('trees', '/data/tree'),
        '/data/meta/entity/@id': { readonly: 'true()', type: 'string', calculate: ' /data/tree ' },
      },
      body: ['select1 /data/tree', 'input /data/height'],
      itemsets: { '/data/tree': "instance('trees')/root/item|name|label" },
      ...TREES_EXPECTED,
    },
    answers: { '/data/tree': 't1', '/data/height': 14 },
  },
  {
    name: 'entities-create-and-update',
    covers: ['entities create and update', 'create_if'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'save_to', 'calculation'],
        ['select_one_from_file trees.csv', 'tree', 'Existing tree (leave empty for a new one)', '', ''],
        ['text', 'species', 'Species', 'species', ''],
        ['calculate', 'tree_id', '', '', "if(${tree} = '', uuid(), ${tree})"],
      ],
      entities: [['list_name', 'entity_id', 'create_if', 'update_if', 'label'], ['trees', '${tree_id}', "${tree} = ''", "${tree} != ''", '${species}']],
    },
    attachments: TREES,
    expect: {
      instance: [
        '/data',
        '/data/tree',
        '/data/species',
        '/data/tree_id',
        '/data/meta',
        '/data/meta/entity',
        '/data/meta/entity/label',
        '/data/meta/instanceID',
      ],
      instanceAttributes: updatingAttributes('trees', 'create', 'update'),
      modelAttributes: { 'odk:xforms-version': '1.0.0', 'entities:entities-version': '2024.1.0' },
      binds: {
        '/data/tree': { type: 'string' },
        '/data/species': { type: 'string', 'entities:saveto': 'species' },
        '/data/tree_id': { type: 'string', calculate: "if( /data/tree  = '', uuid(),  /data/tree )" },
        '/data/meta/entity/@create': { calculate: " /data/tree  = ''", readonly: 'true()', type: 'string' },
        '/data/meta/entity/@update': { calculate: " /data/tree  != ''", readonly: 'true()', type: 'string' },
        ...versionBinds('trees', '/data/tree_id'),
        '/data/meta/entity/@id': { readonly: 'true()', type: 'string', calculate: ' /data/tree_id ' },
        '/data/meta/entity/label': { calculate: ' /data/species ', readonly: 'true()', type: 'string' },
      },
      body: ['select1 /data/tree', 'input /data/species'],
      itemsets: { '/data/tree': "instance('trees')/root/item|name|label" },
      ...TREES_EXPECTED,
    },
    answers: { '/data/species': 'ash' },
    submission: { '/data/meta/entity/label': 'ash' },
  },
  {
    name: 'entities-in-repeat',
    covers: ['entities in repeat', 'entities several lists'],
    sheets: {
      survey: [
        ['type', 'name', 'label', 'save_to'],
        ['text', 'site', 'Site name', 'sites#site_name'],
        ['begin_repeat', 'plot', 'Plot', ''],
        ['text', 'crop', 'Crop', 'plots#crop'],
        ['end_repeat', '', '', ''],
      ],
      entities: [['list_name', 'label'], ['sites', '${site}'], ['plots', "concat('Plot of ', ${crop})"]],
    },
    expect: {
      instance: [
        '/data',
        '/data/site',
        '/data/plot',
        '/data/plot/crop',
        '/data/plot/meta',
        '/data/plot/meta/entity',
        '/data/plot/meta/entity/label',
        '/data/meta',
        '/data/meta/entity',
        '/data/meta/entity/label',
        '/data/meta/instanceID',
      ],
      instanceAttributes: [
        '/data/plot/meta/entity@dataset=plots',
        '/data/plot/meta/entity@create=1',
        '/data/plot/meta/entity@id=',
        '/data/meta/entity@dataset=sites',
        '/data/meta/entity@create=1',
        '/data/meta/entity@id=',
      ],
      modelAttributes: { 'odk:xforms-version': '1.0.0', 'entities:entities-version': '2025.1.0' },
      binds: {
        '/data/site': { type: 'string', 'entities:saveto': 'site_name' },
        '/data/plot/crop': { type: 'string', 'entities:saveto': 'crop' },
        ...createdBinds('/data/plot/meta/entity', "concat('Plot of ',  ../../../crop )"),
        ...createdBinds('/data/meta/entity', ' /data/site '),
      },
      body: [
        'input /data/site',
        'group /data/plot',
        'repeat /data/plot',
        'input /data/plot/crop',
        'setvalue /data/plot/meta/entity/@id event=odk-new-repeat value=uuid()',
      ],
      instances: {},
      templates: ['/data/plot'],
      modelActions: [
        'setvalue /data/plot/meta/entity/@id event=odk-instance-first-load value=uuid()',
        'setvalue /data/meta/entity/@id event=odk-instance-first-load value=uuid()',
      ],
    },
    answers: { '/data/site': 'North field' },
    submission: { '/data/meta/entity/label': 'North field' },
  },
];
