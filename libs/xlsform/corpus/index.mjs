// Every corpus form, in a stable order.
import { entityForms } from './entities.mjs';
import { externalForms } from './external.mjs';
import { languageForms } from './languages.mjs';
import { questionForms } from './questions.mjs';
import { selectForms } from './selects.mjs';
import { structureForms } from './structure.mjs';

/** @type {import('./types').CorpusForm[]} */
export const corpus = [...questionForms, ...selectForms, ...structureForms, ...languageForms, ...externalForms, ...entityForms];
