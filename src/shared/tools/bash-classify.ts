/**
 * A conservative "does this shell command only read?" test. It drives both concurrency (read-only
 * Bash calls may run beside other read-only tools) and crash-retry safety (a read-only command
 * may simply be run again), so every doubt answers `false`: the cost of a false negative is a
 * little lost parallelism, the cost of a false positive is a side effect run twice.
 *
 * Accepted: pipelines and lists (`|`, `&&`, `||`, `;`) of simple commands from a small allowlist,
 * with plain and quoted words. Refused: background jobs (`&`), newlines, redirections, command and
 * process substitution, variable expansion, subshells, and options that make an allowed program
 * write or run other programs.
 */

interface Word {
  text: string;
  /** An unquoted glob or brace character: the shell may expand it into arbitrary file names. */
  expands: boolean;
}

const SIMPLE_READ_ONLY = new Set(['ls', 'cat', 'head', 'tail', 'wc', 'pwd', 'echo', 'grep', 'which', 'sleep', 'true', 'false']);
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
/** find primaries that run programs or write files. */
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
const EXPANDING_CHARS = new Set(['*', '?', '[', ']', '{', '}']);
const REFUSED_CHARS = new Set(['&', '>', '<', '(', ')', '`', '\n', '\r']);

/** True only when `command` certainly changes nothing (see the module comment for the rules). */
export function isReadOnlyBashCommand(command: string): boolean {
  const pipeline = splitPipeline(command);
  if (!pipeline || pipeline.length === 0) return false;
  return pipeline.every((words) => isReadOnlySimpleCommand(words));
}

function isReadOnlySimpleCommand(words: Word[]): boolean {
  const [program, ...args] = words;
  if (!program || program.expands) return false;
  const name = program.text;
  if (SIMPLE_READ_ONLY.has(name)) return true;
  switch (name) {
    case 'rg':
      // --pre runs an arbitrary preprocessor; an expanded glob could smuggle in such a flag.
      return args.every((arg) => !arg.expands && !arg.text.startsWith('--pre'));
    case 'find':
      return args.every((arg) => !arg.expands && !FIND_UNSAFE.has(arg.text));
    case 'git':
      return isReadOnlyGit(args);
    default:
      return false;
  }
}

function isReadOnlyGit(args: Word[]): boolean {
  // Global options (-c, -C, --exec-path, ...) can redirect git to run configured programs, so the
  // subcommand must come first.
  const [sub, ...rest] = args;
  if (!sub || sub.expands || !GIT_READ_ONLY.has(sub.text)) return false;
  if (rest.some((arg) => arg.expands)) return false;
  if (sub.text === 'branch') return rest.every((arg) => GIT_BRANCH_LIST_FLAGS.has(arg.text));
  return rest.every((arg) => !arg.text.startsWith('--output') && arg.text !== '--ext-diff');
}

/**
 * Split a command into the words of each pipeline stage, or return undefined when the command
 * uses any shell feature outside the accepted subset.
 */
function splitPipeline(command: string): Word[][] | undefined {
  const stages: Word[][] = [];
  let words: Word[] = [];
  let text = '';
  let inWord = false;
  let expands = false;

  const endWord = () => {
    if (inWord) words.push({ text, expands });
    text = '';
    inWord = false;
    expands = false;
  };

  for (let i = 0; i < command.length; i++) {
    const ch = command[i] as string;
    if (ch === ' ' || ch === '\t') {
      endWord();
    } else if (ch === '|' || ch === ';' || (ch === '&' && command[i + 1] === '&')) {
      // Pipelines and lists (`|`, `||`, `&&`, `;`) are read-only when every command in them is.
      if ((ch === '|' && command[i + 1] === '|') || ch === '&') i++;
      endWord();
      if (words.length === 0) return undefined;
      stages.push(words);
      words = [];
    } else if (REFUSED_CHARS.has(ch)) {
      return undefined;
    } else if (ch === '\\') {
      const next = command[i + 1];
      if (next === undefined || next === '\n') return undefined;
      text += next;
      inWord = true;
      i++;
    } else if (ch === "'") {
      const close = command.indexOf("'", i + 1);
      if (close < 0) return undefined;
      text += command.slice(i + 1, close);
      inWord = true;
      i = close;
    } else if (ch === '"') {
      const close = readDoubleQuoted(command, i + 1);
      if (!close) return undefined;
      text += close.text;
      inWord = true;
      i = close.end;
    } else if (ch === '$') {
      if (!isLiteralDollar(command[i + 1])) return undefined;
      text += ch;
      inWord = true;
    } else if (ch === '#' && !inWord) {
      // A comment runs to the end of the line; anything after a newline would be another command.
      if (/[\n\r]/.test(command.slice(i))) return undefined;
      break;
    } else {
      if (EXPANDING_CHARS.has(ch)) expands = true;
      text += ch;
      inWord = true;
    }
  }
  endWord();
  if (words.length === 0) return stages.length === 0 ? [] : undefined;
  stages.push(words);
  return stages;
}

/** Read a double-quoted string starting after the opening quote; undefined if it expands anything. */
function readDoubleQuoted(command: string, start: number): { text: string; end: number } | undefined {
  let text = '';
  for (let i = start; i < command.length; i++) {
    const ch = command[i] as string;
    if (ch === '"') return { text, end: i };
    if (ch === '`') return undefined;
    if (ch === '$') {
      if (!isLiteralDollar(command[i + 1])) return undefined;
      text += ch;
    } else if (ch === '\\') {
      const next = command[i + 1];
      if (next === undefined) return undefined;
      if ('$`"\\'.includes(next)) {
        text += next;
        i++;
      } else if (next === '\n') {
        return undefined;
      } else {
        text += ch;
      }
    } else {
      text += ch;
    }
  }
  return undefined;
}

/** `$` stays literal only when nothing that could start an expansion follows it. */
function isLiteralDollar(next: string | undefined): boolean {
  return next === undefined || next === ' ' || next === '\t' || next === '"';
}
