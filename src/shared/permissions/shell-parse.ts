/**
 * A reader for the bash the permission engine has to see through: every simple command a command
 * line can run, including those inside `$(...)`, backticks, `<(...)`, subshells, `{ ...; }`
 * groups, `if`/`while`/`for` bodies and function bodies, with each word's value after quote
 * removal (ANSI-C `$'...'` decoded) and a record of every expansion bash would still apply to it.
 *
 * It never guesses: whatever it cannot read (an unterminated quote, `case`, `coproc`, a
 * here-document without its end marker, nesting past a limit) becomes a `problem`, and callers
 * treat a line with problems as one whose commands are not all known. Nothing is executed or
 * expanded; the code is pure so the workflow bundle can run it.
 *
 * Bash also runs code hidden in text it has already expanded once: a quoted `'a[$(cmd)]'` handed
 * to `declare`, `printf -v`, `read`, `let`, `test -v` or any arithmetic context (also through a
 * variable holding it), a prompt string, `${x@P}`. The parser cannot know where such text ends
 * up, so it lists every place that holds some as `hidden`: a word whose quoted or escaped text
 * contains `$(` or a backtick, a here-document whose body does, a `${x@P}`, `${x@E}` or `${!x}`
 * expansion, a `for` variable named like a variable bash runs as code (`PS4`, `BASH_ENV`, ...).
 */

import { decodeAnsiEscape, escapeGlob, hasBraceExpansion } from './shell-words';

/** An expansion bash applies to a word before the program sees it. */
export type WordExpansion = 'variable' | 'substitution' | 'arithmetic' | 'process' | 'glob' | 'brace' | 'tilde';

/** One word of a command, as written and as bash will (or may) pass it on. */
export interface ShellWord {
  /** Exactly as written. */
  raw: string;
  /** After quote removal and ANSI-C decoding; expansions are left as written (`$X`, `*`, `~`). */
  value: string;
  /** True when bash applies no expansion: `value` is exactly what the program receives. */
  literal: boolean;
  expansions: WordExpansion[];
  /** True when the word may become several words or none (unquoted expansion, glob, brace, `"$@"`). */
  splits: boolean;
  /** The word as a glob: unquoted `*`, `?`, `[`, `]` kept, every other glob character escaped. */
  pattern: string;
  /** For a word that starts with an unquoted `~`: the user after it (`''` is the current user). */
  tildeUser?: string;
}

/** A redirection of a simple command. */
export interface ShellRedirect {
  /** `>`, `>>`, `>|`, `<`, `<>`, `<&`, `>&`, `&>`, `&>>`, `<<`, `<<-`, `<<<`. */
  operator: string;
  /** The file descriptor written before the operator, if any. */
  fd?: string;
  /** The target word (for a here-document, its delimiter). */
  target: ShellWord;
  /** For `<<` and `<<-`: the body, and whether bash expands it (an unquoted delimiter). */
  hereDocument?: ShellHereDocument;
}

/** A here-document's body, and whether bash expands it (an unquoted delimiter). */
export interface ShellHereDocument {
  body: string;
  expands: boolean;
}

/** One simple command: assignments, words (program first) and redirections. */
export interface ShellCommand {
  assignments: ShellWord[];
  words: ShellWord[];
  redirects: ShellRedirect[];
  /** Its standard input is the output of the previous stage of a pipeline. */
  piped: boolean;
  /** It sits inside a substitution (`$(...)`, backticks, `<(...)`), not on the line itself. */
  nested: boolean;
}

/** Shell constructs beyond plain lists and pipelines of simple commands. */
export type ShellFeature =
  | 'substitution'
  | 'process-substitution'
  | 'arithmetic'
  | 'subshell'
  | 'group'
  | 'control'
  | 'function'
  | 'here-document'
  | 'here-string'
  | 'background';

/** Text bash may run as code a second time, out of the parser's sight (see the module comment). */
export interface ShellHidden {
  /** Why, as a clause for the user. */
  why: string;
  /**
   * The word or here-document holding it: a caller that reads that text as a command line
   * itself (`bash -c '...'`, `trap '...'`) has followed the code and may disregard the entry.
   */
  source?: ShellWord | ShellHereDocument;
  /** A `${x@P}`-style expansion: bash evaluates it whatever program receives the word. */
  expansion?: true;
}

/** What {@link parseShell} read. */
export interface ParsedShell {
  /** Every simple command found, nested ones included, in source order. */
  commands: ShellCommand[];
  features: ShellFeature[];
  /** What could not be read. When not empty, `commands` may be incomplete. */
  problems: string[];
  /** Code bash may run a second time from text (see {@link ShellHidden}). */
  hidden: ShellHidden[];
}

/**
 * Variables whose value bash (or a shell it starts) runs as code or reads code from: prompts
 * (expanded with command substitution), `PROMPT_COMMAND`, start-up files (`BASH_ENV`, `ENV`),
 * imported functions (`BASH_FUNC_name%%`), and the option sets that turn tracing (`PS4`) on.
 */
export const CODE_VARIABLE = /^(?:PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_FUNC_.*)$/s;

const MAX_DEPTH = 24;
const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);
const COMPOUND_WORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', '!']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
const TILDE = /~([A-Za-z0-9._+-]*)(?=[/\s;&|<>()]|$)/y;

class ParseStop extends Error {}

/** Read `source` as bash would, without running or expanding anything. */
export function parseShell(source: string): ParsedShell {
  return new ShellParser(source, 0).parse();
}

/**
 * The words of a text that must be a single simple command with no redirection (an `env -S`
 * string); undefined when it is anything else.
 */
export function parseShellWords(source: string): ShellWord[] | undefined {
  const parsed = parseShell(source);
  if (parsed.problems.length > 0 || parsed.hidden.length > 0) return undefined;
  if (parsed.commands.length !== 1 || parsed.features.length > 0) return undefined;
  const [only] = parsed.commands;
  if (only === undefined || only.redirects.length > 0) return undefined;
  return [...only.assignments, ...only.words];
}

interface PendingHereDocument {
  delimiter: string;
  stripTabs: boolean;
  redirect: ShellRedirect;
}

interface WordState {
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

class ShellParser {
  private i = 0;
  /** Recursive reads under way in this parser (added to `depth` for the bound). */
  private level = 0;
  private readonly commands: ShellCommand[] = [];
  private readonly features = new Set<ShellFeature>();
  private readonly problems: string[] = [];
  private readonly hidden: ShellHidden[] = [];
  private readonly pending: PendingHereDocument[] = [];

  constructor(
    private readonly s: string,
    private readonly depth: number,
  ) {}

  parse(): ParsedShell {
    try {
      if (this.depth > MAX_DEPTH) throw new ParseStop('the command nests substitutions too deeply to be read');
      this.parseList(undefined, this.depth > 0);
      if (this.pending.length > 0) throw new ParseStop('a here-document has no body');
    } catch (error) {
      if (!(error instanceof ParseStop)) throw error;
      this.problems.push(error.message);
    }
    return { commands: this.commands, features: [...this.features], problems: this.problems, hidden: this.hidden };
  }

  // --- lists, pipelines and compound commands ---------------------------------------------------

  private parseList(end: ')' | undefined, nested: boolean): void {
    const s = this.s;
    let current = emptyCommand(nested, false);
    let dropTimeFlag = false;
    /** `&&`, `||` or `|` just read: a command must follow (possibly after newlines). */
    let pendingOperator: string | undefined;
    /** A keyword, group, subshell or function was read since the last separator. */
    let sawCompound = false;
    const empty = () =>
      current.words.length === 0 && current.assignments.length === 0 && current.redirects.length === 0;
    const atStart = () => current.words.length === 0 && current.assignments.length === 0;
    /** End the current command at `separator`; bash refuses an operator with nothing before it. */
    const separate = (separator: string) => {
      if (empty()) {
        if (separator === '\n' || separator === 'end') {
          if (pendingOperator !== undefined && separator === 'end' && !sawCompound) {
            throw new ParseStop(`the command ends with "${pendingOperator}"`);
          }
          return;
        }
        if (!sawCompound || pendingOperator !== undefined) {
          throw new ParseStop(`"${separator}" has no command before it`);
        }
      } else {
        this.commands.push(current);
        current = emptyCommand(nested, false);
      }
      sawCompound = false;
      pendingOperator = ['&&', '||', '|', '|&'].includes(separator) ? separator : undefined;
      if (separator === '|' || separator === '|&') current.piped = true;
    };

    for (;;) {
      this.skipBlanks();
      if (this.i >= s.length) {
        if (end !== undefined) throw new ParseStop('a "(" or "$(" is never closed');
        separate('end');
        return;
      }
      const ch = s[this.i] as string;
      const next = s[this.i + 1];
      if (ch === '#') {
        while (this.i < s.length && s[this.i] !== '\n') this.i++;
        continue;
      }
      if (ch === '\n') {
        separate('\n');
        this.i++;
        this.readHereDocumentBodies();
        continue;
      }
      if (ch === ')') {
        if (end === undefined) throw new ParseStop('a ")" closes nothing');
        separate('end');
        this.i++;
        return;
      }
      if (ch === ';') {
        if (next === ';' || next === '&') throw new ParseStop('case statements are not evaluated');
        separate(';');
        this.i++;
        continue;
      }
      if (ch === '&' && next !== '>') {
        if (next !== '&') this.features.add('background');
        separate(next === '&' ? '&&' : '&');
        this.i += next === '&' ? 2 : 1;
        continue;
      }
      if (ch === '|') {
        const operator = next === '|' ? '||' : next === '&' ? '|&' : '|';
        separate(operator);
        this.i += operator.length;
        continue;
      }
      pendingOperator = undefined;
      if (ch === '(') {
        if (atStart()) {
          if (next === '(') {
            this.features.add('arithmetic');
            this.i += 2;
            this.nested(() => this.readArithmeticCommand());
            sawCompound = true;
            continue;
          }
          this.features.add('subshell');
          this.i++;
          this.nested(() => this.parseList(')', nested));
          sawCompound = true;
          continue;
        }
        // `name () { ...; }`: a function definition. The name runs nothing; the body is read next.
        if (
          current.words.length === 1 &&
          s
            .slice(this.i + 1)
            .trimStart()
            .startsWith(')')
        ) {
          this.features.add('function');
          this.i = s.indexOf(')', this.i) + 1;
          current = emptyCommand(nested, current.piped);
          sawCompound = true;
          continue;
        }
        const last = current.assignments[current.assignments.length - 1];
        if (current.words.length === 0 && last !== undefined && last.raw.endsWith('=')) {
          this.readArrayLiteral(last);
          continue;
        }
        throw new ParseStop('a "(" in the middle of a command is not evaluated');
      }
      if ((ch === '<' || ch === '>') && next === '(') {
        current.words.push(this.readWord());
        continue;
      }
      if (this.readRedirect(current)) continue;

      const word = this.readWord();
      if (word.raw === '') throw new ParseStop(`"${ch}" is not evaluated here`);
      if (atStart() && word.raw === word.value) {
        if (dropTimeFlag && word.value === '-p') {
          dropTimeFlag = false;
          continue;
        }
        dropTimeFlag = false;
        if (this.readCompoundWord(word.value)) {
          if (word.value === 'time') dropTimeFlag = true;
          sawCompound = true;
          continue;
        }
      }
      if (atStart() && ASSIGNMENT.test(word.raw)) {
        current.assignments.push(word);
        continue;
      }
      current.words.push(word);
    }
  }

  /**
   * Handle a reserved word at the start of a command. Returns true when it was one: control
   * keywords are dropped (the commands between them are read as commands), `for`/`select`
   * headers are skipped, `case` and `coproc` are refused.
   */
  private readCompoundWord(word: string): boolean {
    if (COMPOUND_WORDS.has(word)) {
      this.features.add('control');
      return true;
    }
    if (word === '{' || word === '}') {
      this.features.add('group');
      return true;
    }
    if (word === 'time') return true;
    if (word === 'case') throw new ParseStop('case statements are not evaluated');
    if (word === 'coproc') throw new ParseStop('coproc is not evaluated');
    if (word === 'function') {
      this.features.add('function');
      this.skipBlanks();
      this.readWord();
      this.skipBlanks();
      if (this.s.startsWith('()', this.i)) this.i += 2;
      return true;
    }
    if (word === 'for' || word === 'select') {
      this.features.add('control');
      this.skipBlanks();
      if (this.s.startsWith('((', this.i)) {
        this.i += 2;
        this.readArithmeticCommand();
        return true;
      }
      const variable = this.readWord();
      if (CODE_VARIABLE.test(variable.value)) {
        this.hidden.push({
          why: `the ${word} loop sets ${variable.value}, which bash runs as code or reads code from`,
          source: variable,
        });
      }
      this.skipBlanks();
      const save = this.i;
      const maybeIn = this.i < this.s.length && !WORD_END.has(this.s[this.i] as string) ? this.readWord() : undefined;
      if (maybeIn?.raw !== 'in') {
        this.i = save;
        return true;
      }
      // The loop's words may hold substitutions; reading them records those commands.
      for (;;) {
        this.skipBlanks();
        const ch = this.s[this.i];
        if (ch === undefined || ch === ';' || ch === '\n') return true;
        if (WORD_END.has(ch)) throw new ParseStop(`"${ch}" in a for loop's word list is not evaluated`);
        this.readWord();
      }
    }
    return false;
  }

  /** `NAME=(a b c)`: the words of an array assignment, read for their substitutions. */
  private readArrayLiteral(assignment: ShellWord): void {
    this.i++;
    for (;;) {
      while (this.i < this.s.length && ' \t\n'.includes(this.s[this.i] as string)) this.i++;
      const ch = this.s[this.i];
      if (ch === undefined) throw new ParseStop('an array assignment is never closed');
      if (ch === ')') {
        this.i++;
        break;
      }
      if (WORD_END.has(ch)) throw new ParseStop(`"${ch}" in an array assignment is not evaluated`);
      const word = this.readWord();
      assignment.raw += ` ${word.raw}`;
    }
    assignment.literal = false;
    assignment.splits = true;
  }

  // --- redirections and here-documents ----------------------------------------------------------

  private readRedirect(current: ShellCommand): boolean {
    const s = this.s;
    let j = this.i;
    while (j < s.length && isDigit(s[j])) j++;
    const rest = s.slice(j, j + 3);
    let operator: string | undefined;
    if (j === this.i && rest.startsWith('&>')) {
      operator = rest.startsWith('&>>') ? '&>>' : '&>';
    } else {
      for (const candidate of ['<<<', '<<-', '<<', '<>', '<&', '<', '>>', '>|', '>&', '>']) {
        if (rest.startsWith(candidate)) {
          operator = candidate;
          break;
        }
      }
    }
    if (operator === undefined) return false;
    const fd = j > this.i ? s.slice(this.i, j) : undefined;
    this.i = j + operator.length;
    this.skipBlanks();
    const substitution = (s[this.i] === '<' || s[this.i] === '>') && s[this.i + 1] === '(';
    if (this.i >= s.length || (WORD_END.has(s[this.i] as string) && !substitution)) {
      throw new ParseStop(`the redirection "${operator}" has no target`);
    }
    const target = this.readWord();
    const redirect: ShellRedirect = fd === undefined ? { operator, target } : { operator, fd, target };
    if (operator === '<<' || operator === '<<-') {
      this.features.add('here-document');
      this.pending.push({ delimiter: target.value, stripTabs: operator === '<<-', redirect });
      redirect.hereDocument = { body: '', expands: target.raw === target.value };
    } else if (operator === '<<<') {
      this.features.add('here-string');
    }
    current.redirects.push(redirect);
    return true;
  }

  /** After a newline: the bodies of the here-documents started on the line before. */
  private readHereDocumentBodies(): void {
    const s = this.s;
    while (this.pending.length > 0) {
      const doc = this.pending.shift() as PendingHereDocument;
      const lines: string[] = [];
      for (;;) {
        if (this.i >= s.length) throw new ParseStop(`the here-document has no end marker "${doc.delimiter}"`);
        const newline = s.indexOf('\n', this.i);
        const end = newline < 0 ? s.length : newline;
        let line = s.slice(this.i, end);
        if (doc.stripTabs) line = line.replace(/^\t+/, '');
        this.i = newline < 0 ? s.length : newline + 1;
        if (line === doc.delimiter) break;
        lines.push(line);
      }
      const body = lines.length === 0 ? '' : lines.join('\n') + '\n';
      const hereDocument = doc.redirect.hereDocument as ShellHereDocument;
      hereDocument.body = body;
      let hidden = hereDocument.expands ? undefined : hiddenInText(body);
      if (hereDocument.expands) {
        // An unquoted delimiter: the body is expanded like a double-quoted string, and any
        // substitution in it runs whatever program reads it.
        const inner = new ShellParser(body, this.depth + 1);
        const state = newWordState();
        inner.readDoubleQuotedBody(state, true);
        this.merge(inner);
        hereDocument.expands = state.expansions.size > 0;
        hidden = state.hidden?.why;
      }
      if (hidden !== undefined) {
        this.hidden.push({ why: `the here-document ending at "${doc.delimiter}" ${hidden}`, source: hereDocument });
      }
    }
  }

  // --- words ---------------------------------------------------------------------------------------

  private readWord(): ShellWord {
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
  private readDoubleQuotedBody(state: WordState, toEnd: boolean): void {
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
  private readArithmeticCommand(): void {
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

  private skipBlanks(): void {
    const s = this.s;
    while (this.i < s.length) {
      const ch = s[this.i];
      if (ch === ' ' || ch === '\t') this.i++;
      else if (ch === '\\' && s[this.i + 1] === '\n') this.i += 2;
      else return;
    }
  }

  /** Run a recursive read one level deeper; a bound keeps hostile input from exhausting the stack. */
  private nested(read: () => void): void {
    if (this.depth + this.level >= MAX_DEPTH) throw new ParseStop('the command nests too deeply to be read');
    this.level++;
    try {
      read();
    } finally {
      this.level--;
    }
  }

  private nestedSource(source: string): void {
    const inner = new ShellParser(source, this.depth + this.level + 1);
    const parsed = inner.parse();
    for (const command of parsed.commands) command.nested = true;
    this.mergeParsed(parsed);
  }

  private merge(inner: ShellParser): void {
    this.mergeParsed({
      commands: inner.commands,
      features: [...inner.features],
      problems: inner.problems,
      hidden: inner.hidden,
    });
  }

  private mergeParsed(parsed: ParsedShell): void {
    this.commands.push(...parsed.commands);
    this.hidden.push(...parsed.hidden);
    for (const feature of parsed.features) this.features.add(feature);
    if (parsed.problems.length > 0) throw new ParseStop(parsed.problems[0] as string);
  }
}

function isDigit(ch: string | undefined): boolean {
  return ch !== undefined && ch >= '0' && ch <= '9';
}

function emptyCommand(nested: boolean, piped: boolean): ShellCommand {
  return { assignments: [], words: [], redirects: [], piped, nested };
}

function newWordState(): WordState {
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
function addQuoted(state: WordState, text: string): void {
  noteLiteral(state, text);
  state.value += text;
  state.pattern += escapeGlob(text);
}

/** An expansion's text, as written: bash replaces it, so it does not join the literal text. */
function addExpansion(state: WordState, text: string): void {
  state.value += text;
  state.pattern += escapeGlob(text);
  state.lastLiteral = '';
}

/** Record literal text, noticing a `$(` or backtick in it (also split across quotes: `'$'"("`). */
function noteLiteral(state: WordState, text: string): void {
  if (text === '') return;
  state.hidden ??= hiddenText(state.lastLiteral + text);
  state.lastLiteral = text[text.length - 1] as string;
}

/** Why `text` (literal text) hides code, or undefined. */
function hiddenInText(text: string): string | undefined {
  const what = text.includes('$(') ? '"$("' : text.includes('`') ? 'a backtick' : undefined;
  if (what === undefined) return undefined;
  return `holds ${what} as quoted text, which bash runs as a command substitution if it evaluates the text again (an array subscript, arithmetic, a prompt)`;
}

function hiddenText(text: string): { why: string } | undefined {
  const why = hiddenInText(text);
  return why === undefined ? undefined : { why };
}

/**
 * Why a `${...}` expansion (as written) evaluates a value as code, or undefined: `${x@P}` expands
 * the value as a prompt (running its command substitutions), `${x@E}` decodes escapes into text
 * that may then run, `${!x}` looks up the variable the value names (an array subscript in the
 * name runs commands). `${!x[@]}` and `${!prefix*}` only list names.
 */
function evaluatingExpansion(text: string): string | undefined {
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
