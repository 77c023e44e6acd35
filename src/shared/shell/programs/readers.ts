/**
 * Programs that only read files, modelled by their options (`cat`, `head`, `tail`, `wc`, `ls`,
 * `grep`, `rg`): which options take a value, which values are files that are read (`grep -f
 * FILE`, `rg --ignore-file`), which options write or run programs and are refused. Only options
 * that always take a value are listed as taking one: getting that wrong the other way would let a
 * path through unchecked. Also the programs whose words are not paths (`echo`, `pwd`, ...). Pure
 * code.
 */
import type { ShellWord } from '../types';
import { engineAtLeast } from '../../permissions/types';
import { hasWildcard, refuse, show, sliceWord, type Check, type Refusal } from './check';

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
  tree?: (options: Set<string>, engine: number | undefined) => boolean;
  /** Does it follow symbolic links it meets inside those trees (`grep -R`, `rg -L`)? */
  follows?: (options: Set<string>, engine: number | undefined) => boolean;
  /** With no operand, the program reads the working directory (ls, rg, grep -r). */
  cwdDefault?: (options: Set<string>, engine: number | undefined) => boolean;
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
    const tree = spec.tree?.(options, scope.engine) ?? false;
    const follows = tree && (spec.follows?.(options, scope.engine) ?? false);
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
    if (paths.length === 0 && spec.cwdDefault?.(options, scope.engine) === true) scope.cwd(tree, follows);
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
  // With its value too (`--directories=recurse`), for options whose value changes what is read.
  if (equals >= 0) options.add(arg.value);
  if (kind === undefined) return undefined;
  const value = equals < 0 ? next() : sliceWord(arg, equals + 1);
  if (equals < 0 && value?.literal === true) options.add(`${name}=${value.value}`);
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
    if (value?.literal === true) options.add(`-${letter}=${value.value}`);
    if (kind === 'path' && value !== undefined) pathValues.push(value);
    return undefined;
  }
  return undefined;
}

/** Programs whose words are not paths: they print, wait or look names up. */
export const noPaths: Check = (args) => {
  const unknown = args.find((arg) => arg.expansions.some((expansion) => expansion !== 'glob' && expansion !== 'tilde'));
  return unknown === undefined ? undefined : refuse(`${show(unknown)} is only known when the command runs`);
};

const recursiveGrep = (options: Set<string>, engine: number | undefined) =>
  ['-r', '-R', '--recursive', '--dereference-recursive'].some((option) => options.has(option)) ||
  (engineAtLeast(engine, 3) && [...options].some((option) => grepRecursesAs(option) !== undefined));

/**
 * Generation 3: the other spellings of grep's recursion, as getopt and grep's own argument
 * matching accept unambiguous abbreviations: `--recur`, `--deref` (following links), and
 * `-d recurse` / `--directories=recurse` (`--dir=rec`). Undefined when `option` is none of them.
 */
function grepRecursesAs(option: string): 'recurse' | 'follow' | undefined {
  if (option.startsWith('--rec') && '--recursive'.startsWith(option)) return 'recurse';
  if (option.startsWith('--der') && '--dereference-recursive'.startsWith(option)) return 'follow';
  const equals = option.indexOf('=');
  if (equals < 0) return undefined;
  const name = option.slice(0, equals);
  const value = option.slice(equals + 1);
  const directories = name === '-d' || (name.startsWith('--dir') && '--directories'.startsWith(name));
  return directories && value.startsWith('rec') && 'recurse'.startsWith(value) ? 'recurse' : undefined;
}

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
  follows: (options, engine) =>
    options.has('-R') ||
    options.has('--dereference-recursive') ||
    (engineAtLeast(engine, 3) && [...options].some((option) => grepRecursesAs(option) === 'follow')),
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

/** The reading programs modelled here, each with the check of its arguments. */
export const READERS: ReadonlyArray<[string, Check]> = [
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
];
