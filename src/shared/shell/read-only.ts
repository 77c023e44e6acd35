/**
 * "Does this Bash command only read, and only inside the working directories?" The answer drives
 * auto-approval in default and plan mode, concurrency and crash-retry safety, so every doubt
 * answers no: a false "no" costs a prompt or some parallelism, a false "yes" runs a side effect
 * twice or hands a secret to the model.
 *
 * Accepted: lists and pipelines (`|`, `&&`, `||`, `;`, newlines) of simple commands from a small
 * set of programs (`ls`, `cat`, `head`, `tail`, `wc`, `grep`, `rg`, `find`, plain `git status`,
 * `log`, `diff`, `show`, `branch`, and `echo`, `pwd`, `which`, `sleep`, `true`, `false`), whose
 * options neither write nor run programs, and every one of whose path arguments (file operands,
 * `grep -f FILE`, `rg --ignore-file`, `find -newer F`, ...) resolves inside the workspace or an
 * added directory after `~`, variables and globs are considered. Redirections only to `/dev/null`
 * and between descriptors. Refused: anything else, including every variable, substitution,
 * subshell, control structure, background job and here-document, and any text holding code bash
 * may run a second time (`'$(...)'` or a backtick, even quoted; see `parse.ts`).
 *
 * Relative paths resolve against the workspace (the Bash tool's working directory); without a
 * workspace, only relative paths that do not climb out of it count as inside. Symbolic links
 * cannot be followed from pure code: a link inside the workspace may point anywhere, which is why
 * the tools re-check Read deny rules on real paths and the OS sandbox confines what Bash reads.
 *
 * git: `status`, `diff`, `log` and `show` can run programs named in the repository's own config
 * (`core.fsmonitor`, `diff.external`, textconv drivers). They stay read-only only in their plain
 * form, because the Bash sandbox turns those settings off through git's environment; global
 * options (`-c`, `-C`, `--git-dir`, `--work-tree`, `--exec-path`, ...) and options that write or
 * run programs (`--output`, `--ext-diff`, `--textconv`, `--no-index`, `--show-signature`, and
 * any abbreviation of them) never are.
 */
import {
  isGlobInWorkingDirectories,
  isInWorkingDirectories,
  normalizeDirectory,
  normalizePosixPath,
} from '../permissions/paths';
import { parseShell } from './parse';
import { hasWildcard, PROGRAMS, refuse, show, type PathScope, type Refusal } from './programs';
import type { ShellCommand, ShellRedirect, ShellWord } from './types';

/** Where a Bash command runs: its working directories and the home directory for `~`. */
export interface ReadOnlyContext {
  /** The workspace (the command's working directory), absolute. */
  workspace?: string;
  /** Further directories reads may reach (`--add-dir`, `permissions.additionalDirectories`). */
  additionalDirectories?: readonly string[];
  homeDir?: string;
  /** The engine generation (`PermissionContext.engine`). */
  engine?: number;
}

/** A place a read-only command reads. */
export interface BashRead {
  /** Absolute and normalised; for a glob, the directory before its first wildcard. */
  path: string;
  /** The command reads the whole tree below `path` (`grep -r`, `rg`) or globs in it. */
  tree: boolean;
  /** For a glob: the whole pattern, absolute, with its escapes (`path` is its literal prefix). */
  glob?: string;
  /** The command follows symbolic links it meets below `path` (`grep -R`, `rg -L`). */
  follows?: boolean;
  /**
   * The path as written, when it differs from `path` (which has `..` taken away on paper): the
   * system resolves `a/b/..` through `a/b`, a link perhaps, so the worker looks at this one.
   */
  written?: string;
}

/** The answer: read-only with what it reads, or not, with why. */
export type ReadOnlyVerdict = { readOnly: true; reads: BashRead[] } | Refusal;

/**
 * True only when `command` certainly changes nothing and every path it names resolves inside the
 * workspace or an added directory. It drives auto-approval in default and plan mode, concurrency
 * and crash-retry safety, so every doubt answers false.
 *
 * Without a context (the scheduler's concurrency and crash-retry classification) no workspace is
 * known: only relative paths that stay inside the working directory count as inside, and any
 * absolute path, `~` or variable makes the command not read-only. That can only cost a little
 * parallelism, never a side effect run twice.
 */
export function isReadOnlyBashCommand(command: string, context?: ReadOnlyContext): boolean {
  // The scheduler's classification is a workflow decision: pinned to the first generation of the
  // reading unless the caller names one, so a newer reading never changes it on replay.
  return classifyReadOnlyBash(command, { engine: 1, ...context }).readOnly;
}

/** Classify `command` (see the module comment). */
export function classifyReadOnlyBash(command: string, context: ReadOnlyContext = {}): ReadOnlyVerdict {
  const parsed = parseShell(command);
  if (parsed.problems.length > 0) return refuse(`it cannot be read safely (${parsed.problems[0]})`);
  const [hidden] = parsed.hidden;
  if (hidden !== undefined) return refuse(hidden.why);
  const [feature] = parsed.features;
  if (feature !== undefined) return refuse(`it uses ${FEATURE_WORDS[feature]}`);
  if (parsed.commands.length === 0) return refuse('it is empty');
  const scope = new Scope(context);
  for (const simple of parsed.commands) {
    const why = checkSimpleCommand(simple, scope);
    if (why !== undefined) return why;
  }
  return { readOnly: true, reads: scope.reads };
}

const FEATURE_WORDS: Readonly<Record<string, string>> = {
  substitution: 'command substitution',
  'process-substitution': 'process substitution',
  arithmetic: 'arithmetic expansion',
  subshell: 'a subshell',
  group: 'a { } group',
  control: 'a control structure',
  function: 'a function definition',
  'here-document': 'a here-document',
  'here-string': 'a here-string',
  background: 'a background job (&)',
};

/** A stand-in workspace for the context-free call: no real absolute path is inside it. */
const UNKNOWN_WORKSPACE = '/\u0000workspace';

/**
 * The paths a known reading program (`cat`, `grep`, `git diff`, ...) would read, inside the
 * working directories or not: for Read deny and ask rules, which hold for Bash reads too. Paths
 * only known when the command runs are left out; undefined when `program` is not such a reader.
 */
export function readsOfProgram(program: string, args: ShellWord[], context: ReadOnlyContext): BashRead[] | undefined {
  const check = PROGRAMS.get(program);
  if (check === undefined) return undefined;
  const scope = new Scope(context, false);
  check(args, scope);
  return scope.reads;
}

class Scope implements PathScope {
  readonly reads: BashRead[] = [];
  readonly workspace: string;
  readonly roots: string[];
  readonly homeDir: string | undefined;
  readonly known: boolean;
  readonly engine: number | undefined;

  /** `confine`: refuse paths outside the working directories (false: only record them). */
  constructor(
    context: ReadOnlyContext,
    private readonly confine = true,
  ) {
    this.known = context.workspace !== undefined;
    this.workspace = this.known ? normalizeDirectory(context.workspace as string) : UNKNOWN_WORKSPACE;
    this.roots = [this.workspace, ...(context.additionalDirectories ?? []).map(normalizeDirectory)];
    this.homeDir = context.homeDir === undefined ? undefined : normalizeDirectory(context.homeDir);
    this.engine = context.engine;
  }

  /** Check one path argument; returns a refusal, or undefined when it is inside. */
  path(word: ShellWord, options: { globs: boolean; tree: boolean; follows?: boolean }): Refusal | undefined {
    if (word.value.includes('\0')) return refuse(`${show(word)} contains a NUL character`);
    if (word.value === '-') return undefined; // standard input
    const unknown = word.expansions.find((expansion) => expansion !== 'glob' && expansion !== 'tilde');
    if (unknown !== undefined) return refuse(`${show(word)} is only known when the command runs`);
    const glob = word.expansions.includes('glob');
    if (glob && !options.globs) return refuse(`${show(word)} is a glob, which this program could take as options`);
    let text = glob ? word.pattern : word.value;
    if (word.tildeUser !== undefined) {
      const home =
        word.tildeUser === '' ? this.homeDir : word.tildeUser === '+' && this.known ? this.workspace : undefined;
      if (home === undefined) return refuse(`${show(word)} names a home directory that is not known here`);
      const rest = text.slice(1 + word.tildeUser.length);
      text = home === '/' ? rest || '/' : home + rest;
    }
    const absolute = text.startsWith('/') ? text : `${this.workspace}/${text}`;
    if (glob) return this.globPath(word, absolute, options.follows === true);
    const path = normalizePosixPath(absolute);
    if (this.confine && !isInWorkingDirectories(path, this.roots, this.homeDir)) return this.outside(word, path);
    this.reads.push({
      path,
      tree: options.tree,
      ...(absolute !== path ? { written: absolute } : {}),
      ...(options.follows === true ? { follows: true } : {}),
    });
    return undefined;
  }

  private globPath(word: ShellWord, pattern: string, follows: boolean): Refusal | undefined {
    const segments = pattern.split('/');
    const literal: string[] = [];
    let first = -1;
    let dotBelow = false;
    for (let k = 0; k < segments.length; k++) {
      const segment = segments[k] as string;
      const wild = hasWildcard(segment);
      // `.*` or `.?` may match `..`, and a bracket may match a leading dot: either can climb out.
      if (wild && (/^\.(?:[*?[]|$)/.test(segment) || segment.startsWith('['))) {
        return refuse(`${show(word)} is a glob that may match "..", so where it reads is not known`);
      }
      if (first < 0 && !wild) {
        literal.push(unescapeGlob(segment));
        continue;
      }
      if (first < 0) first = k;
      const plain = unescapeGlob(segment);
      if (!wild && plain === '..') return refuse(`${show(word)} climbs out of the directories its glob matches`);
      if (!wild && plain.startsWith('.')) dotBelow = true;
    }
    const prefix = normalizePosixPath(literal.join('/') || '/');
    if (this.confine && !isGlobInWorkingDirectories(prefix, dotBelow, this.roots, this.homeDir)) {
      return this.outside(word, prefix);
    }
    // A glob may reach any file below its literal prefix.
    const asWritten = literal.join('/') || '/';
    this.reads.push({
      path: prefix,
      tree: true,
      glob: pattern,
      ...(asWritten !== prefix ? { written: asWritten } : {}),
      ...(follows ? { follows: true } : {}),
    });
    return undefined;
  }

  private outside(word: ShellWord, path: string): Refusal {
    const where = this.known ? 'outside the workspace and its added directories' : 'outside the working directory';
    const shown = path.startsWith(UNKNOWN_WORKSPACE) ? show(word) : path;
    return refuse(`it reads ${shown}, ${where}`, shown);
  }

  /** Paths a command reads when it names none (`ls`, `grep -r x`, `rg x`): the working directory. */
  cwd(tree: boolean, follows = false): void {
    this.reads.push({ path: this.workspace, tree, ...(follows ? { follows: true } : {}) });
  }
}

function unescapeGlob(segment: string): string {
  return segment.replace(/\\(.)/g, '$1');
}

// --- simple commands -------------------------------------------------------------------------------

const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

function checkSimpleCommand(simple: ShellCommand, scope: Scope): Refusal | undefined {
  if (simple.assignments.length > 0) return refuse('it sets environment variables for the program');
  const redirect = simple.redirects.find((candidate) => !harmlessRedirect(candidate));
  if (redirect !== undefined) return refuse(`it redirects ${redirect.operator} ${redirect.target.raw}`);
  const [program, ...args] = simple.words;
  if (program === undefined) return refuse('a part of it runs no program');
  if (!program.literal) return refuse(`its program ${show(program)} is only known when the command runs`);
  const check = PROGRAMS.get(program.value);
  if (check === undefined) return refuse(`${program.value} is not one of the programs known to only read`);
  return check(args, scope);
}

/** Writes to `/dev/null` and descriptor duplications (`2>&1`) touch no file. */
function harmlessRedirect(redirect: ShellRedirect): boolean {
  const target = redirect.target;
  if (!target.literal) return false;
  if (redirect.operator === '>&' || redirect.operator === '<&') return /^(?:[0-9]+-?|-)$/.test(target.value);
  const writes = ['>', '>>', '>|', '&>', '&>>'].includes(redirect.operator);
  return writes && HARMLESS_TARGETS.has(target.value);
}
