/**
 * Matching Bash rules against commands. Two directions, on purpose asymmetric:
 * - allow rules are strict: a rule approves one simple command; a compound command is approved
 *   only when every part is approved on its own; anything whose list of commands cannot be known
 *   from the text (substitutions, subshells, control structures, unparseable input) is never
 *   approved by a command rule; nor is a command whose program is not a plain word (`$X`, `r?`,
 *   `{r,}m`); a redirection to a file needs an exact rule.
 * - deny and ask rules are broad: they are matched against what will really run (see
 *   `shell/invocations.ts`): every simple command, nested ones included, with the program reduced to
 *   its name, looked into through wrappers (`env`, `timeout`, `xargs`, `sudo`, ...), `sh -c`
 *   bodies, `find -exec`, `eval`. Where part of the command cannot be known from the text (a
 *   program or argument that is a variable, a substitution or a glob; a shell reading commands
 *   from a pipe; input the reader cannot parse), a rule that could match some expansion of it
 *   cannot be ruled out: the caller asks instead of allowing. So does code bash may run a second
 *   time from text (`'a[$(rm x)]'` handed to `declare`, `${x@P}`, `PS4=...`; see
 *   `shell/invocations.ts`): any Bash deny or ask rule might match what it runs.
 * A false "deny" costs a prompt or a retry; a false "allow" can cost the repository.
 */
import { parseShell, programName, readBashCommand, splitShellCommand } from '../shell';
import type { BashHidden, BashReading, Invocation, ShellSplit, ShellSubCommand } from '../shell';
import { escapeRegExp } from './paths';
import { normalizeCommandBlanks } from './rules';
import type { ParsedRule } from './types';

type BashRule = Extract<ParsedRule, { kind: 'bash-exact' | 'bash-prefix' | 'bash-wildcard' }>;

/** True for `Bash(...)` rules with a command specifier. */
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
  let source = '';
  for (const piece of wildcardPieces(pattern, optionalTail)) {
    source += piece === ANY ? '[\\s\\S]*' : escapeRegExp(piece);
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
  /** The strict split allow rules use. */
  split: ShellSplit;
  /** What the command runs, for deny and ask rules. */
  reading: BashReading;
  /** Texts a deny or ask rule is tried against for a sure match. */
  candidates: string[];
  /** Parts whose text is only known when the command runs, with why. */
  unknowns: Array<{ template: Piece[]; why: string }>;
}

/** Parse `command` for the rules (both directions). */
export function analyzeBashCommand(command: string, engine?: number): BashAnalysis {
  const split = splitShellCommand(command);
  const reading = readBashCommand(command, engine);
  const candidates = new Set<string>([normalizeCommandBlanks(command)]);
  if (split.ok) {
    candidates.add(split.text);
    for (const sub of split.commands) {
      candidates.add(sub.text);
      candidates.add(sub.textWithoutRedirects);
    }
  }
  const unknowns: BashAnalysis['unknowns'] = [];
  for (const invocation of reading.invocations) {
    for (const text of invocationTexts(invocation)) candidates.add(text);
    const unknown = invocation.words.find((word, index) => !word.literal && !(index === 0 && invocation.program));
    if (unknown !== undefined || invocation.program === undefined) {
      const why =
        invocation.why ??
        (invocation.program === undefined
          ? `its program ${JSON.stringify(unknown?.raw ?? '')} is only known when the command runs`
          : `${JSON.stringify(unknown?.raw ?? '')} in ${JSON.stringify(invocation.program)} is only known when the command runs`);
      unknowns.push({ template: invocationTemplate(invocation, false), why });
      const first = invocation.words[0];
      if (invocation.program !== undefined && first?.literal === true && first.value !== invocation.program) {
        unknowns.push({ template: invocationTemplate(invocation, true), why });
      }
    }
  }
  if (reading.unreadable.length > 0) {
    // Whatever the reader could not follow: its loose pieces may still show a sure match.
    for (const fragment of looseFragments(command)) {
      candidates.add(fragment);
      for (const invocation of readBashCommand(fragment).invocations) {
        for (const text of invocationTexts(invocation)) candidates.add(text);
      }
    }
  }
  return { command, split, reading, candidates: [...candidates].filter((text) => text !== ''), unknowns };
}

/** How a deny or ask rule relates to a command. */
export type BroadMatch = { kind: 'match'; text: string } | { kind: 'possible'; why: string } | undefined;

/**
 * A deny or ask rule against a command: a sure match, or "possible" when the rule could match
 * what an unknown part of the command turns out to be, or undefined when it certainly does not.
 */
export function matchBashRuleBroadly(rule: BashRule, analysis: BashAnalysis): BroadMatch {
  const hit = analysis.candidates.find((text) => bashRuleMatchesText(rule, text));
  if (hit !== undefined) return { kind: 'match', text: hit };
  const [unreadable] = analysis.reading.unreadable;
  if (unreadable !== undefined) return { kind: 'possible', why: `part of the command cannot be read (${unreadable})` };
  const [hidden] = analysis.reading.hidden;
  if (hidden !== undefined) return { kind: 'possible', why: `${hidden.why}, and what that runs is only known then` };
  const unknown = analysis.unknowns.find(({ template }) =>
    ruleAlternatives(rule).some((alternative) => mayIntersect(alternative, template)),
  );
  return unknown === undefined ? undefined : { kind: 'possible', why: unknown.why };
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

/**
 * Does an allow rule approve this simple command? Never when its program is not a plain word,
 * nor when it holds code bash itself may run from text ({@link hiddenCodeIn}).
 */
export function allowRuleMatchesSubCommand(rule: BashRule, sub: ShellSubCommand, engine?: number): boolean {
  const { texts, exactOnly } = allowTexts(sub);
  if (exactOnly && rule.kind !== 'bash-exact') return false;
  return (
    texts.some((text) => bashRuleMatchesText(rule, text)) &&
    plainProgram(sub) !== false &&
    hiddenCodeIn(sub, engine) === undefined
  );
}

/**
 * Bash's builtins (and `time`): programs bash runs itself, which may evaluate their arguments'
 * text (`printf -v`, `declare`, `read`, `test -v`, ...) or keep it in a variable for later.
 */
const SHELL_BUILTINS = new Set([
  '.',
  ':',
  '[',
  '[[',
  'alias',
  'bg',
  'bind',
  'break',
  'builtin',
  'caller',
  'cd',
  'command',
  'compgen',
  'complete',
  'compopt',
  'continue',
  'declare',
  'dirs',
  'disown',
  'echo',
  'enable',
  'eval',
  'exec',
  'exit',
  'export',
  'false',
  'fc',
  'fg',
  'getopts',
  'hash',
  'help',
  'history',
  'jobs',
  'kill',
  'let',
  'local',
  'logout',
  'mapfile',
  'popd',
  'printf',
  'pushd',
  'pwd',
  'read',
  'readarray',
  'readonly',
  'return',
  'set',
  'shift',
  'shopt',
  'source',
  'suspend',
  'test',
  'time',
  'times',
  'trap',
  'true',
  'type',
  'typeset',
  'ulimit',
  'umask',
  'unalias',
  'unset',
  'wait',
]);

/**
 * Code that bash itself may run from the text of this simple command, which keeps any command
 * allow rule from approving it: a `${x@P}`-style expansion, or hidden code (`'a[$(rm x)]'`, a
 * `PS4=` setting) given to a builtin or kept in a variable. An external program only receives
 * such text as data (`git commit -m 'fix `x`'`, `awk '{print $(NF)}'`), so its rule still holds.
 */
export function hiddenCodeIn(sub: ShellSubCommand, engine?: number): BashHidden | undefined {
  const reading = readBashCommand(sub.text, engine);
  const [first] = reading.hidden;
  if (first === undefined) return undefined;
  const expansion = reading.hidden.find((entry) => entry.expansion === true);
  if (expansion !== undefined) return expansion;
  const program = programName(reading.parsed.commands[0]?.words[0]);
  return program === undefined || SHELL_BUILTINS.has(program) ? first : undefined;
}

/**
 * Whether the program of `sub` is a plain word (after quote removal), false when it is only known
 * once the command runs (`$X`, `r?`, `{r,}m`, `~x`), undefined when it has no program.
 */
export function plainProgram(sub: ShellSubCommand): boolean | undefined {
  const parsed = parseShell(sub.textWithoutRedirects);
  const [first] = parsed.commands;
  if (parsed.problems.length > 0 || first === undefined) return false;
  const program = first.words[0];
  return program === undefined ? undefined : program.literal;
}

// --- texts and templates of invocations ------------------------------------------------------------

/** The ways an invocation's text may be written in a rule: by name, as written, and raw. */
function invocationTexts(invocation: Invocation): string[] {
  // Words are joined by single blanks already; blanks inside a word were quoted and stay.
  const values = invocation.words.map((word) => word.value);
  const texts = [values.join(' '), invocation.words.map((word) => word.raw).join(' ')];
  if (invocation.program !== undefined) texts.unshift([invocation.program, ...values.slice(1)].join(' '));
  return unique(texts);
}

/** A rule or command as a sequence of characters and "any text" wildcards. */
const ANY: unique symbol = Symbol('any');
type Piece = string | typeof ANY;

/**
 * The invocation's text with every unknown word as "any text" (which may also be empty or
 * several words); the program by name, or `asWritten` (`/bin/rm`).
 */
function invocationTemplate(invocation: Invocation, asWritten: boolean): Piece[] {
  const out: Piece[] = [];
  invocation.words.forEach((word, index) => {
    const byName = index === 0 && invocation.program !== undefined && !asWritten;
    const unknownProgram = index === 0 && invocation.program === undefined;
    const known = byName ? invocation.program : word.literal && !unknownProgram ? word.value : undefined;
    if (known === undefined) {
      if (out[out.length - 1] !== ANY) out.push(ANY);
      return;
    }
    if (out.length > 0 && out[out.length - 1] !== ANY) out.push(' ');
    for (const ch of known) out.push(ch);
  });
  return out;
}

function ruleAlternatives(rule: BashRule): Piece[][] {
  switch (rule.kind) {
    case 'bash-exact':
      return [[...rule.command]];
    case 'bash-prefix':
      return [[...rule.prefix], [...rule.prefix, ' ', ANY]];
    case 'bash-wildcard': {
      const body = wildcardPieces(rule.pattern, rule.optionalTail).flatMap((piece): Piece[] =>
        piece === ANY ? [ANY] : [...piece],
      );
      return rule.optionalTail ? [body, [...body, ' ', ANY]] : [body];
    }
  }
}

/** A wildcard pattern as literal text and `*` wildcards (`\*` is a star, `\\` a backslash). */
function wildcardPieces(pattern: string, optionalTail: boolean): Piece[] {
  const body = optionalTail ? pattern.slice(0, -2) : pattern;
  const out: Piece[] = [];
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch === '\\' && (body[i + 1] === '*' || body[i + 1] === '\\')) {
      out.push(body[i + 1] as string);
      i++;
    } else {
      out.push(ch === '*' ? ANY : ch);
    }
  }
  return out;
}

/** Above this many states, "could these match the same text?" is answered yes without looking. */
const MAX_INTERSECTION_STATES = 4_000_000;

/** Is there a text both patterns match? (Both are characters and "any text" wildcards.) */
function mayIntersect(a: Piece[], b: Piece[]): boolean {
  const n = a.length;
  const m = b.length;
  if ((n + 1) * (m + 1) > MAX_INTERSECTION_STATES) return true;
  const width = m + 1;
  const reach = new Uint8Array((n + 1) * width);
  reach[0] = 1;
  for (let i = 0; i <= n; i++) {
    for (let j = 0; j <= m; j++) {
      if (reach[i * width + j] === 0) continue;
      if (i === n && j === m) return true;
      const x = a[i];
      const y = b[j];
      if (x === ANY) {
        reach[(i + 1) * width + j] = 1;
        if (j < m) reach[i * width + j + 1] = 1;
      }
      if (y === ANY) {
        reach[i * width + j + 1] = 1;
        if (i < n) reach[(i + 1) * width + j] = 1;
      }
      if (x !== undefined && y !== undefined && x !== ANY && y !== ANY && x === y) reach[(i + 1) * width + j + 1] = 1;
    }
  }
  return false;
}

// --- unreadable commands -----------------------------------------------------------------------------

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
 * For a command that cannot be read: every piece between shell punctuation, quotes and
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
