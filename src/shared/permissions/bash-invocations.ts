/**
 * What a Bash command line will really run, for deny and ask rules: every program invocation,
 * with the program normalised to its name (`/usr/bin/../bin/rm` → `rm`; quotes, backslashes and
 * `$'\x72m'` already undone by the parser), looked into through
 * - wrappers that run the rest of their arguments: `env` (also `env -S '...'`), `command`,
 *   `builtin`, `exec`, `nohup`, `time`, `nice`, `timeout`, `stdbuf`, `ionice`, `setsid`, `chroot`,
 *   `sudo`, `doas`, `xargs`, `busybox`, and looser ones (`strace`, `watch`, `su`, `flock`, ...)
 *   where any later word may be the program;
 * - programs that run a command line of their own: `sh -c`/`bash -c` (any shell), a shell reading
 *   a here-string or here-document, `eval`, `trap`, `alias`, `find -exec/-execdir/-ok/-okdir`,
 *   `hash -p`.
 *
 * A program that cannot be known from the text (a variable, a substitution, a glob or brace
 * expansion, a shell reading commands from a pipe) is recorded with `program: undefined`: the
 * caller must assume a deny rule might match it. Scripts run from files (`bash x.sh`,
 * `source x.sh`, `make`, `npm test`) are not looked into: rules match the command line, and the OS
 * sandbox is what confines the rest.
 */
import { parseShell, parseShellWords, type ParsedShell, type ShellCommand, type ShellWord } from './shell-parse';
import { LOOSE_RUNNERS, unwrap, WRAPPERS, xargsReplaceString, type Unwrapped } from './bash-wrappers';

/** One program the command line runs. */
export interface Invocation {
  /** The program word and its arguments. */
  words: ShellWord[];
  /** The program's name (basename), or undefined when it is only known once the command runs. */
  program: string | undefined;
  /** For a program only known when it runs: why, when the words alone do not show it. */
  why?: string;
}

/** Everything {@link readBashCommand} found. */
export interface BashReading {
  parsed: ParsedShell;
  invocations: Invocation[];
  /** Parts that could not be read: whatever they run is unknown, so any deny rule might match. */
  unreadable: string[];
}

const MAX_DEPTH = 8;
const MAX_INVOCATIONS = 2000;
/**
 * Words and characters the reader may look at in all, nested readings included. Hostile input
 * (`eval eval eval ...`, wrappers inside wrappers) must not make the workflow task time out;
 * past the budget the command counts as unreadable.
 */
const MIN_BUDGET = 200_000;
const SHELLS = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'lksh',
  'ash',
  'yash',
  'posh',
  'fish',
  'csh',
  'tcsh',
  'rbash',
]);
/** Paths through which a script is really the program's standard input. */
const STDIN_PATHS = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);
/** Read `command` and list what it runs (see the module comment). */
export function readBashCommand(command: string): BashReading {
  const reader = new InvocationReader(Math.max(MIN_BUDGET, 3 * command.length));
  const parsed = parseShell(command);
  reader.readParsed(parsed, 0);
  return { parsed, invocations: reader.invocations, unreadable: reader.unreadable };
}

/** The program name a word will run, or undefined when it is only known once the command runs. */
export function programName(word: ShellWord | undefined): string | undefined {
  if (word === undefined) return undefined;
  let name: string;
  if (word.literal) {
    name = word.value.slice(word.value.lastIndexOf('/') + 1);
  } else if (word.expansions.every((expansion) => expansion === 'tilde' || expansion === 'glob')) {
    // `~/bin/rm` or `/???/rm`: whatever the directory part becomes, the last segment is literal.
    const slash = word.pattern.lastIndexOf('/');
    const last = word.pattern.slice(slash + 1);
    if (slash < 0 || /(?:^|[^\\])[*?[]/.test(last)) return undefined;
    name = last.replace(/\\(.)/g, '$1');
  } else {
    return undefined;
  }
  return name === '' ? undefined : name;
}

const TOO_COMPLEX = 'the command is too complex to be read';

/** What `xargs` appends from its input: arguments only known when it runs. */
const INPUT_WORD: ShellWord = {
  raw: '<input>',
  value: '<input>',
  literal: false,
  expansions: ['substitution'],
  splits: true,
  pattern: '<input>',
};

/** A word into which `xargs -I` or `find -exec` puts input: only known when it runs. */
function fromInput(word: ShellWord, placeholder: string): ShellWord {
  if (placeholder === '' || !word.value.includes(placeholder)) return word;
  return { ...word, literal: false, expansions: [...word.expansions, 'substitution'] };
}
/** git's global options that take the next word as their value. */
const GIT_GLOBAL_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--config-env',
  '--exec-path',
]);

type Stdin = { kind: 'none' | 'pipe' | 'file' | 'unknown' } | { kind: 'text'; text: string };

class InvocationReader {
  readonly invocations: Invocation[] = [];
  readonly unreadable: string[] = [];

  constructor(private budget: number) {}

  /** Spend `cost` of the budget; false (and the command unreadable) once it is gone. */
  private spend(cost: number): boolean {
    this.budget -= cost;
    if (this.budget >= 0) return true;
    if (!this.unreadable.includes(TOO_COMPLEX)) this.unreadable.push(TOO_COMPLEX);
    return false;
  }

  readParsed(parsed: ParsedShell, depth: number): void {
    this.unreadable.push(...parsed.problems);
    for (const command of parsed.commands) this.invoke(command.words, stdinOf(command), depth);
  }

  /**
   * Read a command line run by another program. `partial`: the text still holds expansions the
   * outer shell makes first, so it is read only for what it certainly runs (its problems do not
   * count: the caller has already recorded the part as unknown).
   */
  private readLine(line: string, depth: number, partial = false): void {
    if (depth > MAX_DEPTH) {
      if (!partial) this.unreadable.push('command lines nest too deeply to be read');
      return;
    }
    if (!this.spend(line.length)) return;
    const parsed = parseShell(line);
    this.readParsed(partial ? { ...parsed, problems: [] } : parsed, depth);
  }

  private unknown(words: ShellWord[], why?: string): void {
    this.invocations.push(why === undefined ? { words, program: undefined } : { words, program: undefined, why });
  }

  private invoke(words: ShellWord[], stdin: Stdin, depth: number): void {
    if (words.length === 0) return;
    if (this.invocations.length >= MAX_INVOCATIONS || depth > MAX_DEPTH || !this.spend(words.length)) {
      if (!this.unreadable.includes(TOO_COMPLEX)) this.unreadable.push(TOO_COMPLEX);
      return;
    }
    const program = programName(words[0]);
    this.invocations.push({ words, program });
    if (program === undefined) return;
    const args = words.slice(1);
    const spec = WRAPPERS[program];
    if (spec !== undefined) return this.invokeWrapped(program, unwrap(args, spec), stdin, depth);
    if (SHELLS.has(program)) return this.invokeShell(words, stdin, depth);
    if (LOOSE_RUNNERS.has(program)) return this.invokeLoosely(args, stdin, depth);
    switch (program) {
      case 'eval':
        return this.readWords(args[0]?.value === '--' ? args.slice(1) : args, depth);
      case 'source':
      case '.':
        return this.invokeScript(words, args[0], stdin, depth);
      case 'trap':
        return this.invokeTrap(args, depth);
      case 'alias':
        for (const arg of args) {
          const equals = arg.value.indexOf('=');
          if (!arg.literal) this.unknown([arg]);
          else if (equals > 0) this.readLine(arg.value.slice(equals + 1), depth + 1);
        }
        return;
      case 'hash': {
        const path = args.findIndex((arg) => arg.value === '-p');
        const target = path >= 0 ? args[path + 1] : undefined;
        if (target !== undefined) this.invoke([target], stdin, depth + 1);
        return;
      }
      case 'find':
        return this.invokeFindActions(args, depth);
      case 'git':
        return this.invokeGitSubcommand(words);
      default:
        return;
    }
  }

  private invokeWrapped(program: string, unwrapped: Unwrapped, stdin: Stdin, depth: number): void {
    if (unwrapped.kind === 'unknown') return this.unknown(unwrapped.words);
    if (unwrapped.kind === 'unsure') return this.invokeLoosely(unwrapped.words, stdin, depth);
    const options = unwrapped.options;
    if (program === 'command' && (options.has('v') || options.has('V'))) return; // a lookup; nothing runs
    if (program === 'sudo' && options.has('e')) return; // sudoedit edits files; it runs no program
    if (program === 'doas' && options.has('C')) return; // checks a configuration file
    let words = unwrapped.kind === 'program' ? unwrapped.words : [];
    if (program === 'env') {
      const split = options.get('S') ?? options.get('--split-string');
      if (split !== undefined) {
        const pieces = split.literal ? parseShellWords(split.value) : undefined;
        if (pieces === undefined) return this.unknown([split, ...words]);
        words = [...pieces, ...words];
      }
    }
    // `xargs` with no program runs echo; the others with none just run nothing.
    if (words.length === 0) return;
    if (program === 'xargs') {
      const replace = xargsReplaceString(options);
      if (replace !== undefined && words[0]?.value.includes(replace) === true) {
        return this.unknown(words, `xargs runs a program named by its input (${JSON.stringify(words[0]?.raw)})`);
      }
      // The input becomes arguments: in place of the replace string, else after the last word.
      words = replace === undefined ? [...words, INPUT_WORD] : words.map((word) => fromInput(word, replace));
    }
    this.invoke(words, program === 'xargs' ? { kind: 'none' } : stdin, depth + 1);
  }

  /** `bash -c '...'`, `bash script`, `bash` reading its input. */
  private invokeShell(words: ShellWord[], stdin: Stdin, depth: number): void {
    const args = words.slice(1);
    let i = 0;
    let commandMode = false;
    let readsStdin = false;
    while (i < args.length) {
      const arg = args[i] as ShellWord;
      if (!arg.literal) {
        if (commandMode) break; // the commands themselves, handled below
        return this.unknown(words, `the shell's options ${JSON.stringify(arg.raw)} are only known when it runs`);
      }
      const value = arg.value;
      if (value === '--' || value === '-') {
        i++;
        break;
      }
      if (value.startsWith('--')) {
        i += value === '--rcfile' || value === '--init-file' ? 2 : 1;
        continue;
      }
      if ((value.startsWith('-') || value.startsWith('+')) && value.length > 1) {
        const letters = value.slice(1);
        commandMode ||= letters.includes('c');
        readsStdin ||= letters.includes('s');
        // `-o pipefail`, `-O extglob`: each such letter takes the next word.
        i += 1 + [...letters].filter((letter) => letter === 'o' || letter === 'O').length;
        continue;
      }
      break;
    }
    if (commandMode) {
      const body = args[i];
      if (body === undefined) return;
      if (!body.literal) this.unknown(words, `the commands ${JSON.stringify(body.raw)} are only known when it runs`);
      // Even then, what is written out (`bash -c "rm $X"`) is read for sure matches.
      return this.readLine(body.value, depth + 1, !body.literal);
    }
    if (!readsStdin && i < args.length) return this.invokeScript(words, args[i], stdin, depth);
    this.readStdin(words, stdin, depth);
  }

  /** A script operand: a file is not looked into, but standard input or a substitution is. */
  private invokeScript(words: ShellWord[], script: ShellWord | undefined, stdin: Stdin, depth: number): void {
    if (script === undefined) return;
    if (!script.literal)
      return this.unknown(words, `the script ${JSON.stringify(script.raw)} is only known when it runs`);
    if (STDIN_PATHS.has(script.value)) this.readStdin(words, stdin, depth);
  }

  /** A shell (or `source`) running the commands on its standard input. */
  private readStdin(words: ShellWord[], stdin: Stdin, depth: number): void {
    const name = JSON.stringify(words[0]?.raw ?? '');
    switch (stdin.kind) {
      case 'text':
        return this.readLine(stdin.text, depth + 1);
      case 'pipe':
        return this.unknown(words, `${name} runs commands read from a pipe, which are only known when it runs`);
      case 'unknown':
        return this.unknown(words, `${name} runs commands from its input, which is only known when it runs`);
      default:
        return;
    }
  }

  private readWords(args: ShellWord[], depth: number): void {
    if (args.length === 0) return;
    const unknown = args.find((arg) => !arg.literal);
    if (unknown !== undefined) {
      this.unknown(args, `eval runs ${JSON.stringify(unknown.raw)}, which is only known when it runs`);
    }
    this.readLine(args.map((arg) => arg.value).join(' '), depth + 1, unknown !== undefined);
  }

  private invokeTrap(args: ShellWord[], depth: number): void {
    let i = 0;
    while (i < args.length && ['-l', '-p', '-P', '--'].includes((args[i] as ShellWord).value)) i++;
    const action = args[i];
    // With a single argument, that argument is a signal to reset, not an action.
    if (action === undefined || args.length - i < 2) return;
    if (!action.literal) return this.unknown([action]);
    if (action.value !== '-') this.readLine(action.value, depth + 1);
  }

  private invokeFindActions(args: ShellWord[], depth: number): void {
    for (let i = 0; i < args.length; i++) {
      const primary = (args[i] as ShellWord).value;
      if (!['-exec', '-execdir', '-ok', '-okdir'].includes(primary)) continue;
      let end = i + 1;
      while (end < args.length) {
        const value = (args[end] as ShellWord).value;
        if (value === ';' || (value === '+' && args[end - 1]?.value === '{}')) break;
        end++;
      }
      // `{}` becomes each file found: a name nobody knows yet.
      const action = args.slice(i + 1, end).map((word) => fromInput(word, '{}'));
      if (action[0]?.value.includes('{}') === true) {
        this.unknown(action, `find ${primary} runs the files it finds (${JSON.stringify(action[0]?.raw)})`);
      } else {
        this.invoke(action, { kind: 'none' }, depth + 1);
      }
      i = end;
    }
  }

  /**
   * `git -C dir push`, `git -c x=y push`: the same invocation without git's global options, so a
   * rule such as `Bash(git push:*)` sees the subcommand that runs.
   */
  private invokeGitSubcommand(words: ShellWord[]): void {
    let i = 1;
    while (i < words.length) {
      const word = words[i] as ShellWord;
      if (!word.literal || !word.value.startsWith('-') || word.value === '--') break;
      i += GIT_GLOBAL_WITH_VALUE.has(word.value) ? 2 : 1;
    }
    if (i > 1 && i < words.length) {
      this.invocations.push({ words: [words[0] as ShellWord, ...words.slice(i)], program: 'git' });
    }
  }

  /** Every later word may be the program; quoted command strings are read as command lines. */
  private invokeLoosely(args: ShellWord[], stdin: Stdin, depth: number): void {
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as ShellWord;
      if (!arg.literal) return this.unknown(args.slice(i));
      if (arg.value.startsWith('-')) continue;
      if (/[\s;&|]/.test(arg.value)) this.readLine(arg.value, depth + 1);
      else this.invoke(args.slice(i), stdin, depth + 1);
    }
  }
}

function stdinOf(command: ShellCommand): Stdin {
  let stdin: Stdin = { kind: command.piped ? 'pipe' : 'none' };
  for (const redirect of command.redirects) {
    if (redirect.fd !== undefined && redirect.fd !== '0') continue;
    if (redirect.operator === '<<<') {
      stdin = redirect.target.literal ? { kind: 'text', text: redirect.target.value } : { kind: 'unknown' };
    } else if (redirect.operator === '<<' || redirect.operator === '<<-') {
      const doc = redirect.hereDocument;
      stdin = doc !== undefined && !doc.expands ? { kind: 'text', text: doc.body } : { kind: 'unknown' };
    } else if (redirect.operator === '<' || redirect.operator === '<>') {
      // `< <(echo ...)` or `< $F`: what is read is only known when it runs.
      stdin = redirect.target.literal ? { kind: 'file' } : { kind: 'unknown' };
    } else if (redirect.operator === '<&') {
      stdin = { kind: 'unknown' };
    }
  }
  return stdin;
}
