/**
 * The programs `bash-read-only.ts` accepts as read-only, each with what its options look like:
 * which take a value, which values are files that are read (`grep -f FILE`, `rg --ignore-file`,
 * `find -newer F`, `git diff -O<file>`), which options write or run programs and are refused.
 * Only options that always take a value are listed as taking one: getting that wrong the other
 * way would let a path through unchecked. Pure code.
 */
import type { ShellWord } from './shell-parse';
import { engineAtLeast } from './types';

/** Why a command is not read-only. */
export interface Refusal {
  readOnly: false;
  /** As a clause ("it runs npm", "it reads /etc/passwd, outside the workspace"). */
  why: string;
  /** Set when the objection is a path outside the working directories. */
  outside?: string;
  /** Set when the objection is a Read deny or ask rule covering what it reads. */
  readRule?: boolean;
}

/** Where paths are checked: the working directories of the command being classified. */
export interface PathScope {
  /** Check one path argument: a refusal, or undefined when it is inside (and recorded). */
  path(word: ShellWord, options: { globs: boolean; tree: boolean; follows?: boolean }): Refusal | undefined;
  /** Record that the command reads its working directory (`ls`, `rg x`, `grep -r x`). */
  cwd(tree: boolean, follows?: boolean): void;
  /** The engine generation the job decides with (`PermissionContext.engine`). */
  readonly engine: number | undefined;
}

/** A refusal with its reason. */
export function refuse(why: string, outside?: string): Refusal {
  return outside === undefined ? { readOnly: false, why } : { readOnly: false, why, outside };
}

/** A word for a message, quoted and cut short. */
export function show(word: ShellWord): string {
  return JSON.stringify(word.raw.length > 80 ? `${word.raw.slice(0, 77)}...` : word.raw);
}

/** Has this glob pattern (escapes kept) an unescaped wildcard? */
export function hasWildcard(segment: string): boolean {
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i];
    if (ch === '\\') i++;
    else if (ch === '*' || ch === '?' || ch === '[') return true;
  }
  return false;
}

type Check = (args: ShellWord[], scope: PathScope) => Refusal | undefined;
type ValueKind = 'path' | 'text';

/** How a program's options look. Only options that always take a value belong in `short`/`long`. */
interface ProgramSpec {
  short?: Readonly<Record<string, ValueKind>>;
  long?: Readonly<Record<string, ValueKind>>;
  /** `-20` is an option (`head -20`, `grep -5`). */
  numeric?: boolean;
  /** Unquoted globs are allowed (the program has no option a file name could turn into harm). */
  globs: boolean;
  /** Options (and their abbreviations, for long ones) that write files or run programs. */
  refused?: readonly string[];
  /** Options that give the pattern, so the first operand is a path too. */
  patternOptions?: readonly string[];
  /** The first operand is a pattern (grep, rg) unless a pattern option was given. */
  patternFirst?: boolean;
  /** Does the command read whole trees, given the options it was called with? */
  tree?: (options: Set<string>) => boolean;
  /** Does it follow symbolic links it meets inside those trees (`grep -R`, `rg -L`)? */
  follows?: (options: Set<string>) => boolean;
  /** With no operand, the program reads the working directory (ls, rg, grep -r). */
  cwdDefault?: (options: Set<string>) => boolean;
}

function byOptions(spec: ProgramSpec): Check {
  return (args, scope) => {
    const options = new Set<string>();
    const operands: ShellWord[] = [];
    const pathValues: ShellWord[] = [];
    let endOfOptions = false;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as ShellWord;
      if (!endOfOptions && arg.literal && arg.value === '--') {
        endOfOptions = true;
        continue;
      }
      if (endOfOptions || !arg.value.startsWith('-') || arg.value === '-') {
        operands.push(arg);
        continue;
      }
      // `--include=*.ts`: a glob after the `=` can only become file names of the working
      // directory, which leaves the option what it was.
      const equals = arg.pattern.indexOf('=');
      const globValue =
        spec.globs &&
        arg.expansions.every((expansion) => expansion === 'glob') &&
        arg.value.startsWith('--') &&
        equals > 0 &&
        !hasWildcard(arg.pattern.slice(0, equals));
      if (!arg.literal && !globValue) return refuse(`its option ${show(arg)} is only known when it runs`);
      const next = () => args[++i];
      const refusal = arg.value.startsWith('--')
        ? readLongOption(spec, arg, next, options, pathValues)
        : readShortOptions(spec, arg, next, options, pathValues);
      if (refusal !== undefined) return refusal;
    }
    const tree = spec.tree?.(options) ?? false;
    const follows = tree && (spec.follows?.(options) ?? false);
    for (const value of pathValues) {
      const refusal = scope.path(value, { globs: false, tree: false });
      if (refusal !== undefined) return refusal;
    }
    const patternGiven = spec.patternOptions?.some((option) => options.has(option)) ?? false;
    const paths = spec.patternFirst === true && !patternGiven ? operands.slice(1) : operands;
    if (spec.patternFirst === true && !patternGiven && operands.length === 0) return undefined;
    if (spec.patternFirst === true && !patternGiven && !(operands[0] as ShellWord).literal) {
      return refuse(`its pattern ${show(operands[0] as ShellWord)} is only known when it runs`);
    }
    for (const path of paths) {
      const refusal = scope.path(path, { globs: spec.globs, tree, follows });
      if (refusal !== undefined) return refusal;
    }
    if (paths.length === 0 && spec.cwdDefault?.(options) === true) scope.cwd(tree, follows);
    return undefined;
  };
}

function readLongOption(
  spec: ProgramSpec,
  arg: ShellWord,
  next: () => ShellWord | undefined,
  options: Set<string>,
  pathValues: ShellWord[],
): Refusal | undefined {
  const equals = arg.value.indexOf('=');
  const name = equals < 0 ? arg.value : arg.value.slice(0, equals);
  // getopt_long accepts any unambiguous abbreviation, so `--fil=x` may be `--file=x`.
  if (spec.refused?.some((refused) => refused.startsWith(name)))
    return refuse(`its option ${show(arg)} is not read-only`);
  const known = spec.long?.[name];
  const abbreviated = Object.keys(spec.long ?? {}).find(
    (option) => option.startsWith(name) && spec.long?.[option] === 'path',
  );
  const kind: ValueKind | undefined = known ?? (abbreviated === undefined ? undefined : 'path');
  options.add(known === undefined && abbreviated !== undefined ? abbreviated : name);
  if (kind === undefined) return undefined;
  const value = equals < 0 ? next() : sliceWord(arg, equals + 1);
  if (kind === 'path' && value !== undefined) pathValues.push(value);
  if (kind === 'path' && !arg.literal) return refuse(`its option ${show(arg)} names a file only known when it runs`);
  return undefined;
}

function readShortOptions(
  spec: ProgramSpec,
  arg: ShellWord,
  next: () => ShellWord | undefined,
  options: Set<string>,
  pathValues: ShellWord[],
): Refusal | undefined {
  if (spec.numeric === true && /^-\d+$/.test(arg.value)) return undefined;
  if (!arg.literal) return refuse(`its option ${show(arg)} is only known when it runs`);
  for (let k = 1; k < arg.value.length; k++) {
    const letter = arg.value[k] as string;
    if (spec.refused?.includes(`-${letter}`)) return refuse(`its option -${letter} is not read-only`);
    options.add(`-${letter}`);
    const kind = spec.short?.[letter];
    if (kind === undefined) continue;
    const value = k + 1 < arg.value.length ? sliceWord(arg, k + 1) : next();
    if (kind === 'path' && value !== undefined) pathValues.push(value);
    return undefined;
  }
  return undefined;
}

/** The part of a literal option word after `from` (an attached value), as a word of its own. */
function sliceWord(word: ShellWord, from: number): ShellWord {
  const value = word.value.slice(from);
  return { raw: value, value, literal: word.literal, expansions: word.expansions, splits: false, pattern: value };
}

/** Programs whose words are not paths: they print, wait or look names up. */
const noPaths: Check = (args) => {
  const unknown = args.find((arg) => arg.expansions.some((expansion) => expansion !== 'glob' && expansion !== 'tilde'));
  return unknown === undefined ? undefined : refuse(`${show(unknown)} is only known when the command runs`);
};

const recursiveGrep = (options: Set<string>) =>
  ['-r', '-R', '--recursive', '--dereference-recursive'].some((option) => options.has(option));

const GREP: ProgramSpec = {
  short: { e: 'text', f: 'path', m: 'text', A: 'text', B: 'text', C: 'text', d: 'text', D: 'text' },
  long: {
    '--regexp': 'text',
    '--file': 'path',
    '--max-count': 'text',
    '--after-context': 'text',
    '--before-context': 'text',
    '--context': 'text',
    '--directories': 'text',
    '--devices': 'text',
    '--include': 'text',
    '--exclude': 'text',
    '--exclude-dir': 'text',
    '--exclude-from': 'path',
    '--label': 'text',
    '--binary-files': 'text',
    '--group-separator': 'text',
  },
  numeric: true,
  globs: true,
  patternFirst: true,
  patternOptions: ['-e', '-f', '--regexp', '--file'],
  tree: recursiveGrep,
  follows: (options) => options.has('-R') || options.has('--dereference-recursive'),
  cwdDefault: recursiveGrep,
};

const RG: ProgramSpec = {
  short: {
    e: 'text',
    f: 'path',
    g: 'text',
    t: 'text',
    T: 'text',
    m: 'text',
    A: 'text',
    B: 'text',
    C: 'text',
    M: 'text',
    d: 'text',
    j: 'text',
    E: 'text',
    r: 'text',
  },
  long: Object.fromEntries([
    ['--file', 'path'],
    ['--ignore-file', 'path'],
    ...[
      '--regexp',
      '--glob',
      '--iglob',
      '--type',
      '--type-not',
      '--type-add',
      '--type-clear',
      '--max-count',
      '--after-context',
      '--before-context',
      '--context',
      '--max-columns',
      '--max-depth',
      '--max-filesize',
      '--threads',
      '--encoding',
      '--replace',
      '--sort',
      '--sortr',
      '--colors',
      '--color',
      '--path-separator',
      '--context-separator',
      '--field-match-separator',
      '--field-context-separator',
      '--dfa-size-limit',
      '--regex-size-limit',
      '--engine',
      '--hyperlink-format',
      '--pre-glob',
    ].map((name) => [name, 'text']),
  ]) as Record<string, ValueKind>,
  globs: false,
  // --pre runs a program on every file searched; --hostname-bin runs one to name the host.
  refused: ['--pre', '--hostname-bin'],
  patternFirst: true,
  patternOptions: ['-e', '-f', '--regexp', '--file', '--files', '--type-list'],
  tree: () => true,
  follows: (options) => options.has('-L') || options.has('--follow'),
  cwdDefault: () => true,
};

/** The programs known to only read, each with the check of its arguments. */
export const PROGRAMS = new Map<string, Check>([
  ['cat', byOptions({ globs: true })],
  [
    'head',
    byOptions({
      short: { n: 'text', c: 'text' },
      long: { '--lines': 'text', '--bytes': 'text' },
      numeric: true,
      globs: true,
    }),
  ],
  [
    'tail',
    byOptions({
      short: { n: 'text', c: 'text', s: 'text' },
      long: {
        '--lines': 'text',
        '--bytes': 'text',
        '--sleep-interval': 'text',
        '--pid': 'text',
        '--max-unchanged-stats': 'text',
      },
      numeric: true,
      globs: true,
    }),
  ],
  ['wc', byOptions({ long: { '--files0-from': 'path' }, globs: true })],
  [
    'ls',
    byOptions({
      short: { I: 'text', w: 'text', T: 'text' },
      long: Object.fromEntries(
        [
          '--ignore',
          '--hide',
          '--width',
          '--tabsize',
          '--block-size',
          '--format',
          '--time-style',
          '--quoting-style',
          '--indicator-style',
          '--sort',
          '--time',
        ].map((name) => [name, 'text']),
      ) as Record<string, ValueKind>,
      globs: true,
      cwdDefault: () => true,
    }),
  ],
  ['grep', byOptions(GREP)],
  ['rg', byOptions(RG)],
  ['find', checkFind],
  ['git', checkGit],
  ['echo', noPaths],
  ['pwd', noPaths],
  ['which', noPaths],
  ['sleep', noPaths],
  ['true', noPaths],
  ['false', noPaths],
]);

// --- find ------------------------------------------------------------------------------------------

/** find primaries that run programs, delete, or write files. */
const FIND_UNSAFE = new Set([
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-delete',
  '-fprint',
  '-fprint0',
  '-fprintf',
  '-fls',
]);
/** find primaries whose argument is a file that is read (for its times, or a list of names). */
const FIND_FILE_ARGUMENT = /^-(?:newer|anewer|cnewer|samefile|files0-from|newer[aBcmt][aBcmt])$/;

function checkFind(args: ShellWord[], scope: PathScope): Refusal | undefined {
  // A glob could expand to a file named `-delete`; a variable to anything at all.
  const unknown = args.find((arg) => !arg.literal);
  if (unknown !== undefined) return refuse(`${show(unknown)} is only known when the command runs`);
  let i = 0;
  while (i < args.length && /^-(?:[HLP]|O\d*|D)$/.test((args[i] as ShellWord).value)) {
    i += (args[i] as ShellWord).value === '-D' ? 2 : 1;
  }
  const starts: ShellWord[] = [];
  while (i < args.length && !/^[-(!),]/.test((args[i] as ShellWord).value)) starts.push(args[i++] as ShellWord);
  for (let j = i; j < args.length; j++) {
    const value = (args[j] as ShellWord).value;
    if (FIND_UNSAFE.has(value)) return refuse(`find ${value} is not read-only`);
    if (FIND_FILE_ARGUMENT.test(value) && args[j + 1] !== undefined) {
      const refusal = scope.path(args[++j] as ShellWord, { globs: false, tree: false });
      if (refusal !== undefined) return refusal;
    }
  }
  for (const start of starts) {
    const refusal = scope.path(start, { globs: false, tree: false });
    if (refusal !== undefined) return refusal;
  }
  if (starts.length === 0) scope.cwd(false);
  return undefined;
}

// --- git -------------------------------------------------------------------------------------------

const GIT_READ_ONLY = new Set(['status', 'log', 'diff', 'show', 'branch']);
const GIT_BRANCH_LIST_FLAGS = new Set([
  '-a',
  '-r',
  '-v',
  '-vv',
  '-l',
  '--all',
  '--remotes',
  '--verbose',
  '--list',
  '--show-current',
  '--no-color',
]);
/** Long options of these subcommands that write files, read outside the repository or run programs. */
const GIT_UNSAFE = [
  'output',
  'output-directory',
  'ext-diff',
  'textconv',
  'no-index',
  'show-signature',
  'open-files-in-pager',
  'exec',
  'upload-pack',
  'receive-pack',
  'contents',
];

function checkGit(args: ShellWord[], scope: PathScope): Refusal | undefined {
  // Global options (-c, -C, --git-dir, --exec-path, ...) may point git at other repositories or
  // configured programs, so the subcommand must come first.
  const [sub, ...rest] = args;
  if (sub === undefined || !sub.literal || !GIT_READ_ONLY.has(sub.value)) {
    // Not read-only, but what they print is still a read, for Read deny rules (generation 2).
    if (sub?.literal === true && GIT_PRINTS_FILES.has(sub.value) && engineAtLeast(scope.engine, 2)) {
      if (rest.every((arg) => arg.literal)) contentReads(rest, scope);
    }
    return refuse(sub === undefined ? 'git without a subcommand is not read-only' : `git ${sub.raw} is not read-only`);
  }
  const unknown = rest.find((arg) => !arg.literal);
  if (unknown !== undefined) return refuse(`${show(unknown)} is only known when the command runs`);
  if (sub.value === 'branch') {
    const other = rest.find((arg) => !GIT_BRANCH_LIST_FLAGS.has(arg.value));
    return other === undefined ? undefined : refuse(`git branch ${other.raw} may change branches`);
  }
  let endOfOptions = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as ShellWord;
    const value = arg.value;
    if (!endOfOptions && value === '--') {
      endOfOptions = true;
      continue;
    }
    if (!endOfOptions && value.startsWith('--')) {
      const name = value.slice(2).split('=')[0] as string;
      // git also accepts unambiguous abbreviations (`--out=x` is `--output=x`).
      if (GIT_UNSAFE.some((unsafe) => unsafe.startsWith(name)))
        return refuse(`git ${sub.value} ${value} is not read-only`);
      continue;
    }
    if (!endOfOptions && value.startsWith('-') && value.length > 1) {
      if (!value.startsWith('-O')) continue;
      // -O<orderfile>: a file git reads.
      const file = value.length > 2 ? sliceWord(arg, 2) : rest[++i];
      const refusal = file === undefined ? undefined : scope.path(file, { globs: false, tree: false });
      if (refusal !== undefined) return refusal;
      continue;
    }
    const refusal = scope.path(arg, { globs: false, tree: false });
    if (refusal !== undefined) return refusal;
  }
  // Generation 2: what git prints from history is a read too.
  return engineAtLeast(scope.engine, 2) && printsContent(sub.value, rest) ? contentReads(rest, scope) : undefined;
}

/** Subcommands that are not read-only here but print files' contents from the repository. */
const GIT_PRINTS_FILES = new Set(['cat-file', 'grep', 'archive', 'blame', 'annotate', 'format-patch', 'whatchanged']);

/** `git log` options that make it print changes, not only commits. */
const GIT_LOG_PATCH =
  /^(?:-[a-zA-Z]*[pu][a-zA-Z]*|-U\d*|-L.*|-c|--cc|--dd|--patch.*|--unified.*|--word-diff.*|--color-words.*|--full-diff|--remerge-diff|--diff-merges.*|--binary)$/;

/** Whether git prints file contents from the repository (`diff`, `show`, `log -p`), not only names. */
function printsContent(sub: string, args: ShellWord[]): boolean {
  if (sub === 'diff' || sub === 'show') return true;
  // `git status -v` shows the staged changes, `-vv` the unstaged ones too.
  if (sub === 'status') return args.some((arg) => /^(?:-v+|--verbose)$/.test(arg.value));
  if (sub !== 'log') return false;
  const end = args.findIndex((arg) => arg.value === '--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => GIT_LOG_PATCH.test(arg.value));
}

/**
 * What a content-printing git command may print, as reads for Read deny rules: contents come
 * from commits and the index, not from the files named, so `HEAD:secret/key` reads secret/key and
 * a command that no pathspec after `--` limits may print any file of the repository.
 */
function contentReads(args: ShellWord[], scope: PathScope): Refusal | undefined {
  const end = args.findIndex((arg) => arg.value === '--');
  for (const arg of end < 0 ? args : args.slice(0, end)) {
    const colon = arg.value.indexOf(':');
    if (arg.value.startsWith('-') || colon < 0 || colon === arg.value.length - 1) continue;
    const refusal = scope.path(sliceWord(arg, colon + 1), { globs: false, tree: true });
    if (refusal !== undefined) return refusal;
  }
  const pathspecs = end < 0 ? [] : args.slice(end + 1);
  if (pathspecs.length === 0) {
    scope.cwd(true);
    return undefined;
  }
  for (const pathspec of pathspecs) {
    const refusal = scope.path(pathspec, { globs: false, tree: true });
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}
