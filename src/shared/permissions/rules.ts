/**
 * Parsing and validating permission rules: `Tool` or `Tool(specifier)`, as in Claude Code's
 * settings.json. Syntax facts (checked against Claude Code's permissions documentation):
 * - A bare tool name matches every call of that tool; `Bash(*)` is the same as `Bash`.
 * - `Bash(npm test)` is one exact command; `Bash(npm test:*)` is a prefix rule (the legacy `:*`
 *   suffix, equivalent to ` *`, only valid at the end); `Bash(git commit *)` is a wildcard where
 *   `*` matches any text, spaces included. `Bash(ls *)` enforces a word boundary (`lsof` does not
 *   match) and also matches plain `ls`; `Bash(ls*)` matches both `ls -la` and `lsof`.
 * - `Read(...)` and `Edit(...)` take gitignore-style paths: `//abs` from the filesystem root,
 *   `~/x` from the home directory, `/x` from the project root (not the filesystem root!),
 *   `./x` or `x` from the project (here: the workspace).
 * - `Edit` rules cover every tool that edits files (Edit, MultiEdit, Write); `Read` rules apply to
 *   the tools that read files (Read, Glob, Grep).
 *
 * Escapes inside a specifier: `\(` and `\)` for literal parentheses, `\*` for a literal star,
 * `\\` for one backslash; any other backslash is kept as written.
 */
import type { ParsedRule, PathPattern, PermissionRules, RuleList } from './types';

export const READ_FAMILY: readonly string[] = ['Read', 'Glob', 'Grep'];
export const EDIT_FAMILY: readonly string[] = ['Edit', 'MultiEdit', 'Write'];

/** Tools of this project whose rules take no specifier, with the rule family that does. */
const NO_SPECIFIER: Readonly<Record<string, string | undefined>> = {
  Write: 'Edit',
  MultiEdit: 'Edit',
  Glob: 'Read',
  Grep: 'Read',
  TodoWrite: undefined,
};

/**
 * Claude Code tools this project does not have. Rules naming them are accepted so that a
 * settings.json shared with Claude Code loads, but they can never match a call here.
 */
const OTHER_CLAUDE_CODE_TOOLS: readonly string[] = [
  'WebFetch',
  'WebSearch',
  'NotebookEdit',
  'NotebookRead',
  'Task',
  'Agent',
  'LS',
  'KillShell',
  'KillBash',
  'BashOutput',
  'TaskOutput',
  'ExitPlanMode',
  'SlashCommand',
  'Skill',
  'TodoRead',
  'ListMcpResourcesTool',
  'ReadMcpResourceTool',
];

/** Tools whose rules this engine evaluates. */
export const KNOWN_TOOLS: readonly string[] = [
  'Bash',
  'Read',
  'Edit',
  'Write',
  'MultiEdit',
  'Glob',
  'Grep',
  'TodoWrite',
];

export type ParseRuleResult = { ok: true; rule: ParsedRule } | { ok: false; error: string };

/** Parse one rule; the error says what is wrong and how to write the rule instead. */
export function parseRule(text: string): ParseRuleResult {
  if (typeof text !== 'string') return fail('a rule must be a string such as "Bash(npm test:*)"');
  const rule = text.trim();
  if (rule === '') {
    return fail(
      'the rule is empty; write a tool name such as "Read" or a tool with a specifier such as "Bash(npm test:*)"',
    );
  }
  const open = rule.indexOf('(');
  if (open < 0) {
    if (rule.includes(')')) return fail(`unbalanced parentheses: ")" without "("; write it as "Tool(specifier)"`);
    const nameError = checkToolName(rule);
    if (nameError) return fail(nameError);
    return { ok: true, rule: { kind: 'tool', text: rule, tool: rule } };
  }

  const name = rule.slice(0, open);
  if (name.trim() !== name || name === '') {
    return fail(
      name === ''
        ? 'the rule has no tool name before "("; write it as "Bash(npm test)" or "Read(./src/**)"'
        : `remove the space between the tool name and "(": write "${name.trim()}(...)"`,
    );
  }
  if (!rule.endsWith(')')) {
    return fail(
      rule.lastIndexOf(')') > open
        ? `unexpected text after the closing ")"; a rule is "Tool(specifier)" with nothing after it`
        : `unbalanced parentheses: "(" is never closed; write it as "${name}(...)"`,
    );
  }
  const content = unescapeParentheses(rule.slice(open + 1, -1));
  if (!content.ok) return fail(content.error);
  const nameError = checkToolName(name);
  if (nameError) return fail(nameError);
  const specifier = content.text.trim();

  if (name in NO_SPECIFIER) {
    const family = NO_SPECIFIER[name];
    return fail(
      family === undefined
        ? `${name} takes no specifier; write just "${name}"`
        : `${name} rules take no specifier: path rules are written ${family}(...), which covers ${family === 'Edit' ? 'Edit, MultiEdit and Write' : 'Read, Glob and Grep'}; write "${family}(${specifier || 'src/**'})" or just "${name}"`,
    );
  }
  if (specifier === '') {
    return fail(
      `the specifier is empty; write "${name}" alone to match every call, or put ${name === 'Bash' ? 'a command inside, as in "Bash(npm test)"' : name === 'Read' || name === 'Edit' ? `a path inside, as in "${name}(./src/**)"` : 'something inside the parentheses'}`,
    );
  }
  if (name === 'Bash') return parseBashSpecifier(rule, specifier);
  if (name === 'Read' || name === 'Edit') {
    const pattern = parsePathPattern(specifier);
    if (!pattern.ok) return fail(pattern.error);
    return { ok: true, rule: { kind: 'path', text: rule, tool: name, pattern: pattern.pattern } };
  }
  return { ok: true, rule: { kind: 'other', text: rule, tool: name, specifier } };
}

/** Every problem of every rule, each naming its list, position and text. */
export function validateRules(rules: PermissionRules): string[] {
  const problems: string[] = [];
  for (const list of ['allow', 'ask', 'deny'] as const) {
    const entries: unknown = (rules as Partial<PermissionRules>)[list];
    if (entries === undefined) continue;
    if (!Array.isArray(entries)) {
      problems.push(`permissions.${list} must be an array of rule strings, e.g. ["Bash(npm test:*)"]`);
      continue;
    }
    entries.forEach((entry: unknown, index) => {
      const where = `permissions.${list}[${index}]`;
      if (typeof entry !== 'string') {
        problems.push(`${where} must be a string such as "Bash(npm test:*)", not ${describe(entry)}`);
        return;
      }
      const parsed = parseRule(entry);
      if (!parsed.ok) problems.push(`${where} ${JSON.stringify(entry)}: ${parsed.error}`);
    });
  }
  return problems;
}

/** Concatenate rule lists in order, dropping repeats (the first occurrence stays). */
export function mergeRules(...sources: Array<Partial<PermissionRules> | undefined>): PermissionRules {
  const merged: PermissionRules = { allow: [], ask: [], deny: [] };
  for (const list of ['allow', 'ask', 'deny'] as const satisfies readonly RuleList[]) {
    const seen = new Set<string>();
    for (const source of sources) {
      for (const rule of source?.[list] ?? []) {
        if (seen.has(rule)) continue;
        seen.add(rule);
        merged[list].push(rule);
      }
    }
  }
  return merged;
}

/** True when `rule` (parsed) is about calls of `toolName`. */
export function ruleAppliesTo(rule: ParsedRule, toolName: string): boolean {
  if (rule.tool === toolName) return true;
  if (rule.kind !== 'tool' && rule.kind !== 'path') return false;
  if (rule.tool === 'Read') return READ_FAMILY.includes(toolName);
  if (rule.tool === 'Edit') return EDIT_FAMILY.includes(toolName);
  return false;
}

/**
 * Collapse runs of unquoted blanks to one space and trim, the way a command's words are joined;
 * quoted and escaped blanks are kept.
 */
export function normalizeCommandBlanks(text: string): string {
  // Built from slices of `text` with the last character tracked: appending character by
  // character, or `endsWith` on a growing string, made a megabyte-long command take seconds.
  const parts: string[] = [];
  let last = '';
  let runStart = -1;
  const flush = (end: number) => {
    if (runStart >= 0 && end > runStart) {
      const piece = text.slice(runStart, end);
      parts.push(piece);
      last = piece[piece.length - 1] as string;
    }
    runStart = -1;
  };
  let quote: '"' | "'" | undefined;
  let pendingBlank = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote === undefined && (ch === ' ' || ch === '\t')) {
      flush(i);
      pendingBlank = true;
      continue;
    }
    if (quote === undefined && ch === '\n') {
      flush(i);
      if (/\s/.test(last)) {
        const joined = parts.join('').trimEnd();
        parts.length = 0;
        if (joined !== '') parts.push(joined);
      }
      parts.push('\n');
      last = '\n';
      pendingBlank = false;
      continue;
    }
    if (pendingBlank && parts.length > 0 && last !== '\n') {
      parts.push(' ');
      last = ' ';
    }
    pendingBlank = false;
    if (runStart < 0) runStart = i;
    if (ch === '\\' && quote !== "'" && i + 1 < text.length) {
      i++;
    } else if (quote === undefined && (ch === '"' || ch === "'")) {
      quote = ch;
    } else if (ch === quote) {
      quote = undefined;
    }
  }
  flush(text.length);
  return parts.join('').trim();
}

function parseBashSpecifier(text: string, specifier: string): ParseRuleResult {
  const command = normalizeCommandBlanks(specifier);
  if (command === '*') return { ok: true, rule: { kind: 'tool', text, tool: 'Bash' } };
  const legacy = findUnescaped(command, ':*');
  if (legacy >= 0 && legacy !== command.length - 2) {
    return fail(
      `":*" is only valid at the end of a Bash rule, as in "Bash(npm test:*)"; to match anything in the middle use "*", as in "Bash(${command.slice(0, legacy)} *${command.slice(legacy + 2)})"`,
    );
  }
  if (legacy >= 0) {
    const prefix = command.slice(0, legacy).trimEnd();
    if (prefix === '')
      return fail('the prefix before ":*" is empty; write "Bash" to match every command, or "Bash(npm test:*)"');
    if (findUnescaped(prefix, '*') >= 0) {
      return {
        ok: true,
        rule: { kind: 'bash-wildcard', text, tool: 'Bash', pattern: `${prefix} *`, optionalTail: true },
      };
    }
    return { ok: true, rule: { kind: 'bash-prefix', text, tool: 'Bash', prefix: unescapeStars(prefix) } };
  }
  const stars = countUnescaped(command, '*');
  if (stars === 0)
    return { ok: true, rule: { kind: 'bash-exact', text, tool: 'Bash', command: unescapeStars(command) } };
  const optionalTail = stars === 1 && command.endsWith(' *') && !command.endsWith('\\ *');
  return { ok: true, rule: { kind: 'bash-wildcard', text, tool: 'Bash', pattern: command, optionalTail } };
}

/** Parse the specifier of a `Read(...)`/`Edit(...)` rule. */
export function parsePathPattern(specifier: string): { ok: true; pattern: PathPattern } | { ok: false; error: string } {
  if (specifier.includes(':*')) {
    return {
      ok: false,
      error: `":*" is Bash prefix syntax; path rules use gitignore globs: write "${specifier.replace(':*', '/**')}" for everything under a directory`,
    };
  }
  let anchor: PathPattern['anchor'];
  let rest: string;
  let anyDepth = false;
  if (specifier.startsWith('//')) {
    anchor = 'root';
    rest = specifier.slice(2);
  } else if (specifier === '~' || specifier.startsWith('~/')) {
    anchor = 'home';
    rest = specifier.slice(2);
  } else if (specifier.startsWith('~')) {
    return {
      ok: false,
      error: `only "~/" (your home directory) is supported, not "${specifier.split('/')[0]}"; use "//absolute/path" for other places`,
    };
  } else if (specifier.startsWith('/')) {
    anchor = 'workspace';
    rest = specifier.slice(1);
  } else if (specifier === '.' || specifier.startsWith('./')) {
    anchor = 'workspace';
    rest = specifier.slice(2);
  } else {
    anchor = 'workspace';
    rest = specifier;
    // Gitignore: a pattern with no slash except a trailing one matches at any depth.
    anyDepth = !rest.replace(/\/+$/, '').includes('/');
  }
  const segments: string[] = [];
  let up = 0;
  for (const raw of rest.split('/')) {
    if (raw === '' || raw === '.') continue;
    if (raw === '..') {
      if (segments.length > 0 && segments[segments.length - 1] !== '**') segments.pop();
      else if (segments.length === 0) up++;
      else return { ok: false, error: '".." cannot follow "**" in a path rule; write the directory out' };
      continue;
    }
    // Gitignore: `**` is special only as a whole segment; `a**b` is two ordinary stars.
    segments.push(raw === '**' ? raw : raw.replace(/\*{2,}/g, '*'));
  }
  if (anchor === 'root') up = 0;
  if (anyDepth && segments.length > 0) segments.unshift('**');
  return { ok: true, pattern: { anchor, up, segments } };
}

function checkToolName(name: string): string | undefined {
  if (KNOWN_TOOLS.includes(name) || OTHER_CLAUDE_CODE_TOOLS.includes(name)) return undefined;
  if (/^mcp__[A-Za-z0-9_-]+$/.test(name)) return undefined;
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) {
    return `"${name}" is not a tool name; a rule is a tool name such as "Bash" or "Read", optionally followed by "(specifier)"`;
  }
  const all = [...KNOWN_TOOLS, ...OTHER_CLAUDE_CODE_TOOLS];
  const sameLetters = all.find((known) => known.toLowerCase() === name.toLowerCase());
  if (sameLetters) return `unknown tool "${name}": tool names are case-sensitive; write "${sameLetters}"`;
  const near = all.find((known) => editDistance(known.toLowerCase(), name.toLowerCase()) <= 2);
  return `unknown tool "${name}"${near ? `; did you mean "${near}"?` : ''} The tools here are ${KNOWN_TOOLS.join(', ')} (MCP tools are written mcp__server__tool)`;
}

/** Turn `\(`/`\)` into parentheses and check the rest are balanced. Other escapes stay. */
function unescapeParentheses(content: string): { ok: true; text: string } | { ok: false; error: string } {
  let text = '';
  let depth = 0;
  for (let i = 0; i < content.length; i++) {
    const ch = content[i] as string;
    if (ch === '\\' && i + 1 < content.length) {
      const next = content[i + 1] as string;
      text += next === '(' || next === ')' ? next : ch + next;
      i++;
      continue;
    }
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) {
      return {
        ok: false,
        error: 'unbalanced parentheses: a ")" inside the specifier closes nothing; escape a literal one as "\\)"',
      };
    }
    text += ch;
  }
  if (depth !== 0) {
    return {
      ok: false,
      error: 'unbalanced parentheses: a "(" inside the specifier is never closed; escape a literal one as "\\("',
    };
  }
  return { ok: true, text };
}

function findUnescaped(text: string, needle: string): number {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (text.startsWith(needle, i)) return i;
  }
  return -1;
}

function countUnescaped(text: string, ch: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === ch) count++;
  }
  return count;
}

/** `\*` → `*` and `\\` → `\`; other backslashes are literal. */
export function unescapeStars(text: string): string {
  return text.replace(/\\([*\\])/g, '$1');
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = saved;
    }
  }
  return row[b.length] as number;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function fail(error: string): ParseRuleResult {
  return { ok: false, error };
}
