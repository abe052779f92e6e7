// `instance(...)` expressions inside labels and hints, which pyxform 4 writes as
// <output value="..."/> elements: the text is split into tokens as pyxform's expression lexer
// splits it, and an expression runs from `instance('id')` through its path and predicates to
// the first whitespace outside a predicate (docs/xlsform.md, "Output format").

type TokenType =
  | 'DATETIME' | 'DATE' | 'TIME' | 'NUMBER' | 'OPS_MATH' | 'OPS_COMP' | 'OPS_BOOL' | 'OPS_UNION'
  | 'OPEN_PAREN' | 'CLOSE_PAREN' | 'BRACKET' | 'PARENT_REF' | 'SELF_REF' | 'PATH_SEP'
  | 'SYSTEM_LITERAL' | 'COMMA' | 'WHITESPACE' | 'PYXFORM_REF' | 'FUNC_CALL' | 'XPATH_PRED_START'
  | 'XPATH_PRED_END' | 'URI_SCHEME' | 'NAME' | 'PYXFORM_REF_START' | 'PYXFORM_REF_END' | 'OTHER';

interface Token {
  type: TokenType;
  value: string;
  start: number;
  end: number;
}

// pyxform's NCName start characters, including its quirk: the range À-Ö is written without its
// opening bracket, so it matches the literal text "À-Ö]" rather than those letters.
const START =
  '(?:[A-Z]|_|[a-z]|\\xc0-\\xd6\\]|[\\xd8-\\xf6]|[\\xf8-\\u02ff]|[\\u0370-\\u037d]|[\\u037f-\\u1fff]|[\\u200c-\\u200d]|' +
  '[\\u2070-\\u218f]|[\\u2c00-\\u2fef]|[\\u3001-\\ud7ff]|[\\uf900-\\ufdcf]|[\\ufdf0-\\ufffd]|[\\u{10000}-\\u{effff}])';
const NCNAME = `${START}(?:${START}|[\\-.0-9\\xb7\\u0300-\\u036f\\u203f-\\u2040])*`;
const NCNAME_NS = `${NCNAME}(?::${NCNAME})?`;
const DATE = '-?\\d{4}-\\d{2}-\\d{2}';
const TIME = '\\d{2}:\\d{2}:\\d{2}(?:\\.\\s+)?(?:(?:[+\\-]\\d{2}:\\d{2})|Z)?';

// In the lexer's order (priority): at each position the first pattern that matches wins.
const TERMINALS: Array<[TokenType, string]> = [
  ['DATETIME', `${DATE}T${TIME}`],
  ['DATE', DATE],
  ['TIME', TIME],
  ['NUMBER', '-?\\d+\\.\\d*|-?\\.\\d+|-?\\d+'],
  ['OPS_MATH', '[*+\\-]| mod | div '],
  ['OPS_COMP', '=|!=|<|>|<=|>='],
  ['OPS_BOOL', ' and | or '],
  ['OPS_UNION', '\\|'],
  ['OPEN_PAREN', '\\('],
  ['CLOSE_PAREN', '\\)'],
  ['BRACKET', '[\\[{}]'],
  ['PARENT_REF', '\\.\\.'],
  ['SELF_REF', '\\.'],
  ['PATH_SEP', '\\/'],
  ['SYSTEM_LITERAL', '"[^"]*"|\'[^\']*\''],
  ['COMMA', ','],
  ['WHITESPACE', '\\s+'],
  ['PYXFORM_REF', `\\$\\{(?:last-saved#)?${NCNAME}\\}`],
  ['FUNC_CALL', `${NCNAME_NS}\\(`],
  ['XPATH_PRED_START', `${NCNAME_NS}\\[`],
  ['XPATH_PRED_END', '\\]'],
  ['URI_SCHEME', `${NCNAME}:\\/\\/`],
  ['NAME', NCNAME_NS],
  ['PYXFORM_REF_START', '\\$\\{'],
  ['PYXFORM_REF_END', '\\}'],
  ['OTHER', '.+?'],
];
const LEXER = new RegExp(TERMINALS.map(([name, re]) => `(?<${name}>${re})`).join('|'), 'uy');

function* tokens(text: string): Generator<Token> {
  let at = 0;
  while (at < text.length) {
    LEXER.lastIndex = at;
    const m = LEXER.exec(text);
    // A newline is the only character OTHER does not take; WHITESPACE takes it first.
    if (!m || m[0].length === 0) return;
    const type = TERMINALS.find(([name]) => m.groups![name] !== undefined)![0];
    yield { type, value: m[0], start: at, end: at + m[0].length };
    at += m[0].length;
  }
}

/** [start, end) of each `instance(...)` expression in the text, as pyxform 4.5 finds them. */
export function instanceExpressionBounds(text: string): Array<[number, number]> {
  if (text.length <= 9 || !text.includes('instance(')) return [];
  let inInstance = false;
  let inPath = false;
  let inPredicate = false;
  let last: Token | undefined;
  const bounds: number[] = [];
  for (const t of tokens(text)) {
    let emit = false;
    if (!inInstance && t.type === 'FUNC_CALL' && t.value === 'instance(') {
      inInstance = true;
      emit = true;
      bounds.push(t.start);
    } else if (inInstance && last) {
      if (t.type === 'SYSTEM_LITERAL' && last.type === 'FUNC_CALL' && last.value === 'instance(') emit = true;
      else if (last.type === 'SYSTEM_LITERAL' && t.type === 'CLOSE_PAREN') emit = true;
      else if (t.type === 'PATH_SEP' && (last.type === 'CLOSE_PAREN' || last.type === 'XPATH_PRED_END')) {
        emit = true;
        inPath = true;
      } else if (inPath) {
        if (t.type === 'WHITESPACE') inPath = false;
        else {
          emit = true;
          if (t.type === 'XPATH_PRED_START') {
            inPath = false;
            inPredicate = true;
          }
        }
      } else if (inPredicate) {
        emit = true;
        if (t.type === 'XPATH_PRED_END') inPredicate = false;
      }
    }
    if (emit) last = t;
    else if (inInstance) {
      inInstance = false;
      bounds.push(last!.end);
    }
  }
  // An expression that runs to the end of the text ends at its last token.
  if (inInstance) bounds.push(last!.end);
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i + 1 < bounds.length; i += 2) pairs.push([bounds[i], bounds[i + 1]]);
  return pairs;
}
