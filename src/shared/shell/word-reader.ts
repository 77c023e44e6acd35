/**
 * The lower half of the shell reader (`parse.ts`): words, with their quotes, escapes and
 * expansions (`$NAME`, `${...}`, `$(...)`, `$((...))`, backticks, `<(...)`, `~`, globs, braces),
 * and the bookkeeping every read shares (position, nesting bound, what was found). The commands,
 * lists and redirections around the words are read by the subclass, `ShellParser`. Pure code.
 */
import type { ParsedShell, ShellCommand, ShellFeature, ShellHidden, ShellWord } from './types';
import {
  addExpansion,
  addQuoted,
  decodeAnsiEscape,
  escapeGlob,
  evaluatingExpansion,
  hasBraceExpansion,
  hiddenText,
  newWordState,
  noteLiteral,
  type WordState,
} from './words';

export const MAX_DEPTH = 24;
export const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);
const TILDE = /~([A-Za-z0-9._+-]*)(?=[/\s;&|<>()]|$)/y;

/** Thrown to stop reading at what cannot be read; its message becomes a `problem`. */
export class ParseStop extends Error {}

export abstract class WordReader {
  protected i = 0;
  /** Recursive reads under way in this parser (added to `depth` for the bound). */
  protected level = 0;
  protected readonly commands: ShellCommand[] = [];
  protected readonly features = new Set<ShellFeature>();
  protected readonly problems: string[] = [];
  protected readonly hidden: ShellHidden[] = [];

  constructor(
    protected readonly s: string,
    protected readonly depth: number,
  ) {}

  /** Read a list of commands up to `end` (or the end of the text): see `ShellParser`. */
  protected abstract parseList(end: ')' | undefined, nested: boolean): void;

  /** Read `source` (a backtick substitution's text) as a command line of its own. */
  protected abstract nestedSource(source: string): void;

  // --- words ---------------------------------------------------------------------------------------

  protected readWord(): ShellWord {
    const s = this.s;
    const start = this.i;
    const state = newWordState();
    let tildeUser: string | undefined;
    if (s[start] === '~') {
      TILDE.lastIndex = start;
      const match = TILDE.exec(s);
      if (match) {
        tildeUser = match[1] as string;
        state.expansions.add('tilde');
        state.value += match[0];
        state.pattern += escapeGlob(match[0]);
        state.lastLiteral = '';
        this.i += match[0].length;
      }
    }
    if ((s[start] === '<' || s[start] === '>') && s[start + 1] === '(') {
      this.features.add('process-substitution');
      state.expansions.add('process');
      this.i += 2;
      this.nested(() => this.parseList(')', true));
      state.value += s.slice(start, this.i);
      state.lastLiteral = '';
    }
    while (this.i < s.length) {
      const ch = s[this.i] as string;
      if (WORD_END.has(ch)) break;
      if (ch === '\\') {
        const next = s[this.i + 1];
        if (next === undefined) throw new ParseStop('the command ends with a lone backslash');
        this.i += 2;
        if (next !== '\n') addQuoted(state, next);
      } else if (ch === "'") {
        const close = s.indexOf("'", this.i + 1);
        if (close < 0) throw new ParseStop('a single quote is never closed');
        addQuoted(state, s.slice(this.i + 1, close));
        this.i = close + 1;
      } else if (ch === '"') {
        this.i++;
        this.readDoubleQuotedBody(state, false);
      } else if (ch === '$' && s[this.i + 1] === "'") {
        addQuoted(state, this.readAnsiC());
      } else if (ch === '$' && s[this.i + 1] === '"') {
        this.i += 2;
        this.readDoubleQuotedBody(state, false);
      } else if (ch === '$' || ch === '`') {
        const text = this.readExpansion(state, false);
        // Unquoted, the result of an expansion is split into words and globbed again.
        if (text === '$') {
          addQuoted(state, text);
        } else {
          addExpansion(state, text);
          state.splits = true;
        }
      } else {
        this.i++;
        if (ch === '*' || ch === '?') {
          state.expansions.add('glob');
          state.splits = true;
        } else if (ch === '[') {
          state.bracketOpen = true;
        } else if (ch === ']' && state.bracketOpen) {
          state.expansions.add('glob');
          state.splits = true;
        } else if ('{},.'.includes(ch)) {
          state.braceMarks.push({ ch, at: state.value.length });
        }
        noteLiteral(state, ch);
        state.value += ch;
        state.pattern += ch;
      }
    }
    if (hasBraceExpansion(state.braceMarks)) {
      state.expansions.add('brace');
      state.splits = true;
    }
    const expansions = [...state.expansions];
    const word: ShellWord = {
      raw: s.slice(start, this.i),
      value: state.value,
      literal: expansions.length === 0,
      expansions,
      splits: state.splits,
      pattern: state.pattern,
    };
    if (tildeUser !== undefined) word.tildeUser = tildeUser;
    if (state.hidden !== undefined) {
      const why = state.hidden.expansion ? state.hidden.why : `${JSON.stringify(word.raw)} ${state.hidden.why}`;
      const entry: ShellHidden = { why, source: word };
      if (state.hidden.expansion) entry.expansion = true;
      this.hidden.push(entry);
    }
    return word;
  }

  /**
   * Read a double-quoted body after its opening quote (or a whole here-document when `toEnd`):
   * no globbing or splitting, but `$`-expansions and backticks still apply.
   */
  protected readDoubleQuotedBody(state: WordState, toEnd: boolean): void {
    const s = this.s;
    while (this.i < s.length) {
      const ch = s[this.i] as string;
      if (ch === '"' && !toEnd) {
        this.i++;
        return;
      }
      if (ch === '\\') {
        const next = s[this.i + 1];
        if (next === undefined) break;
        if (next === '\n') {
          this.i += 2;
        } else if ('$`"\\'.includes(next) && (next !== '"' || !toEnd)) {
          addQuoted(state, next);
          this.i += 2;
        } else {
          addQuoted(state, ch);
          this.i++;
        }
      } else if (ch === '$' || ch === '`') {
        const text = this.readExpansion(state, true);
        // "$@" and "${a[@]}" become one word per element even inside double quotes.
        if (/^\$(?:@|\{[^}]*\[@\]|\{!)/.test(text)) state.splits = true;
        if (text === '$') addQuoted(state, text);
        else addExpansion(state, text);
      } else {
        addQuoted(state, ch);
        this.i++;
      }
    }
    if (!toEnd) throw new ParseStop('a double quote is never closed');
  }

  /**
   * `$NAME`, `${...}`, `$(...)`, `$((...))`, backticks: returns the text as written. `quoted`:
   * inside double quotes (or a here-document), where a `'` in `${x:-'...'}` is an ordinary
   * character, so a `$(...)` after it still runs.
   */
  private readExpansion(state: WordState, quoted: boolean): string {
    const s = this.s;
    const start = this.i;
    if (s[start] === '`') {
      const inner = this.readBackticks();
      this.features.add('substitution');
      state.expansions.add('substitution');
      this.nestedSource(inner);
      return s.slice(start, this.i);
    }
    const next = s[start + 1];
    if (next === '(' && s[start + 2] === '(') {
      this.features.add('arithmetic');
      state.expansions.add('arithmetic');
      this.i += 3;
      this.nested(() => this.readArithmetic(state));
      return s.slice(start, this.i);
    }
    if (next === '(') {
      this.features.add('substitution');
      state.expansions.add('substitution');
      this.i += 2;
      this.nested(() => this.parseList(')', true));
      return s.slice(start, this.i);
    }
    if (next === '{') {
      state.expansions.add('variable');
      this.i += 2;
      this.nested(() => this.readBracedParameter(state, quoted));
      const text = s.slice(start, this.i);
      const evaluates = evaluatingExpansion(text);
      if (evaluates !== undefined) state.hidden ??= { why: evaluates, expansion: true };
      return text;
    }
    if (next !== undefined && /[A-Za-z_]/.test(next)) {
      state.expansions.add('variable');
      this.i += 2;
      while (this.i < s.length && /[A-Za-z0-9_]/.test(s[this.i] as string)) this.i++;
      return s.slice(start, this.i);
    }
    if (next !== undefined && /[0-9@*#?$!-]/.test(next)) {
      state.expansions.add('variable');
      this.i += 2;
      return s.slice(start, this.i);
    }
    // A `$` that starts nothing is an ordinary character.
    this.i++;
    return '$';
  }

  /** After `${`: up to the matching `}`, reading any substitution inside. */
  private readBracedParameter(state: WordState, quoted: boolean): void {
    const s = this.s;
    let depth = 1;
    const inner = newWordState();
    while (this.i < s.length) {
      const ch = s[this.i] as string;
      if (ch === '\\') {
        // `${x:-\$(cmd)}` leaves `$(cmd)` as text.
        state.hidden ??= hiddenText(s.slice(this.i + 1, this.i + 3));
        this.i += 2;
      } else if (ch === "'" && !quoted) {
        const close = s.indexOf("'", this.i + 1);
        if (close < 0) throw new ParseStop('a single quote inside ${...} is never closed');
        state.hidden ??= hiddenText(s.slice(this.i + 1, close));
        this.i = close + 1;
      } else if (ch === '$' && s[this.i + 1] === "'") {
        state.hidden ??= hiddenText(this.readAnsiC());
      } else if (ch === '"') {
        this.i++;
        this.readDoubleQuotedBody(inner, false);
      } else if (ch === '$' || ch === '`') {
        this.readExpansion(inner, quoted);
      } else if (ch === '{') {
        depth++;
        this.i++;
      } else if (ch === '}') {
        depth--;
        this.i++;
        if (depth === 0) {
          state.hidden ??= inner.hidden;
          return;
        }
      } else {
        this.i++;
      }
    }
    throw new ParseStop('a "${" is never closed');
  }

  /** After a command's `((` (or a `for ((`): the expression, with any hidden code in it recorded. */
  protected readArithmeticCommand(): void {
    const start = this.i;
    const state = newWordState();
    this.readArithmetic(state);
    if (state.hidden !== undefined) {
      const text = `((${this.s.slice(start, this.i)}`;
      const why = state.hidden.expansion ? state.hidden.why : `${JSON.stringify(text)} ${state.hidden.why}`;
      const entry: ShellHidden = { why };
      if (state.hidden.expansion) entry.expansion = true;
      this.hidden.push(entry);
    }
  }

  /** After `((` or `$((`: up to the matching `))`, reading any substitution inside. */
  private readArithmetic(state: WordState): void {
    const s = this.s;
    let depth = 0;
    while (this.i < s.length) {
      const ch = s[this.i] as string;
      if (ch === ')' && depth === 0) {
        if (s[this.i + 1] !== ')') throw new ParseStop('an arithmetic expression is not closed with "))"');
        this.i += 2;
        return;
      }
      if (ch === '(') depth++;
      if (ch === ')') depth--;
      if (ch === '$' || ch === '`') {
        const inner = newWordState();
        this.readExpansion(inner, true);
        state.hidden ??= inner.hidden;
        continue;
      }
      if (ch === "'" || ch === '"') throw new ParseStop('quotes inside an arithmetic expression are not evaluated');
      this.i++;
    }
    throw new ParseStop('an arithmetic expression "((" is never closed');
  }

  /** At a backtick: the command text inside, with its backslash escapes undone. */
  private readBackticks(): string {
    const s = this.s;
    let inner = '';
    this.i++;
    while (this.i < s.length) {
      const ch = s[this.i] as string;
      if (ch === '`') {
        this.i++;
        return inner;
      }
      if (ch === '\\' && this.i + 1 < s.length) {
        const next = s[this.i + 1] as string;
        inner += '$`\\'.includes(next) ? next : ch + next;
        this.i += 2;
        continue;
      }
      inner += ch;
      this.i++;
    }
    throw new ParseStop('a backtick substitution is never closed');
  }

  /** At `$'`: the decoded text of an ANSI-C quoted string. */
  private readAnsiC(): string {
    const s = this.s;
    let out = '';
    let i = this.i + 2;
    while (i < s.length && s[i] !== "'") {
      const ch = s[i] as string;
      if (ch !== '\\' || i + 1 >= s.length) {
        out += ch;
        i++;
        continue;
      }
      const decoded = decodeAnsiEscape(s, i + 1);
      out += decoded.text;
      i = decoded.end;
    }
    if (i >= s.length) throw new ParseStop("a $'...' quote is never closed");
    this.i = i + 1;
    return out;
  }

  // --- plumbing --------------------------------------------------------------------------------------

  protected skipBlanks(): void {
    const s = this.s;
    while (this.i < s.length) {
      const ch = s[this.i];
      if (ch === ' ' || ch === '\t') this.i++;
      else if (ch === '\\' && s[this.i + 1] === '\n') this.i += 2;
      else return;
    }
  }

  /** Run a recursive read one level deeper; a bound keeps hostile input from exhausting the stack. */
  protected nested(read: () => void): void {
    if (this.depth + this.level >= MAX_DEPTH) throw new ParseStop('the command nests too deeply to be read');
    this.level++;
    try {
      read();
    } finally {
      this.level--;
    }
  }

  protected mergeParsed(parsed: ParsedShell): void {
    this.commands.push(...parsed.commands);
    this.hidden.push(...parsed.hidden);
    for (const feature of parsed.features) this.features.add(feature);
    if (parsed.problems.length > 0) throw new ParseStop(parsed.problems[0] as string);
  }
}
