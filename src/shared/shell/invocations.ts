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
 * Code bash may run a second time from text (`hidden`, see `parse.ts`: `'a[$(cmd)]'` handed
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
 *
 * Wrappers, shells and the dispatch on the program are here; the reader's state and the other
 * programs it looks into (`eval`, `trap`, variable-setting builtins, `find`, git) are in
 * `invocation-builtins.ts`.
 */
import { BuiltinsReader, fromInput, INPUT_WORD, MAX_DEPTH, TOO_COMPLEX, type Stdin } from './invocation-builtins';
import { parseShell, parseShellWords } from './parse';
import { GIT_PROGRAM_VARIABLE } from './programs/git';
import type { BashReading, ShellWord } from './types';
import { LOOSE_RUNNERS, unwrap, WRAPPERS, xargsReplaceString, type Unwrapped } from './wrappers';

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
/** Options of `mapfile`/`readarray` that take a value. */
const MAPFILE_VALUES = 'dnOsuCc';
/** Options of `compgen`/`complete` that take a value. */
const COMPLETE_VALUES = 'oAGWFCXPS';

class InvocationReader extends BuiltinsReader {
  protected override invoke(words: ShellWord[], stdin: Stdin, depth: number): void {
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
    if (program === 'exec' && options.has('c') && this.pathAware) {
      // Like `env -i`: the worker's git settings go with the rest of the environment.
      this.pathChanges.push('exec -c runs its program with an empty environment, PATH and the git settings gone');
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
