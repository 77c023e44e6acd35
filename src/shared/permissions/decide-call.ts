/**
 * The call `decide.ts` decides on: what it is, the rule lists it is decided by, and how it is
 * worded in the reasons. Pure code.
 */
import type { BashAnalysis } from './bash';
import type { ReadOnlyContext, Refusal } from '../shell';
import { isInsideDirectory, relativeSegments } from './paths';
import { EDIT_FAMILY, normalizeCommandBlanks, parseRule, READ_FAMILY } from './rules';
import type { ParsedRule, PermissionRules, RuleList } from './types';

export type Family = 'bash' | 'read' | 'edit' | 'todo' | 'unknown';

export interface Call {
  tool: string;
  family: Family;
  workspace: string;
  homeDir: string | undefined;
  /** The workspace and the added directories, normalised. */
  roots: string[];
  /** Where Bash commands run, for the read-only test. */
  scope: ReadOnlyContext;
  /** Why the input cannot be evaluated (the tool will reject it before doing anything). */
  invalid?: string;
  /** Absolute, normalised path of a Read/Glob/Grep/Edit/MultiEdit/Write call. */
  path?: string;
  bash?: BashAnalysis;
  readOnly: boolean;
  /** For Bash: why the command is not read-only. */
  notReadOnly?: Refusal;
  /** For Bash: the Read deny and ask rules, which also keep a command from counting as read-only. */
  readRules?: Entry[];
  /** For Bash: a path a known reading program reads that a Read deny or ask rule covers. */
  readCover?: { list: RuleList; rule: string; path: string; sure: boolean };
  input: unknown;
}

export interface Entry {
  list: RuleList;
  text: string;
  rule?: ParsedRule;
  error?: string;
}

export interface Outcome {
  behavior: 'allow' | 'deny' | 'ask';
  /** For allow/deny: the whole reason. For ask: why approval is needed (a clause). */
  reason: string;
  rule?: string;
  /** An ask that came from permissions.ask (or a rule that could not be evaluated). */
  fromRule?: boolean;
  /** For an ask from the mode's default: what the mode does (left out under dontAsk). */
  modeClause?: string;
}

export interface AllowResult {
  outcome?: Outcome;
  /** Why no rule could approve it, for the mode's reason. */
  note?: string;
}

export function familyOf(tool: string): Family {
  if (tool === 'Bash') return 'bash';
  if (READ_FAMILY.includes(tool)) return 'read';
  if (EDIT_FAMILY.includes(tool)) return 'edit';
  if (tool === 'TodoWrite') return 'todo';
  return 'unknown';
}

export function parseLists(rules: PermissionRules): Record<RuleList, Entry[]> {
  const out: Record<RuleList, Entry[]> = { allow: [], ask: [], deny: [] };
  for (const list of ['allow', 'ask', 'deny'] as const) {
    const texts: unknown = rules?.[list];
    if (!Array.isArray(texts)) continue;
    for (const text of texts) {
      if (typeof text !== 'string') continue;
      const parsed = parseRule(text);
      out[list].push(
        parsed.ok ? { list, text: parsed.rule.text, rule: parsed.rule } : { list, text, error: parsed.error },
      );
    }
  }
  return out;
}

// --- wording -------------------------------------------------------------------------------------

export function describeAction(call: Call): string {
  switch (call.family) {
    case 'edit':
      return `${call.tool} changes files (${call.path !== undefined ? displayPath(call) : 'no valid path'})`;
    case 'bash': {
      const command = quote((call.bash?.command ?? '').trim());
      const why = call.notReadOnly?.why;
      return why === undefined
        ? `the command ${command} may change something (only read-only commands run in plan mode)`
        : `the command ${command} is not read-only: ${why} (only read-only commands inside the workspace run in plan mode)`;
    }
    default:
      return `${call.tool} is not read-only`;
  }
}

/** A path as the model will recognise it: workspace-relative inside, absolute outside. */
export function displayPath(call: Call): string {
  const path = call.path as string;
  if (path === call.workspace) return `${path} (the workspace root)`;
  return isInsideDirectory(path, call.workspace) ? relativeSegments(path, call.workspace).join('/') : path;
}

export function quote(text: string): string {
  const normal = normalizeCommandBlanks(text);
  return JSON.stringify(normal.length > 160 ? `${normal.slice(0, 157)}...` : normal);
}
