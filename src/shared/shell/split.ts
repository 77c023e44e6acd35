/**
 * Splitting a command line into its simple commands, for allow rules. Deliberately strict and
 * separate from the full reader in `parse.ts` (which deny rules and the read-only test use): this
 * one answers "is this a plain list of simple commands, and which?", and refuses everything else,
 * so an allow rule never approves what it cannot see whole. Pure code: the workflow bundle
 * imports it.
 */

/** One word of a simple command: its source text and its value after quote removal. */
export interface ShellToken {
  /** Exactly as written (quotes and escapes kept). */
  raw: string;
  /** After quote removal; `$VAR` and globs are left unexpanded. */
  value: string;
}

/** One simple command of a command line (a stage of a pipeline or an element of a list). */
export interface ShellSubCommand {
  /** Its source with redirections, blanks between words collapsed to one space. */
  text: string;
  /** The same without any redirection (`2>&1`, `> out.txt`, `< in.txt`, ...). */
  textWithoutRedirects: string;
  /** Its words, redirections excluded. */
  tokens: ShellToken[];
  /**
   * Targets of redirections that can create or change a file (`>`, `>>`, `>|`, `&>`, `<>`, ...).
   * Redirections to `/dev/null`, `/dev/stdout`, `/dev/stderr` and fd duplications (`2>&1`) are
   * not listed: they write no file.
   */
  fileWrites: string[];
}

export type ShellSplit =
  | {
      ok: true;
      /** The whole command line, trimmed, comments dropped, blank runs collapsed. */
      text: string;
      commands: ShellSubCommand[];
    }
  | {
      ok: false;
      /** `substitution`: `$(...)`, backticks, `<(...)`/`>(...)`; `unsupported`: anything else. */
      problem: 'substitution' | 'unsupported';
      detail: string;
    };

/** Words that start a compound command or change how the next one runs. */
const SHELL_RESERVED = new Set([
  '{',
  '}',
  '!',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'for',
  'while',
  'until',
  'do',
  'done',
  'case',
  'esac',
  'select',
  'function',
  'coproc',
  '[[',
  ']]',
]);
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);
const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);

class ShellSplitError extends Error {
  constructor(
    readonly problem: 'substitution' | 'unsupported',
    readonly detail: string,
  ) {
    super(detail);
  }
}

/**
 * Split `command` into the simple commands it runs, split at `&&`, `||`, `;`, `|`, `|&`, `&` and
 * newlines. Returns `ok: false` whenever the list cannot be known for sure from the text alone:
 * command or process substitution (`$(...)`, backticks, `<(...)`), subshells and groups (`( )`,
 * `{ }`), control structures (`if`, `for`, ...), here-documents, unterminated quotes, or an
 * operator with a missing command. Nothing here executes or expands anything.
 */
export function splitShellCommand(command: string): ShellSplit {
  try {
    return splitShellCommandOrThrow(command);
  } catch (error) {
    if (error instanceof ShellSplitError) return { ok: false, problem: error.problem, detail: error.detail };
    throw error;
  }
}

interface PendingCommand {
  text: string;
  bare: string;
  tokens: ShellToken[];
  fileWrites: string[];
  lastWasRedirect: boolean;
}

function splitShellCommandOrThrow(command: string): ShellSplit {
  const commands: ShellSubCommand[] = [];
  let whole = '';
  let current: PendingCommand = emptyCommand();
  /** The operator that ended the previous command, when it needs a command after it. */
  let pendingOperator: string | undefined;
  let spaceBefore = false;
  let i = 0;

  // The last character of `whole`, tracked because `endsWith` on a growing string flattens it
  // each time (quadratic on long commands).
  let wholeLast = '';
  const appendWhole = (text: string) => {
    whole += (spaceBefore && whole !== '' && wholeLast !== '\n' ? ' ' : '') + text;
    wholeLast = text[text.length - 1] ?? wholeLast;
  };
  const finishCommand = (operator: string) => {
    if (current.tokens.length === 0 && current.fileWrites.length === 0 && current.text === '') {
      // A newline with nothing before it is a blank line; anything else is a syntax error.
      if (operator === '\n') return;
      throw new ShellSplitError('unsupported', `"${operator}" has no command before it`);
    }
    if (current.tokens.length === 0) {
      throw new ShellSplitError('unsupported', 'a redirection without a command');
    }
    commands.push({
      text: current.text,
      textWithoutRedirects: current.bare,
      tokens: current.tokens,
      fileWrites: current.fileWrites,
    });
    current = emptyCommand();
    pendingOperator =
      operator === '&&' || operator === '||' || operator === '|' || operator === '|&' ? operator : undefined;
  };
  const addToken = (raw: string, isRedirect: boolean) => {
    const separator = spaceBefore && current.text !== '' ? ' ' : '';
    current.text += separator + raw;
    if (!isRedirect) {
      const bareSeparator = current.bare !== '' && (spaceBefore || current.lastWasRedirect) ? ' ' : '';
      current.bare += bareSeparator + raw;
    }
    current.lastWasRedirect = isRedirect;
    appendWhole(raw);
    spaceBefore = false;
  };

  while (i < command.length) {
    const ch = command[i] as string;
    if (ch === ' ' || ch === '\t') {
      spaceBefore = true;
      i++;
      continue;
    }
    if (ch === '\\' && command[i + 1] === '\n') {
      // A line continuation between words is just a blank.
      spaceBefore = true;
      i += 2;
      continue;
    }
    if (ch === '#') {
      while (i < command.length && command[i] !== '\n') i++;
      continue;
    }
    if (ch === '\n') {
      if (pendingOperator !== undefined && current.tokens.length === 0) {
        // `a &&` followed by a newline continues on the next line.
        i++;
        continue;
      }
      if (current.tokens.length > 0 || current.text !== '') {
        finishCommand('\n');
        whole = (/\s/.test(wholeLast) ? whole.trimEnd() : whole) + '\n';
        wholeLast = '\n';
      }
      spaceBefore = false;
      i++;
      continue;
    }
    if (ch === '(' || ch === ')') {
      throw new ShellSplitError('unsupported', 'subshells and ( ) groups are not evaluated');
    }
    if (ch === ';') {
      if (command[i + 1] === ';') throw new ShellSplitError('unsupported', '";;" (case statements) is not evaluated');
      finishCommand(';');
      appendWhole(';');
      spaceBefore = false;
      i++;
      continue;
    }
    if (ch === '|') {
      const operator = command[i + 1] === '|' ? '||' : command[i + 1] === '&' ? '|&' : '|';
      finishCommand(operator);
      appendWhole(operator);
      i += operator.length;
      continue;
    }
    if (ch === '&' && command[i + 1] !== '>') {
      const operator = command[i + 1] === '&' ? '&&' : '&';
      finishCommand(operator);
      appendWhole(operator);
      i += operator.length;
      continue;
    }
    const redirect = readRedirect(command, i);
    if (redirect) {
      if (redirect.fileWrite !== undefined) current.fileWrites.push(redirect.fileWrite);
      addToken(command.slice(i, redirect.end), true);
      i = redirect.end;
      continue;
    }
    const word = readShellWord(command, i);
    if (current.tokens.length === 0 && word.raw === word.value && SHELL_RESERVED.has(word.value)) {
      throw new ShellSplitError('unsupported', `shell keyword "${word.value}" (compound commands are not evaluated)`);
    }
    current.tokens.push({ raw: word.raw, value: word.value });
    addToken(word.raw, false);
    i = word.end;
  }

  if (current.tokens.length > 0 || current.text !== '') {
    finishCommand('end');
  } else if (pendingOperator !== undefined) {
    throw new ShellSplitError('unsupported', `the command ends with "${pendingOperator}"`);
  }
  if (commands.length === 0) throw new ShellSplitError('unsupported', 'the command is empty');
  return { ok: true, text: whole.trim(), commands };
}

function emptyCommand(): PendingCommand {
  return { text: '', bare: '', tokens: [], fileWrites: [], lastWasRedirect: false };
}

/**
 * Read a redirection starting at `start` (an optional fd number, the operator, and its target
 * word). Returns undefined when no redirection starts there.
 */
function readRedirect(command: string, start: number): { end: number; fileWrite?: string } | undefined {
  let i = start;
  while (i < command.length && /[0-9]/.test(command[i] as string)) i++;
  const rest = command.slice(i);
  let operator: string | undefined;
  if (i === start && rest.startsWith('&>>')) operator = '&>>';
  else if (i === start && rest.startsWith('&>')) operator = '&>';
  else {
    for (const candidate of ['<<<', '<<', '<>', '<&', '<', '>>', '>|', '>&', '>']) {
      if (rest.startsWith(candidate)) {
        operator = candidate;
        break;
      }
    }
  }
  if (operator === undefined) return undefined;
  if ((operator === '<' || operator === '>') && command[i + 1] === '(') {
    throw new ShellSplitError('substitution', 'process substitution <(...) or >(...)');
  }
  if (operator === '<<') throw new ShellSplitError('unsupported', 'here-documents (<<) are not evaluated');
  i += operator.length;
  while (command[i] === ' ' || command[i] === '\t') i++;
  if (i >= command.length || WORD_END.has(command[i] as string)) {
    throw new ShellSplitError('unsupported', `the redirection "${operator}" has no target`);
  }
  const target = readShellWord(command, i);
  const end = target.end;
  if (operator === '<' || operator === '<<<') return { end };
  if (operator === '<&' || operator === '>&') {
    if (/^(?:[0-9]+-?|-)$/.test(target.raw)) return { end };
    // `>&file` is bash for `&>file`; `<&file` is an error in bash, so refuse it.
    if (operator === '<&') throw new ShellSplitError('unsupported', `"<&${target.raw}" is not a file descriptor`);
  }
  if (target.raw === target.value && HARMLESS_TARGETS.has(target.value)) return { end };
  return { end, fileWrite: target.value };
}

/** Read one word starting at `start`; throws on substitutions and unterminated quotes. */
function readShellWord(command: string, start: number): { raw: string; value: string; end: number } {
  let value = '';
  let i = start;
  while (i < command.length) {
    const ch = command[i] as string;
    if (WORD_END.has(ch)) break;
    if (ch === '`') throw new ShellSplitError('substitution', 'command substitution with backticks');
    if (ch === '\\') {
      const next = command[i + 1];
      if (next === undefined) throw new ShellSplitError('unsupported', 'the command ends with a lone backslash');
      if (next !== '\n') value += next; // backslash-newline inside a word joins the two halves
      i += 2;
    } else if (ch === "'") {
      const close = command.indexOf("'", i + 1);
      if (close < 0) throw new ShellSplitError('unsupported', 'an unterminated single quote');
      value += command.slice(i + 1, close);
      i = close + 1;
    } else if (ch === '"') {
      i = readShellDoubleQuoted(command, i + 1, (text) => (value += text));
    } else if (ch === '$') {
      const next = command[i + 1];
      if (next === '(') throw new ShellSplitError('substitution', 'command substitution $(...)');
      if (next === "'") {
        // ANSI-C quoting: $'...' with backslash escapes; kept undecoded.
        let j = i + 2;
        while (j < command.length && command[j] !== "'") j += command[j] === '\\' ? 2 : 1;
        if (j >= command.length) throw new ShellSplitError('unsupported', "an unterminated $'...' quote");
        value += command.slice(i + 2, j);
        i = j + 1;
      } else if (next === '"') {
        i = readShellDoubleQuoted(command, i + 2, (text) => (value += text));
      } else if (next === '{') {
        const close = command.indexOf('}', i + 2);
        if (close < 0) throw new ShellSplitError('unsupported', 'an unterminated ${...}');
        const inner = command.slice(i, close + 1);
        if (inner.includes('`') || inner.includes('$(')) {
          throw new ShellSplitError('substitution', 'command substitution inside ${...}');
        }
        value += inner;
        i = close + 1;
      } else {
        value += ch;
        i++;
      }
    } else {
      value += ch;
      i++;
    }
  }
  return { raw: command.slice(start, i), value, end: i };
}

/** Read a double-quoted string after its opening quote; returns the index after the closing one. */
function readShellDoubleQuoted(command: string, start: number, emit: (text: string) => void): number {
  let text = '';
  for (let i = start; i < command.length; i++) {
    const ch = command[i] as string;
    if (ch === '"') {
      emit(text);
      return i + 1;
    }
    if (ch === '`') throw new ShellSplitError('substitution', 'command substitution with backticks');
    if (ch === '$' && command[i + 1] === '(') throw new ShellSplitError('substitution', 'command substitution $(...)');
    if (ch === '\\') {
      const next = command[i + 1];
      if (next === undefined) break;
      if ('$`"\\'.includes(next)) {
        text += next;
        i++;
      } else if (next === '\n') {
        i++;
      } else {
        text += ch;
      }
    } else {
      text += ch;
    }
  }
  throw new ShellSplitError('unsupported', 'an unterminated double quote');
}
