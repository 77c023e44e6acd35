/**
 * The invocation reader's state and the programs it looks into besides wrappers and shells (see
 * `invocations.ts` for the whole reading): `eval`, `trap`, builtins that set variables by name
 * (`export`, `declare`, `read`, `printf -v`, ...), the callbacks of `mapfile -C`/`compgen -C`,
 * `find -exec` and git's global options. Pure code.
 */
import { CODE_VARIABLE, parseShell, parseShellWords } from './parse';
import { gitDangers, GIT_GLOBAL_WITH_VALUE, GIT_GLOBAL_WITH_VALUE_2, GIT_PROGRAM_VARIABLE } from './programs/git';
import type {
  BashHidden,
  Invocation,
  ParsedShell,
  ShellCommand,
  ShellHereDocument,
  ShellHidden,
  ShellWord,
} from './types';
import { engineAtLeast } from '../permissions/types';

export const MAX_DEPTH = 8;

export const TOO_COMPLEX = 'the command is too complex to be read';

/** What `xargs` appends from its input: arguments only known when it runs. */
export const INPUT_WORD: ShellWord = {
  raw: '<input>',
  value: '<input>',
  literal: false,
  expansions: ['substitution'],
  splits: true,
  pattern: '<input>',
};

/** A word into which `xargs -I` or `find -exec` puts input: only known when it runs. */
export function fromInput(word: ShellWord, placeholder: string): ShellWord {
  if (placeholder === '' || !word.value.includes(placeholder)) return word;
  return { ...word, literal: false, expansions: [...word.expansions, 'substitution'] };
}

export type Stdin =
  | { kind: 'none' | 'pipe' | 'file' | 'unknown' }
  | { kind: 'text'; text: string; source: ShellWord | ShellHereDocument };

/** A CODE_VARIABLE name anywhere in a word (`PS4`, `-vPS4`, `r=PS4`). */
const NAMES_CODE_VARIABLE =
  /(?:^-[A-Za-z]*|^|[^A-Za-z0-9_])(?:PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV|SHELLOPTS|BASHOPTS)(?![A-Za-z0-9_])|BASH_FUNC_/;
/** `NAME=value`, `NAME+=value`, `NAME[i]=value`, and env's `BASH_FUNC_name%%=value`. */
const SETTING = /^(BASH_FUNC_[^=]*|[A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=/s;

export abstract class BuiltinsReader {
  readonly invocations: Invocation[] = [];
  readonly unreadable: string[] = [];
  /** Hidden code the parser found, in every line read. */
  private readonly found: ShellHidden[] = [];
  /** Hidden code the reader found (settings of code variables, `bind -x`, ...). */
  protected readonly own: BashHidden[] = [];
  /** What changes where programs are found (generation 3); it matters when git runs too. */
  protected readonly pathChanges: string[] = [];
  /** Words and here-documents whose text was read as a command line. */
  protected readonly followed = new Set<ShellWord | ShellHereDocument>();

  constructor(
    private budget: number,
    /** The engine generation (`PermissionContext.engine`): what it reads besides the words. */
    private readonly engine: number | undefined,
  ) {}

  /** Generation 2: git's configuration and sourced files count (see `programs/git.ts`). */
  protected get gitAware(): boolean {
    return engineAtLeast(this.engine, 2);
  }

  /** Generation 3: a changed PATH (`PATH=/usr/bin git`, `command -p git`) finds git around its shim. */
  protected get pathAware(): boolean {
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
  protected follow(word: ShellWord, depth: number, partial = false): void {
    this.followed.add(word);
    this.readLine(word.value, depth, partial);
  }

  /** Spend `cost` of the budget; false (and the command unreadable) once it is gone. */
  protected spend(cost: number): boolean {
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
  protected readSetting(word: ShellWord, depth: number): boolean {
    const match = SETTING.exec(word.value);
    const name = match?.[1];
    if ((name === 'PATH' || name === 'BASH_CMDS') && this.pathAware) {
      // BASH_CMDS is bash's table of where commands are: `BASH_CMDS[git]=/usr/bin/git`.
      this.pathChanges.push(`${JSON.stringify(word.raw)} sets ${name}`);
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
  protected readLine(line: string, depth: number, partial = false): void {
    if (depth > MAX_DEPTH) {
      if (!partial) this.unreadable.push('command lines nest too deeply to be read');
      return;
    }
    if (!this.spend(line.length)) return;
    const parsed = parseShell(line);
    this.readParsed(partial ? { ...parsed, problems: [] } : parsed, depth);
  }

  protected abstract invoke(words: ShellWord[], stdin: Stdin, depth: number): void;

  protected unknown(words: ShellWord[], why?: string): void {
    this.invocations.push(why === undefined ? { words, program: undefined } : { words, program: undefined, why });
  }

  protected readWords(args: ShellWord[], depth: number): void {
    if (args.length === 0) return;
    const unknown = args.find((arg) => !arg.literal);
    if (unknown !== undefined) {
      this.unknown(args, `eval runs ${JSON.stringify(unknown.raw)}, which is only known when it runs`);
    }
    for (const arg of args) this.followed.add(arg);
    this.readLine(args.map((arg) => arg.value).join(' '), depth + 1, unknown !== undefined);
  }

  protected invokeTrap(args: ShellWord[], depth: number): void {
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
  protected readSetter(program: string, args: ShellWord[], depth: number): void {
    for (const arg of args) {
      if (this.readSetting(arg, depth)) continue;
      // `read PATH`, `printf -v PATH`, `declare -n p=PATH`: PATH set by name (generation 3).
      if (
        this.pathAware &&
        program !== 'unset' &&
        /(?:^|[^A-Za-z0-9_])(?:PATH|BASH_CMDS)(?![A-Za-z0-9_])/.test(arg.value)
      ) {
        this.pathChanges.push(`${program} ${JSON.stringify(arg.raw)} may set PATH`);
        continue;
      }
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
  protected invokeCallback(program: string, args: ShellWord[], withValue: string, appended: number, depth: number) {
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

  protected invokeFindActions(args: ShellWord[], depth: number): void {
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
  protected invokeGitSubcommand(words: ShellWord[]): void {
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
