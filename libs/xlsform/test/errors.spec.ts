// Broken XLSForms get pyxform's messages, naming the sheet row ("[row : N]").
import { convertTables, convertXlsForm, tablesToXlsx, type WorkbookTables } from '@collect/xlsform';

const errorsOf = (tables: WorkbookTables) => convertTables(tables).errors;
const H = ['type', 'name', 'label'];

describe('XLSForm errors name the row as pyxform does', () => {
  it('unknown question type', async () => {
    const result = await convertXlsForm(await tablesToXlsx({ survey: [H, ['text', 'a', 'A'], ['txt', 'b', 'B']] }));
    expect(result.xml).toBeNull();
    expect(result.errors).toEqual(["[row : 3] Unknown question type 'txt'."]);
  });

  it('duplicate names in the same group, but not in different groups', () => {
    expect(errorsOf({ survey: [H, ['text', 'q', 'A'], ['text', 'q', 'B']] })).toEqual([
      "[row : 3] On the 'survey' sheet, the 'name' value 'q' is invalid. Questions, groups, and repeats must be unique within their nearest parent group or repeat, or the survey if not inside a group or repeat.",
    ]);
    expect(errorsOf({ survey: [H, ['text', 'q', 'A'], ['begin_group', 'g', 'G'], ['text', 'q', 'B'], ['end_group']] })).toEqual([]);
  });

  it('a reference to a name that does not exist, or exists twice', () => {
    expect(errorsOf({ survey: [['type', 'name', 'label', 'relevant'], ['text', 'a', 'A', '${nope} = 1']] })).toEqual([
      "[row : 2] On the 'survey' sheet, the 'relevant' value is invalid. Reference variables must contain a name from the 'survey' sheet. Could not find the name 'nope'.",
    ]);
    expect(
      errorsOf({ survey: [H, ['text', 'q', 'A'], ['begin_group', 'g', 'G'], ['text', 'q', 'B'], ['end_group'], ['note', 'n', 'Is ${q}']] }),
    ).toEqual([
      "[row : 6] On the 'survey' sheet, the 'label' value is invalid. Reference variables names must be unique anywhere in the 'survey'. The name 'q' appears more than once.",
    ]);
    expect(errorsOf({ survey: [H, ['text', 'a', 'A'], ['note', 'n', 'Bad ${a']] })).toEqual([
      "[row : 3] On the 'survey' sheet, the 'label' value is invalid. Reference variables must start with '${', then a question name, and end with '}'.",
    ]);
  });

  it('a choice list that is missing', () => {
    expect(errorsOf({ survey: [H, ['select_one fruits', 'f', 'Fruit']], choices: [['list_name', 'name', 'label'], ['veg', 'kale', 'Kale']] })).toEqual([
      '[row : 2] List name not in choices sheet: fruits',
    ]);
    expect(errorsOf({ survey: [H, ['select_one fruits', 'f', 'Fruit']] })).toEqual([
      "There should be a choices sheet in this xlsform. Please ensure that the choices sheet has the mandatory columns 'list_name', 'name', and 'label'.",
    ]);
  });

  it('bad names', () => {
    expect(errorsOf({ survey: [H, ['text', '1st', 'First']] })).toEqual([
      "[row : 2] On the 'survey' sheet, the 'name' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.",
    ]);
    expect(errorsOf({ survey: [H, ['text', 'a', 'A']], settings: [['name'], ['my root']] })).toEqual([
      "[row : 1] On the 'settings' sheet, the 'name' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.",
    ]);
    expect(errorsOf({ survey: [H, ['text', 'a', 'A'], ['text', '', 'No name']] })).toEqual(['[row : 3] Question or group with no name.']);
  });

  it('unmatched begin and end of groups and repeats', () => {
    expect(errorsOf({ survey: [H, ['text', 'a', 'A'], ['end_group']] })).toEqual([
      "[row : 3] Unmatched 'end_group'. No matching 'begin_group' was found for the name 'unknown'.",
    ]);
    expect(errorsOf({ survey: [H, ['begin_repeat', 'r', 'R'], ['text', 'a', 'A']] })).toEqual([
      "[row : 2] Unmatched 'begin_repeat'. No matching 'end_repeat' was found for the name 'r'.",
    ]);
  });

  it('a calculate without calculation, a question without label, duplicate choices', () => {
    expect(errorsOf({ survey: [H, ['calculate', 'c', '']] })).toEqual(['[row : 2] Missing calculation.']);
    expect(errorsOf({ survey: [H, ['text', 'q', '']] })).toEqual(["[row : 2] The survey element named 'q' has no label or hint."]);
    expect(
      errorsOf({ survey: [H, ['select_one yn', 'q', 'Q']], choices: [['list_name', 'name', 'label'], ['yn', 'yes', 'Yes'], ['yn', 'yes', 'Yes again']] }),
    ).toEqual([
      "[row : 3] On the 'choices' sheet, the 'name' value is invalid. Choice names must be unique for each choice list. If this is intentional, use the setting 'allow_choice_duplicates'. Learn more: https://xlsform.org/#choice-names.",
    ]);
  });

  it('type-specific rules: or_other with a choice filter, range step, parameters', () => {
    const choices = [['list_name', 'name', 'label'], ['c', 'a', 'A']];
    expect(errorsOf({ survey: [[...H, 'choice_filter'], ['select_one c or_other', 'q', 'Q', 'name = 1']], choices })).toEqual([
      '[row : 2] Choice filter not supported with or_other.',
    ]);
    expect(errorsOf({ survey: [[...H, 'parameters'], ['range', 'r', 'R', 'start=0 end=10 step=0']] })).toEqual([
      "[row : 2] On the 'survey' sheet, the 'parameters' value is invalid. For the 'range' question type, the parameter 'step' must not be '0' (zero).",
    ]);
    expect(errorsOf({ survey: [[...H, 'parameters'], ['text', 't', 'T', 'colour=red']] })).toEqual([
      "[row : 2] On the 'survey' sheet, the 'parameters' value is invalid. The accepted parameter keys for this question type are 'rows'. The following are invalid parameter key(s): 'colour'.",
    ]);
  });

  it('reports every broken row at once', () => {
    expect(errorsOf({ survey: [H, ['txt', 'a', 'A'], ['text', '2b', 'B'], ['text', 'c', 'C'], ['integr', 'd', 'D']] })).toEqual([
      "[row : 2] Unknown question type 'txt'.",
      "[row : 3] On the 'survey' sheet, the 'name' value is invalid. Names must begin with a letter or underscore. After the first character, names may contain letters, digits, underscores, hyphens, or periods.",
      "[row : 5] Unknown question type 'integr'.",
    ]);
  });

  it('row numbers count empty rows, as in the spreadsheet', async () => {
    const result = await convertXlsForm(await tablesToXlsx({ survey: [H, ['text', 'a', 'A'], [], [], ['bogus', 'b', 'B']] }));
    expect(result.errors).toEqual(["[row : 5] Unknown question type 'bogus'."]);
  });

  it('a missing survey sheet, with the misspelling found', () => {
    expect(errorsOf({ surveys: [H, ['text', 'a', 'A']], choices: [['list_name', 'name', 'label']] })).toEqual([
      "You must have a sheet named 'survey'. When looking for a sheet named 'survey', the following sheets with similar names were found: 'surveys'.",
    ]);
  });

  it('warns when a language lacks a translated column that another language has', () => {
    const result = convertTables({
      survey: [['type', 'name', 'label::English (en)', 'label::French (fr)', 'hint::English (en)', 'constraint_message::French (fr)'], ['integer', 'a', 'A', 'A', 'h', 'non']],
    });
    expect(result.warnings).toEqual([
      "Language 'English (en)' is missing the survey constraint_message column.\nLanguage 'French (fr)' is missing the survey hint column.",
    ]);
    expect(convertTables({ survey: [['type', 'name', 'label', 'label::French (fr)'], ['text', 'a', 'A', 'A']] }).warnings).toEqual([]);
  });

  it('warnings: case-insensitive duplicates, image without max-pixels, repeat without label', () => {
    const result = convertTables({ survey: [H, ['text', 'Q', 'A'], ['text', 'q', 'B'], ['image', 'p', 'Photo'], ['begin_repeat', 'r'], ['text', 'x', 'X'], ['end_repeat']] });
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([
      "[row : 3] On the 'survey' sheet, the 'name' value 'q' is problematic. The name is a case-insensitive match to another name. Questions, groups, and repeats should be unique within the nearest parent group or repeat, or the survey if not inside a group or repeat. Some data processing tools are not case-sensitive, so the current names may make analysis difficult.",
      '[row : 4] Use the max-pixels parameter to speed up submission sending and save storage space. Learn more: https://xlsform.org/#image',
      "[row : 5] Repeat has no label: {'name': 'r', 'type': 'begin_repeat'}",
    ]);
  });
});
