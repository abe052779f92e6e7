// The row-numbered messages of the entities checks, worded as pyxform 4.5 words them so a form
// author sees the same text here as in XLSForm Online (docs/xlsform.md, "Entities").

const NAME_RULES = 'Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.';

export const ENTITY_MESSAGES = {
  saveToWithoutEntities: (row: number) =>
    `[row : ${row}] On the 'survey' sheet, the 'save_to' value is invalid. To save entity properties using the save_to column, add an entities sheet and declare an entity.`,
  duplicateProperty: (row: number, saveto: string, otherRow: number) =>
    `[row : ${row}] On the 'survey' sheet, the 'save_to' value is invalid. The save_to property '${saveto}' is already assigned by row '${otherRow}'. Either remove or change one of these duplicate save_to property names.`,
  saveToOnContainer: (row: number) =>
    `[row : ${row}] On the 'survey' sheet, the 'save_to' value is invalid. Groups and repeats can't be saved as entity properties. Either remove or move the save_to value in this row.`,
  unknownList: (row: number, dataset: string) =>
    `[row : ${row}] On the 'survey' sheet, the 'save_to' value is invalid. The entity list name '${dataset}' was not found on the entities sheet. Please either: check the spelling of the list name in the save_to value, or on the entities sheet add a row for this entity list, or check the spelling of existing entity list names.`,
  missingLabel: (row: number, dataset: string) =>
    `[row : ${row}] On the 'entities' sheet, the entity declaration is invalid. The entity list name '${dataset}' does not have a label, but a 'label' is required when creating entities. Creating entities is indicated by using a 'create_if' expression, or by not using 'entity_id' expression. Please either: add a 'label' for this entity declaration, or to update entities instead provide an 'entity_id' (and optionally 'update_if') expression.`,
  missingUpdateIf: (row: number, dataset: string) =>
    `[row : ${row}] On the 'entities' sheet, the entity declaration is invalid. The entity list name '${dataset}' does not have an 'update_if' expression, but an 'update_if' is required when upserting entities. Upserting entities is indicated by using 'create_if' and 'entity_id' expressions. Please either: add an 'update_if' for this entity declaration, or to only create entities instead remove the 'entity_id' expression.`,
  missingEntityId: (row: number, dataset: string) =>
    `[row : ${row}] On the 'entities' sheet, the entity declaration is invalid. The entity list name '${dataset}' does not have an 'entity_id' expression, but an 'entity_id' is required when updating entities. Updating entities is indicated by using 'entity_id' and/or 'update_if' expressions. Please either: add an 'entity_id' for this entity declaration, or to only create entities instead move the 'update_if' to 'create_if'.`,
  missingListPrefix: (row: number) =>
    `[row : ${row}] On the 'survey' sheet, the 'save_to' value is invalid. When there is more than one entity declaration, 'save_to' names must be prefixed with the entity 'list_name' that the property belongs to. Please either: add the entity 'list_name' prefix separated with a '#' e.g. my_list#my_save_to (where 'my_list' is the entity 'list_name', and 'my_save_to' is the 'save_to' property name), or remove all but one entity declarations.`,
  noContainer: (row: number, scope: string, otherRow: number) =>
    `[row : ${row}] On the 'entities' sheet, the entity declaration is invalid. Each container (survey, group, repeat) may have only one entity declaration, but there are no valid containers available in the scope: '${scope}', which has been allocated to the entity on row '${otherRow}'. Please either: check which entities are referred to from the 'survey' sheetin the 'save_to' column, or check which questions are being referred to from the 'entities' sheet with variable references (such as in the 'label').`,
  saveToScope: (row: number, dataset: string, otherScope: string, scope: string) =>
    `[row : ${row}] On the 'survey' sheet, the 'save_to' value is invalid. The entity list name '${dataset}' has a reference in container scope '${otherScope}' which is not compatible with this 'save_to' reference in scope '${scope}'. Please either: check the spelling of the list name in the 'save_to', or copy either value into the desired container scope with a 'calculate' question then use that 'calculate' for the 'save_to'.`,
  variableScope: (row: number, dataset: string, otherScope: string, question: string, scope: string) =>
    `[row : ${row}] On the 'entities' sheet, the entity declaration is invalid. The entity list name '${dataset}' has a reference in container scope '${otherScope}' which is not compatible with the variable reference to '${question}' in scope '${scope}'. Please either: check the spelling of the variable references, or copy either value into the desired container scope with a 'calculate' question then use that 'calculate' for the 'save_to'.`,
  manyDelimiters: (row: number) =>
    `[row : ${row}] On the 'survey' sheet, the 'save_to' value is invalid. A 'save_to' value must have at most one '#' delimiter character. Please check the spelling of this 'save_to' value.`,
  unknownColumns: (columns: string[]) =>
    `[row : 1] On the 'entities' sheet, one or more column names are invalid. The following column(s) are not supported by this version of pyxform: ${columns.map((c) => `'${c}'`).join(', ')}. Please either: check the spelling of the column names, remove the columns, or update pyxform.`,
  notXmlName: (sheet: string, row: number, column: string) => `[row : ${row}] On the '${sheet}' sheet, the '${column}' value is invalid. ${NAME_RULES}`,
  reservedPrefix: (sheet: string, row: number, column: string) =>
    `[row : ${row}] On the '${sheet}' sheet, the '${column}' value is invalid. Names used here must not begin with two underscores.`,
  period: (sheet: string, row: number, column: string) => `[row : ${row}] On the '${sheet}' sheet, the '${column}' value is invalid. Names used here must not contain a period.`,
  reservedWord: (sheet: string, row: number, column: string) =>
    `[row : ${row}] On the '${sheet}' sheet, the '${column}' value is invalid. Names used here must not be 'name' or 'label' (case-insensitive).`,
  duplicateList: (row: number) => `[row : ${row}] On the 'entities' sheet, the 'list_name' value is invalid. The 'list_name' column must not have any duplicate names.`,
  missingList: (row: number) => `[row : ${row}] On the 'entities' sheet, the 'list_name' value is invalid. Entity lists must have a name.`,
};
