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
 *   `hash -p`, the callbacks of `mapfile -C`/`readarray -C`/`compgen -C`/`complete -C`, and
 *   environment entries bash runs: `PROMPT_COMMAND=...` and imported functions
 *   (`env 'BASH_FUNC_ls%%=() { ...; }'`, read as the function's body).
 *
 * Code bash may run a second time from text (`hidden`, see `shell-parse.ts`: `'a[$(cmd)]'` handed
 * to `declare`, `${x@P}`, ...) is kept apart: what the reader reads as a command line itself is
 * followed and dropped from the list; the rest stays, as do settings of variables bash runs as
 * code or reads code from (`PS4`, `BASH_ENV`, `ENV`, `SHELLOPTS`, ...) and `bind -x`/`fc`, which
 * run commands only known when they run. Any of it means any Bash deny or ask rule might match.
 *
 * A program that cannot be known from the text (a variable, a substitution, a glob or brace
 * expansion, a shell reading commands from a pipe) is recorded with `program: undefined`: the
 * caller must assume a deny rule might match it. Scripts run from files (`bash x.sh`, `make`,
 * `npm test`) are not looked into: rules match the command line, and the OS sandbox is what
 * confines the rest. Files bash itself runs (`source x.sh`, `. x.sh`, `--rcfile x.sh`) count as
 * hidden code, like the file `BASH_ENV` names.
 */
import {
  CODE_VARIABLE,
  parseShell,
  parseShellWords,
  type ParsedShell,
  type ShellCommand,
  type ShellHereDocument,
  type ShellHidden,
  type ShellWord,
} from './shell-parse';
import { LOOSE_RUNNERS, unwrap, WRAPPERS, xargsReplaceString, type Unwrapped } from './bash-wrappers';
import { gitDangers, GIT_PROGRAM_VARIABLE } from './git-invocation';
import { engineAtLeast } from './types';

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
  /**
   * Code bash may run a second time from text, not followed as commands (see the module
   * comment): whatever it runs is unknown, so any deny rule might match.
   */
  hidden: BashHidden[];
}

/** One piece of {@link BashReading.hidden}. */
export interface BashHidden {
  why: string;
  /** A `${x@P}`-style expansion, evaluated whatever program receives the word. */
  expansion?: true;
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
export function readBashCommand(command: string, engine?: number): BashReading {
  const reader = new InvocationReader(Math.max(MIN_BUDGET, 3 * command.length), engine);
  const parsed = parseShell(command);
  reader.readParsed(parsed, 0);
  return { parsed, invocations: reader.invocations, unreadable: reader.unreadable, hidden: reader.hidden() };
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
/** More of them, read from generation 2 on. */
const GIT_GLOBAL_WITH_VALUE_2 = new Set(['--attr-source', '--shallow-file', '--super-prefix', '--list-cmds']);
const GIT_GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env']);

type Stdin =
  | { kind: 'none' | 'pipe' | 'file' | 'unknown' }
  | { kind: 'text'; text: string; source: ShellWord | ShellHereDocument };

/**
 * Builtins that set (or export) variables named by their arguments: an argument naming a
 * variable of CODE_VARIABLE (`read PS4`, `printf -v PS4`, `declare -n r=PS4`) sets code.
 */
const VARIABLE_SETTERS = new Set([
  'declare',
  'typeset',
  'local',
  'export',
  'readonly',
  'read',
  'printf',
  'mapfile',
  'readarray',
  'getopts',
  'wait',
  'let',
  'unset',
]);
/** A CODE_VARIABLE name anywhere in a word (`PS4`, `-vPS4`, `r=PS4`). */
const NAMES_CODE_VARIABLE =
  /(?:^-[A-Za-z]*|^|[^A-Za-z0-9_])(?:PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|SHELLOPTS|BASHOPTS)(?![A-Za-z0-9_])|BASH_FUNC_/;
/** `NAME=value`, `NAME+=value`, `NAME[i]=value`, and env's `BASH_FUNC_name%%=value`. */
const SETTING = /^(BASH_FUNC_[^=]*|[A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=/s;
/** Options of `mapfile`/`readarray` that take a value. */
const MAPFILE_VALUES = 'dnOsuCc';
/** Options of `compgen`/`complete` that take a value. */
const COMPLETE_VALUES = 'oAGWFCXPS';

class InvocationReader {
  readonly invocations: Invocation[] = [];
  readonly unreadable: string[] = [];
  /** Hidden code the parser found, in every line read. */
  private readonly found: ShellHidden[] = [];
  /** Hidden code the reader found (settings of code variables, `bind -x`, ...). */
  private readonly own: BashHidden[] = [];
  /** What changes where programs are found (generation 3); it matters when git runs too. */
  private readonly pathChanges: string[] = [];
  /** Words and here-documents whose text was read as a command line. */
  private readonly followed = new Set<ShellWord | ShellHereDocument>();

  constructor(
    private budget: number,
    /** The engine generation (`PermissionContext.engine`): what it reads besides the words. */
    private readonly engine: number | undefined,
  ) {}

  /** Generation 2: git's configuration and sourced files count (see `git-invocation.ts`). */
  private get gitAware(): boolean {
    return engineAtLeast(this.engine, 2);
  }

  /** Generation 3: a changed PATH (`PATH=/usr/bin git`, `command -p git`) finds git around its shim. */
  private get pathAware(): boolean {
    return engineAtLeast(this.engine, 3);
  }

  /** The hidden code not followed, once everything is read. */
  hidden(): BashHidden[] {
    const out: BashHidden[] = [...this.own];
    const [change] = this.pathChanges;
    if (change !== undefined && this.invocations.some((call) => call.program === 'git' || call.program === undefined)) {
      out.push({
        why: `${change}, so git may be found around the worker's git, which keeps the repository's config from running programs`,
      });
    }
    for (const entry of this.found) {
      if (entry.source !== undefined && this.followed.has(entry.source)) continue;
      out.push(entry.expansion ? { why: entry.why, expansion: true } : { why: entry.why });
    }
    return out;
  }

  /** Read `word`'s text as a command line (it is followed, no longer hidden). */
  private follow(word: ShellWord, depth: number, partial = false): void {
    this.followed.add(word);
    this.readLine(word.value, depth, partial);
  }

  /** Spend `cost` of the budget; false (and the command unreadable) once it is gone. */
  private spend(cost: number): boolean {
    this.budget -= cost;
    if (this.budget >= 0) return true;
    if (!this.unreadable.includes(TOO_COMPLEX)) this.unreadable.push(TOO_COMPLEX);
    return false;
  }

  readParsed(parsed: ParsedShell, depth: number): void {
    this.unreadable.push(...parsed.problems);
    this.found.push(...parsed.hidden);
    for (const command of parsed.commands) {
      for (const assignment of command.assignments) this.readSetting(assignment, depth);
      this.invoke(command.words, stdinOf(command), depth);
    }
  }

  /**
   * A `NAME=value` word (an assignment, an argument of `export`/`declare`/`env`/`sudo`): true when
   * it sets a variable bash runs as code, which is then read (`PROMPT_COMMAND`, imported
   * functions) or recorded as hidden.
   */
  private readSetting(word: ShellWord, depth: number): boolean {
    const match = SETTING.exec(word.value);
    const name = match?.[1];
    if (name === 'PATH' && this.pathAware) {
      this.pathChanges.push(`${JSON.stringify(word.raw)} sets PATH`);
      return true;
    }
    if (match !== null && name !== undefined && this.gitAware && GIT_PROGRAM_VARIABLE.test(name)) {
      this.own.push({
        why: `${JSON.stringify(word.raw)} sets ${name}, through which git runs a program or reads settings`,
      });
      return true;
    }
    if (match === null || name === undefined || !CODE_VARIABLE.test(name)) return false;
    const value = word.value.slice(match[0].length);
    const shown = JSON.stringify(word.raw);
    if (name.startsWith('BASH_FUNC_')) {
      // `BASH_FUNC_ls%%=() { body; }`: a bash started with it defines `ls` with that body.
      if (!word.literal) {
        this.own.push({ why: `${shown} imports a function whose body is only known when the command runs` });
      } else {
        this.followed.add(word);
        const functionName = name.slice('BASH_FUNC_'.length).replace(/(?:%%|\(\))$/, '') || 'f';
        this.readLine(`${functionName}${value}`, depth + 1);
      }
    } else if (name === 'PROMPT_COMMAND' && word.literal) {
      this.followed.add(word);
      this.readLine(value, depth + 1);
    } else {
      this.own.push({
        why: `${shown} sets ${name}, which bash runs as code or reads code from (a prompt, a start-up file, tracing)`,
      });
    }
    return true;
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
    if (VARIABLE_SETTERS.has(program)) this.readSetter(program, args, depth);
    const spec = WRAPPERS[program];
    if (spec !== undefined) return this.invokeWrapped(program, unwrap(args, spec), stdin, depth);
    if (SHELLS.has(program)) return this.invokeShell(words, stdin, depth);
    if (LOOSE_RUNNERS.has(program)) return this.invokeLoosely(args, stdin, depth);
    switch (program) {
      case 'eval':
        return this.readWords(args[0]?.value === '--' ? args.slice(1) : args, depth);
      case 'source':
      case '.':
        this.sourcesFile(words, args[0]);
        return this.invokeScript(words, args[0], stdin, depth);
      case 'trap':
        return this.invokeTrap(args, depth);
      case 'alias':
        for (const arg of args) {
          const equals = arg.value.indexOf('=');
          if (!arg.literal) {
            this.unknown([arg]);
          } else if (equals > 0) {
            this.followed.add(arg);
            this.readLine(arg.value.slice(equals + 1), depth + 1);
          }
        }
        return;
      case 'mapfile':
      case 'readarray':
        return this.invokeCallback(program, args, MAPFILE_VALUES, 2, depth);
      case 'compgen':
      case 'complete':
        return this.invokeCallback(program, args, COMPLETE_VALUES, 3, depth);
      case 'bind':
        // `bind -x 'keys: command'` runs the command when the keys are pressed.
        if (args.some((arg) => !arg.literal || /^-[A-Za-z]*x/.test(arg.value))) {
          this.unknown(words, 'bind -x runs a command bound to keys, which is only known when it runs');
        }
        return;
      case 'fc': {
        // `fc -l` lists the history; anything else runs commands from it (or from an editor).
        const listing = args.some((arg) => /^-[lnr]*l[lnr]*$/.test(arg.value));
        const runs = args.some((arg) => !arg.literal || /^-[A-Za-z]*[es]/.test(arg.value));
        if (!listing || runs)
          this.unknown(words, 'fc runs commands from the history, which are only known when it runs');
        return;
      }
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
    if (unwrapped.kind === 'unknown') {
      for (const assignment of unwrapped.assignments ?? []) this.readSetting(assignment, depth);
      return this.unknown(unwrapped.words);
    }
    if (unwrapped.kind === 'unsure') return this.invokeLoosely(unwrapped.words, stdin, depth);
    const options = unwrapped.options;
    if (program === 'command' && (options.has('v') || options.has('V'))) return; // a lookup; nothing runs
    if (program === 'command' && options.has('p') && this.pathAware) {
      this.pathChanges.push('command -p looks its program up on the default PATH');
    }
    if (program === 'sudo' && options.has('e')) return; // sudoedit edits files; it runs no program
    if (program === 'doas' && options.has('C')) return; // checks a configuration file
    for (const assignment of unwrapped.assignments ?? []) this.readSetting(assignment, depth);
    let words = unwrapped.kind === 'program' ? unwrapped.words : [];
    if (program === 'env') {
      // `env -i` and `env -u NAME` take away what the worker set: its git settings among them.
      const unset = options.get('u') ?? options.get('--unset');
      const clears = options.has('i') || options.has('--ignore-environment');
      if (
        this.gitAware &&
        (clears || (unset !== undefined && (!unset.literal || GIT_PROGRAM_VARIABLE.test(unset.value))))
      ) {
        this.own.push({
          why: `env ${clears ? '-i' : `-u ${JSON.stringify(unset?.raw)}`} takes away settings through which the worker keeps git from running programs`,
        });
      }
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
        const startupFile = value === '--rcfile' || value === '--init-file';
        if (startupFile) this.sourcesFile(words, args[i + 1]);
        i += startupFile ? 2 : 1;
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
      return this.follow(body, depth + 1, !body.literal);
    }
    if (!readsStdin && i < args.length) return this.invokeScript(words, args[i], stdin, depth);
    this.readStdin(words, stdin, depth);
  }

  /**
   * `source F`, `. F`, `bash --rcfile F -i`: bash itself runs the commands in a file (one the job
   * may have written a moment before), as it does the file `BASH_ENV` names; like that form they
   * count as hidden code, so a deny or ask rule cannot be ruled out. (A script run as a program,
   * `bash F` or `./F`, is a program like `make`: the mode decides, and the sandbox confines it.)
   */
  private sourcesFile(words: ShellWord[], file: ShellWord | undefined): void {
    if (!this.gitAware || file === undefined || (file.literal && STDIN_PATHS.has(file.value))) return;
    const program = JSON.stringify(words[0]?.raw ?? '');
    this.own.push({ why: `${program} runs the commands in ${JSON.stringify(file.raw)}, which no rule can see` });
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
        this.followed.add(stdin.source);
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
    for (const arg of args) this.followed.add(arg);
    this.readLine(args.map((arg) => arg.value).join(' '), depth + 1, unknown !== undefined);
  }

  private invokeTrap(args: ShellWord[], depth: number): void {
    let i = 0;
    while (i < args.length && ['-l', '-p', '-P', '--'].includes((args[i] as ShellWord).value)) i++;
    const action = args[i];
    // With a single argument, that argument is a signal to reset, not an action.
    if (action === undefined || args.length - i < 2) return;
    if (!action.literal) return this.unknown([action]);
    if (action.value !== '-') this.follow(action, depth + 1);
  }

  /**
   * An argument of a builtin that sets variables by name: setting (or naming) a variable bash
   * runs as code (`export PROMPT_COMMAND=...`, `read PS4`, `declare -n r=BASH_ENV`).
   */
  private readSetter(program: string, args: ShellWord[], depth: number): void {
    for (const arg of args) {
      if (this.readSetting(arg, depth)) continue;
      // Taking bash's code variables away runs nothing; taking git's settings away can (the
      // worker's own GIT_CONFIG_* are what switch core.fsmonitor and the signature programs off).
      if (program === 'unset' && !this.gitAware) continue;
      if (program !== 'unset' && NAMES_CODE_VARIABLE.test(arg.value)) {
        this.own.push({
          why: `${program} ${JSON.stringify(arg.raw)} may set a variable bash runs as code or reads code from`,
        });
      } else if (
        this.gitAware &&
        (arg.value.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []).some((name) => GIT_PROGRAM_VARIABLE.test(name))
      ) {
        this.own.push({
          why: `${program} ${JSON.stringify(arg.raw)} may set a variable through which git runs a program or reads settings`,
        });
      }
    }
  }

  /**
   * `mapfile -C callback`, `compgen -C command`: the callback is a command line, run with
   * `appended` more arguments only known when it runs (the index and the line read; the words
   * being completed).
   */
  private invokeCallback(program: string, args: ShellWord[], withValue: string, appended: number, depth: number) {
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as ShellWord;
      if (!arg.literal) {
        return this.unknown([arg], `${program}'s option ${JSON.stringify(arg.raw)} is only known when it runs`);
      }
      if (arg.value === '--' || !arg.value.startsWith('-')) {
        if (program === 'mapfile' || program === 'readarray') return; // the array's name
        continue; // compgen's word, complete's command names
      }
      for (let k = 1; k < arg.value.length; k++) {
        const letter = arg.value[k] as string;
        if (!withValue.includes(letter)) continue;
        const rest = arg.value.slice(k + 1);
        const value = rest === '' ? args[++i] : { ...arg, raw: rest, value: rest };
        if (letter === 'C' && value !== undefined) this.invokeCallbackLine(program, arg, value, appended, depth);
        break;
      }
    }
  }

  private invokeCallbackLine(program: string, option: ShellWord, callback: ShellWord, appended: number, depth: number) {
    this.followed.add(option);
    this.followed.add(callback);
    const why = `${program} -C runs ${JSON.stringify(callback.raw)} with arguments only known when it runs`;
    if (!callback.literal) return this.unknown([callback], why);
    const words = parseShellWords(callback.value);
    if (words !== undefined && words.length > 0) {
      return this.invoke(
        [...words, ...Array.from({ length: appended }, () => INPUT_WORD)],
        { kind: 'none' },
        depth + 1,
      );
    }
    // A whole command line: its last command gets the arguments.
    this.readLine(callback.value, depth + 1);
    this.unknown([callback], why);
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
      // (Generation 1 took the word after --exec-path as its value; git reads only --exec-path=DIR.)
      const withValue =
        GIT_GLOBAL_WITH_VALUE.has(word.value) ||
        (this.gitAware ? GIT_GLOBAL_WITH_VALUE_2.has(word.value) : word.value === '--exec-path');
      i += withValue ? 2 : 1;
    }
    if (this.gitAware) for (const why of gitDangers(words, i)) this.own.push({ why });
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
      if (/[\s;&|]/.test(arg.value)) this.follow(arg, depth + 1);
      else this.invoke(args.slice(i), stdin, depth + 1);
    }
  }
}

function stdinOf(command: ShellCommand): Stdin {
  let stdin: Stdin = { kind: command.piped ? 'pipe' : 'none' };
  for (const redirect of command.redirects) {
    if (redirect.fd !== undefined && redirect.fd !== '0') continue;
    if (redirect.operator === '<<<') {
      const target = redirect.target;
      stdin = target.literal ? { kind: 'text', text: target.value, source: target } : { kind: 'unknown' };
    } else if (redirect.operator === '<<' || redirect.operator === '<<-') {
      const doc = redirect.hereDocument;
      stdin = doc !== undefined && !doc.expands ? { kind: 'text', text: doc.body, source: doc } : { kind: 'unknown' };
    } else if (redirect.operator === '<' || redirect.operator === '<>') {
      // `< <(echo ...)` or `< $F`: what is read is only known when it runs.
      stdin = redirect.target.literal ? { kind: 'file' } : { kind: 'unknown' };
    } else if (redirect.operator === '<&') {
      stdin = { kind: 'unknown' };
    }
  }
  return stdin;
}
