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
 *
 * Words (quotes, escapes, expansions) are read by `word-reader.ts`; lists, compound commands,
 * redirections and here-documents here.
 */
import type { ParsedShell, ShellCommand, ShellHereDocument, ShellRedirect, ShellWord } from './types';
import { MAX_DEPTH, ParseStop, WORD_END, WordReader } from './word-reader';
import { hiddenInText, newWordState } from './words';

/**
 * Variables whose value bash (or a shell it starts) runs as code or reads code from: prompts
 * (expanded with command substitution), `PROMPT_COMMAND`, start-up files (`BASH_ENV`, `ENV`),
 * imported functions (`BASH_FUNC_name%%`), and the option sets that turn tracing (`PS4`) on.
 */
export const CODE_VARIABLE = /^(?:PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|BASH_FUNC_.*)$/s;
const COMPOUND_WORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', '!']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;

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

/**
 * The reader of lists, pipelines, compound commands, redirections and here-documents; the words
 * in them are read by {@link WordReader}.
 */
class ShellParser extends WordReader {
  private readonly pending: PendingHereDocument[] = [];

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

  protected override parseList(end: ')' | undefined, nested: boolean): void {
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

  protected override nestedSource(source: string): void {
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
}

function isDigit(ch: string | undefined): boolean {
  return ch !== undefined && ch >= '0' && ch <= '9';
}

function emptyCommand(nested: boolean, piped: boolean): ShellCommand {
  return { assignments: [], words: [], redirects: [], piped, nested };
}
