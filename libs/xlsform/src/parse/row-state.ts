// What the survey sheet reader carries from row to row.
import type { EntityCollector } from '../entities/index.js';
import type { FormNode, Survey } from '../model.js';
import type { WorkbookData } from '../workbook.js';

/** A container open while the survey rows are read: its node, what it is, the names inside it. */
export interface StackEntry {
  node: FormNode;
  controlType: 'group' | 'repeat' | 'loop' | null;
  childNames: Set<string>;
  childNamesLower: Set<string>;
  row?: number;
}

export interface RowState {
  workbook: WorkbookData;
  survey: Survey;
  warnings: string[];
  /** List names of the external_choices sheet. */
  external: Set<string>;
  /** Open groups and repeats, the survey first. */
  stack: StackEntry[];
  metaChildren: FormNode[];
  /** How often each element name occurs anywhere in the survey (references need exactly one). */
  elementNames: Map<string, number>;
  questionNames: Set<string>;
  triggerRefs: Array<[string, number]>;
  repeatNames: Set<string>;
  /** Inside a table-list group: true before its first select, then that select's list name. */
  tableList: string | true | null;
  orOtherSeen: boolean;
  /** Names of secondary instances the survey rows create (csv/xml-external, selects' lists and files). */
  secondaryNames: Set<string>;
  /** The entities sheet's declarations and the survey rows that refer to them. */
  entities: EntityCollector;
}
