// Shape of a corpus form (see docs/xlsform.md, "Corpus").
export interface CorpusForm {
  name: string;
  /** Question types, columns and settings this form exercises (the coverage table is built from these). */
  covers: string[];
  /** Sheets as tables; the first line of each holds the headers. */
  sheets: Record<string, Array<Array<string | number | boolean | null>>>;
  /** Files the form needs (CSV/XML lookups, media), served to the engine as form attachments. */
  attachments?: Record<string, string>;
  expect: {
    formId?: string;
    title?: string;
    version?: string;
    instance: string[];
    /** Attributes of primary-instance elements below the root, `path@name=value` (meta/entity's). */
    instanceAttributes?: string[];
    /** Attributes of the model element; `odk:xforms-version` alone when not given. */
    modelAttributes?: Record<string, string>;
    templates?: string[];
    instanceValues?: Record<string, string>;
    rootAttributes?: Record<string, string>;
    binds: Record<string, Record<string, string>>;
    modelActions?: string[];
    body: string[];
    labels?: Record<string, string>;
    hints?: Record<string, string>;
    itemsets?: Record<string, string>;
    items?: Record<string, Array<[string, string]>>;
    itext?: Record<string, Record<string, Record<string, string>>>;
    defaultLanguage?: string;
    instances: Record<string, string | string[]>;
    choiceLabels?: Record<string, string[]>;
    choiceExtra?: Record<string, Record<string, Record<string, string>>>;
    attachments?: string[];
    warnings?: string[];
    submission?: Record<string, string>;
    bodyClass?: string;
    metaRoot?: string;
    itemsetsCsv?: string;
  };
  /** Values the engine test enters (path -> value; arrays for select_multiple). */
  answers?: Record<string, string | number | boolean | string[]>;
  /** Values the serialized submission must then hold. */
  submission?: Record<string, string>;
}
