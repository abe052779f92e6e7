// The form as a tree, between the spreadsheet rows and the XForm XML.

/** A text that may be translated: a plain string, or language -> text (insertion order kept). */
export type Translatable = string | Record<string, string>;

export interface FormAction {
  name: 'setvalue' | 'odk:setgeopoint' | 'odk:recordaudio';
  event: 'odk-instance-first-load' | 'odk-instance-load' | 'odk-new-repeat' | 'xforms-value-changed';
  quality?: string;
  /** A fixed value (the entity id's `uuid()`); otherwise the question's default. */
  value?: string;
}

export interface Choice {
  name: string;
  label?: Translatable;
  media?: Record<string, Translatable>;
  /** Other columns of the choices sheet, written as child elements of the item. */
  extra: Array<[string, string]>;
  /** Set when a select uses search(): the item's label then points at the itext entry. */
  itextRef?: string;
}

export interface ChoiceList {
  name: string;
  choices: Choice[];
  requiresItext: boolean;
  usedBySearch: boolean;
}

// `entity` is the meta/entity element of an entities declaration; its `attribute` children are
// written as XML attributes of it (their names start with `@`, so their paths are XPath
// attribute steps).
export type NodeKind = 'survey' | 'group' | 'repeat' | 'question' | 'external' | 'entity' | 'attribute';

export interface FormNode {
  kind: NodeKind;
  name: string;
  /** Question type key of QUESTION_TYPES for questions; 'group'/'repeat'/'survey' otherwise. */
  type: string;
  row?: number;
  parent?: FormNode;
  children: FormNode[];
  label?: Translatable;
  hint?: Translatable;
  guidanceHint?: Translatable;
  media?: Record<string, Translatable>;
  /** Bind attributes in the order pyxform writes them; constraint/required messages may be translated. */
  bind?: Record<string, Translatable>;
  /** Body control attributes (`tag` and `mediatype` from the type, then appearance etc.). */
  control?: Record<string, string>;
  default?: string;
  dynamicDefault?: boolean;
  actions: FormAction[];
  trigger?: string[];
  choiceFilter?: string;
  parameters: Record<string, string>;
  itemset?: string;
  listName?: string;
  /** select_one_external: the external_choices list queried by the input. */
  query?: string;
  /** The meta group has no body control. */
  bodyless?: boolean;
  /** `instance::NAME` columns: attributes of the node's primary-instance element (`${}` resolved). */
  instanceAttrs?: Record<string, string>;
  /** A bare `media` column (no media type): pyxform then writes an empty label rather than refusing. */
  bareMedia?: boolean;
  /** `osm LIST`: the OSM sheet's tags of LIST, written as <tag key=".."> children of the upload. */
  tags?: Array<{ name: string; label?: string }>;
  /** The fixed value of an entity attribute (`dataset`, `create`, `update`). */
  value?: string;
  /** Cached absolute path. */
  xpath?: string;
}

export interface Survey {
  root: FormNode;
  /** Root element name of the primary instance (setting `name`, default `data`). */
  instanceName: string;
  idString: string;
  title: string;
  version?: string;
  defaultLanguage: string;
  publicKey?: string;
  submissionUrl?: string;
  autoSend?: string;
  autoDelete?: string;
  style?: string;
  namespaces?: string;
  /** Settings written on the primary instance's root (`attribute::NAME`, `instance_xmlns`, SMS `prefix`/`delimiter`) and the submission (`client_editable`). */
  rootAttributes?: Record<string, string>;
  instanceXmlns?: string;
  smsPrefix?: string;
  smsDelimiter?: string;
  clientEditable?: boolean;
  /** `entities:entities-version` of the model when the form declares entities. */
  entityVersion?: string;
  choices: Map<string, ChoiceList>;
  /** Triggering question name -> [target question name, calculation]. */
  setvaluesByTrigger: Map<string, Array<[string, string]>>;
  setgeopointByTrigger: Map<string, Array<[string, string]>>;
}

export function newNode(kind: NodeKind, name: string, type: string): FormNode {
  return { kind, name, type, children: [], actions: [], parameters: {} };
}

export function xpathOf(node: FormNode): string {
  if (node.xpath !== undefined) return node.xpath;
  const names: string[] = [];
  for (let n: FormNode | undefined = node; n; n = n.parent) names.push(n.name);
  node.xpath = `/${names.reverse().join('/')}`;
  return node.xpath;
}

/** Path from `ancestor` (exclusive) down to `node`, e.g. "/group/q1". */
export function xpathRelativeTo(node: FormNode, ancestor: FormNode): string {
  const names: string[] = [];
  for (let n: FormNode | undefined = node; n && n !== ancestor; n = n.parent) names.push(n.name);
  return `/${names.reverse().join('/')}`;
}

/** The node and everything under it, in document order (an array: a recursive generator costs a frame per level per node). */
export function descendants(node: FormNode): FormNode[] {
  const out: FormNode[] = [];
  const stack: FormNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

export function isSection(node: FormNode): boolean {
  return node.kind === 'survey' || node.kind === 'group' || node.kind === 'repeat';
}
