/**
 * Word-level pieces of the shell reader (`parse.ts`): the state of a word being read, glob
 * escaping, brace-expansion detection, ANSI-C (`$'...'`) escape decoding, and how literal text
 * can hide code. Pure code.
 */
import type { WordExpansion } from './types';

/** Escape the characters a glob would treat as special. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** `{a,b}` or `{1..3}` among a word's unquoted characters (with their positions in its value). */
export function hasBraceExpansion(marks: Array<{ ch: string; at: number }>): boolean {
  for (let open = 0; open < marks.length; open++) {
    if (marks[open]?.ch !== '{') continue;
    let previousDot = -2;
    for (let k = open + 1; k < marks.length; k++) {
      const mark = marks[k] as { ch: string; at: number };
      if (mark.ch === '}') break;
      if (mark.ch === ',') return true;
      if (mark.ch === '.') {
        if (mark.at === previousDot + 1) return true;
        previousDot = mark.at;
      }
    }
  }
  return false;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** Decode the ANSI-C escape whose letter is at `at` in `s` (just after the backslash). */
export function decodeAnsiEscape(s: string, at: number): { text: string; end: number } {
  const letter = s[at] as string;
  const simple = SIMPLE_ESCAPES[letter];
  if (simple !== undefined) return { text: simple, end: at + 1 };
  const digits = (pattern: RegExp, from: number, max: number) => {
    let end = from;
    while (end < s.length && end - from < max && pattern.test(s[end] as string)) end++;
    return end;
  };
  if (/[0-7]/.test(letter)) {
    const end = digits(/[0-7]/, at, 3);
    return { text: String.fromCharCode(parseInt(s.slice(at, end), 8) & 0xff), end };
  }
  const hexLength = letter === 'x' ? 2 : letter === 'u' ? 4 : letter === 'U' ? 8 : 0;
  if (hexLength > 0) {
    const end = digits(/[0-9A-Fa-f]/, at + 1, hexLength);
    if (end === at + 1) return { text: `\\${letter}`, end: at + 1 };
    const code = parseInt(s.slice(at + 1, end), 16);
    return { text: code <= 0x10ffff ? String.fromCodePoint(code) : '', end };
  }
  if (letter === 'c' && at + 1 < s.length) {
    return { text: String.fromCharCode((s.charCodeAt(at + 1) & 0x1f) >>> 0), end: at + 2 };
  }
  return { text: `\\${letter}`, end: at + 1 };
}

export interface WordState {
  value: string;
  pattern: string;
  expansions: Set<WordExpansion>;
  splits: boolean;
  /** Unquoted `{`, `}`, `,` and `.` with their position in `value`, to detect brace expansion. */
  braceMarks: Array<{ ch: string; at: number }>;
  bracketOpen: boolean;
  /** The last character of literal (not expanded) text, to find a `$(` split across quotes. */
  lastLiteral: string;
  /** Code hidden in the word's text or a `${x@P}`-style expansion in it, once found. */
  hidden?: { why: string; expansion?: true };
}

export function newWordState(): WordState {
  return {
    value: '',
    pattern: '',
    expansions: new Set(),
    splits: false,
    braceMarks: [],
    bracketOpen: false,
    lastLiteral: '',
  };
}

/** Text added as it is (quoted, escaped, or a `$` that starts nothing). */
export function addQuoted(state: WordState, text: string): void {
  noteLiteral(state, text);
  state.value += text;
  state.pattern += escapeGlob(text);
}

/** An expansion's text, as written: bash replaces it, so it does not join the literal text. */
export function addExpansion(state: WordState, text: string): void {
  state.value += text;
  state.pattern += escapeGlob(text);
  state.lastLiteral = '';
}

/** Record literal text, noticing a `$(` or backtick in it (also split across quotes: `'$'"("`). */
export function noteLiteral(state: WordState, text: string): void {
  if (text === '') return;
  state.hidden ??= hiddenText(state.lastLiteral + text);
  state.lastLiteral = text[text.length - 1] as string;
}

/** Why `text` (literal text) hides code, or undefined. */
export function hiddenInText(text: string): string | undefined {
  const what = text.includes('$(') ? '"$("' : text.includes('`') ? 'a backtick' : undefined;
  if (what === undefined) return undefined;
  return `holds ${what} as quoted text, which bash runs as a command substitution if it evaluates the text again (an array subscript, arithmetic, a prompt)`;
}

export function hiddenText(text: string): { why: string } | undefined {
  const why = hiddenInText(text);
  return why === undefined ? undefined : { why };
}

/**
 * Why a `${...}` expansion (as written) evaluates a value as code, or undefined: `${x@P}` expands
 * the value as a prompt (running its command substitutions), `${x@E}` decodes escapes into text
 * that may then run, `${!x}` looks up the variable the value names (an array subscript in the
 * name runs commands). `${!x[@]}` and `${!prefix*}` only list names.
 */
export function evaluatingExpansion(text: string): string | undefined {
  if (/@[PE]\}$/.test(text)) {
    const how = text.endsWith('P}')
      ? 'as a prompt string, running any command substitution in it'
      : "for escapes, turning them into text bash may run (like $'...')";
    return `${text} evaluates the value ${how}`;
  }
  if (text.startsWith('${!') && !/^\$\{![A-Za-z_][A-Za-z0-9_]*(?:\[[@*]\]|[@*])\}$/.test(text)) {
    return `${text} looks up the variable a value names (an array subscript in that name runs commands)`;
  }
  return undefined;
}
