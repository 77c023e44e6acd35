/**
 * Matching Bash rules against commands. Two directions, on purpose asymmetric:
 * - allow rules are strict: a rule approves one simple command; a compound command is approved
 *   only when every part is approved on its own; anything whose list of commands cannot be known
 *   from the text (substitutions, subshells, control structures, unparseable input) is never
 *   approved by a command rule; a redirection to a file needs an exact rule.
 * - deny and ask rules are broad: they match when ANY part matches, also after removing
 *   environment assignments and harmless wrappers (`sudo`, `env`, `timeout 5`, `nice`, `xargs`, ...),
 *   inside `bash -c '...'`, and, for commands that cannot be parsed, any fragment of the text.
 *   A false "deny" costs a prompt or a retry; a false "allow" can cost the repository.
 */
import { splitShellCommand, type ShellSplit, type ShellSubCommand, type ShellToken } from '../tools/bash-classify';
import { escapeRegExp } from './paths';
import { normalizeCommandBlanks } from './rules';
import type { ParsedRule } from './types';

type BashRule = Extract<ParsedRule, { kind: 'bash-exact' | 'bash-prefix' | 'bash-wildcard' }>;

export function isBashCommandRule(rule: ParsedRule): rule is BashRule {
  return rule.kind === 'bash-exact' || rule.kind === 'bash-prefix' || rule.kind === 'bash-wildcard';
}

/** Does `rule` match this one piece of command text (already blank-normalised)? */
export function bashRuleMatchesText(rule: BashRule, text: string): boolean {
  switch (rule.kind) {
    case 'bash-exact':
      return text === rule.command;
    case 'bash-prefix':
      return text === rule.prefix || text.startsWith(rule.prefix + ' ');
    case 'bash-wildcard':
      return wildcardRegExp(rule.pattern, rule.optionalTail).test(text);
  }
}

const WILDCARD_CACHE = new Map<string, RegExp>();

function wildcardRegExp(pattern: string, optionalTail: boolean): RegExp {
  const key = `${optionalTail ? 1 : 0}${pattern}`;
  let cached = WILDCARD_CACHE.get(key);
  if (cached) return cached;
  const body = optionalTail ? pattern.slice(0, -2) : pattern;
  let source = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch === '\\' && (body[i + 1] === '*' || body[i + 1] === '\\')) {
      source += escapeRegExp(body[i + 1] as string);
      i++;
    } else if (ch === '*') {
      source += '[\\s\\S]*';
    } else {
      source += escapeRegExp(ch);
    }
  }
  if (optionalTail) source += '(?: [\\s\\S]*)?';
  cached = new RegExp(`^${source}$`);
  if (WILDCARD_CACHE.size > 1000) WILDCARD_CACHE.clear();
  WILDCARD_CACHE.set(key, cached);
  return cached;
}

/** The parse of a command, computed once per decision. */
export interface BashAnalysis {
  command: string;
  split: ShellSplit;
}

export function analyzeBashCommand(command: string): BashAnalysis {
  return { command, split: splitShellCommand(command) };
}

/**
 * The texts an allow rule may match for one simple command: with a redirection to a file, only
 * the full text (so only an exact rule naming it approves it); otherwise the text with and without
 * harmless redirections such as `2>&1` or `> /dev/null`.
 */
export function allowTexts(sub: ShellSubCommand): { texts: string[]; exactOnly: boolean } {
  if (sub.fileWrites.length > 0) return { texts: [sub.text], exactOnly: true };
  return { texts: unique([sub.textWithoutRedirects, sub.text]), exactOnly: false };
}

/** Does an allow rule approve this simple command? */
export function allowRuleMatchesSubCommand(rule: BashRule, sub: ShellSubCommand): boolean {
  const { texts, exactOnly } = allowTexts(sub);
  if (exactOnly && rule.kind !== 'bash-exact') return false;
  return texts.some((text) => bashRuleMatchesText(rule, text));
}

/** Every text a deny or ask rule is tried against (see the module comment). */
export function broadCandidates(analysis: BashAnalysis): string[] {
  const out = new Set<string>();
  collectBroad(analysis.command, analysis.split, out, 0);
  return [...out].filter((text) => text !== '');
}

function collectBroad(command: string, split: ShellSplit, out: Set<string>, depth: number): void {
  out.add(normalizeCommandBlanks(command));
  if (split.ok) {
    out.add(split.text);
    for (const sub of split.commands) {
      out.add(sub.text);
      out.add(sub.textWithoutRedirects);
      addTokenVariants(sub.tokens, out, depth);
    }
    return;
  }
  for (const fragment of looseFragments(command)) {
    out.add(fragment);
    const words = fragment.split(' ').map((word) => ({ raw: word, value: word }));
    addTokenVariants(words, out, depth);
  }
}

function addTokenVariants(tokens: ShellToken[], out: Set<string>, depth: number): void {
  let words = tokens.map((token) => token.value);
  out.add(words.join(' '));
  for (let guard = 0; guard < 8; guard++) {
    const stripped = stripOneWrapper(words);
    if (stripped === undefined) break;
    words = stripped;
    if (words.length === 0) break;
    out.add(words.join(' '));
  }
  // `bash -c '...'`, `sh -c`, `eval ...`: what they run is a command line of its own.
  const [program, ...args] = words;
  if (depth < 3 && program !== undefined) {
    let inner: string | undefined;
    if (SHELLS.has(basename(program))) {
      const flag = args.findIndex((arg) => /^-[a-z]*c[a-z]*$/.test(arg));
      if (flag >= 0) inner = args[flag + 1];
    } else if (program === 'eval') {
      inner = args.join(' ');
    }
    if (inner !== undefined && inner !== '') collectBroad(inner, splitShellCommand(inner), out, depth + 1);
  }
}

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'fish']);

/** Remove one leading environment assignment or wrapper program (with its options). */
function stripOneWrapper(words: string[]): string[] | undefined {
  const [first, ...rest] = words;
  if (first === undefined) return undefined;
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) return rest;
  const name = basename(first);
  switch (name) {
    case 'sudo':
    case 'doas':
      return skipOptions(rest, new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U']));
    case 'env': {
      const afterOptions = skipOptions(rest, new Set(['-u', '-C', '-S']));
      return afterOptions.slice(leadingAssignments(afterOptions));
    }
    case 'command':
    case 'builtin':
    case 'exec':
    case 'nohup':
    case 'time':
    case 'stdbuf':
    case 'ionice':
    case 'chroot':
      return skipOptions(rest, new Set(['-c', '-n', '-t']));
    case 'nice':
      return skipOptions(rest, new Set(['-n']));
    case 'xargs':
      return skipOptions(rest, new Set(['-I', '-n', '-P', '-L', '-s', '-d', '-E', '-a']));
    case 'timeout': {
      const afterOptions = skipOptions(rest, new Set(['-s', '-k', '--signal', '--kill-after']));
      return afterOptions.slice(1); // the duration
    }
    default:
      return undefined;
  }
}

function skipOptions(words: string[], withValue: Set<string>): string[] {
  let i = 0;
  while (i < words.length && (words[i] as string).startsWith('-')) {
    const word = words[i] as string;
    i++;
    if (word === '--') break;
    if (withValue.has(word)) i++;
  }
  return words.slice(i);
}

function leadingAssignments(words: string[]): number {
  let count = 0;
  while (count < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[count] as string)) count++;
  return count;
}

function basename(program: string): string {
  const slash = program.lastIndexOf('/');
  return slash >= 0 ? program.slice(slash + 1) : program;
}

const CONTROL_WORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'for',
  '!',
  '{',
  '}',
  'case',
  'esac',
]);

/**
 * For a command that cannot be parsed: every piece between shell punctuation, quotes and
 * substitution brackets, with leading control keywords dropped. Only used to find deny matches.
 */
function looseFragments(command: string): string[] {
  const pieces = command.split(/\$\(|<\(|>\(|[`()"';&|\n{}]/);
  const out: string[] = [];
  for (const piece of pieces) {
    const words = normalizeCommandBlanks(piece.replace(/[<>]+\s*\S*/g, ' '))
      .split(' ')
      .filter(Boolean);
    while (words.length > 0 && CONTROL_WORDS.has(words[0] as string)) words.shift();
    if (words.length > 0) out.push(words.join(' '));
  }
  return out;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
