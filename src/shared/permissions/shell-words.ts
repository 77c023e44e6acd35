/**
 * Word-level pieces of the shell reader (`shell-parse.ts`): glob escaping, brace-expansion
 * detection and ANSI-C (`$'...'`) escape decoding. Pure code.
 */

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
