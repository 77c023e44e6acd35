/**
 * Which hooks run for an event: Claude Code's matcher rules (hooks reference, "Matcher
 * patterns"), the handlers' `if` conditions, and the deduplication of identical commands.
 */
import { decidePermission, parseRule } from '../permissions';
import { ruleAppliesTo } from '../permissions/rules';
import type { HookCommand, HooksConfig } from './types';

/** Tool events: the matcher filters the tool name, and `if` conditions apply. */
export const TOOL_HOOK_EVENTS: readonly string[] = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
  'PermissionDenied',
];

/** Events without matcher support: Claude Code silently ignores a matcher on them. */
export const MATCHERLESS_HOOK_EVENTS: readonly string[] = [
  'UserPromptSubmit',
  'Stop',
  'TeammateIdle',
  'TaskCreated',
  'TaskCompleted',
  'WorktreeCreate',
  'WorktreeRemove',
  'CwdChanged',
];

/** Only letters, digits, `_` and `|`: compared as an exact name, or a `|`-separated list of them. */
const EXACT_MATCHER = /^[A-Za-z0-9_|]+$/;

/** How Claude Code evaluates a matcher: by the characters it contains. */
export function matcherKind(matcher: string | undefined): 'all' | 'exact' | 'regex' {
  if (matcher === undefined || matcher === '' || matcher === '*') return 'all';
  return EXACT_MATCHER.test(matcher) ? 'exact' : 'regex';
}

/**
 * Whether `matcher` selects `name`. `*`, `""` or none: everything. Letters, digits, `_` and `|`
 * only: exact names (`Bash` is not `BashOutput`; `mcp__memory` matches no tool). Anything else:
 * a JavaScript regular expression tested unanchored, as Claude Code does (`^Notebook` is how the
 * reference spells "starts with"). A regex that does not compile matches nothing; settings
 * validation refuses one before it gets here.
 */
export function matchesHookMatcher(matcher: string | undefined, name: string): boolean {
  switch (matcherKind(matcher)) {
    case 'all':
      return true;
    case 'exact':
      return (matcher as string).split('|').some((alternative) => alternative !== '' && alternative === name);
    case 'regex':
      try {
        return new RegExp(matcher as string).test(name);
      } catch {
        return false;
      }
  }
}

/** The tool call a tool event is about, for `if` conditions. */
export interface HookToolCall {
  input: unknown;
  /** Realpath of the workspace, against which relative paths in the rule and the input resolve. */
  workspace: string;
  homeDir?: string;
}

/**
 * Whether a handler's `if` rule (permission rule syntax) matches the call. Evaluated as a deny
 * rule would be, which is Claude Code's reading too: `Bash(git *)` matches `npm test && git push`
 * because one subcommand does. Where the rule engine cannot be sure (a command it cannot read
 * through), the hook runs: running a hook once too often is the safer mistake for a guard.
 */
export function hookConditionMatches(rule: string, toolName: string, call: HookToolCall): boolean {
  const parsed = parseRule(rule);
  if (!parsed.ok) return true;
  if (!ruleAppliesTo(parsed.rule, toolName)) return false;
  try {
    const decision = decidePermission(toolName, call.input, {
      mode: 'default',
      rules: { allow: [], ask: [], deny: [rule] },
      workspace: call.workspace,
      ...(call.homeDir !== undefined ? { homeDir: call.homeDir } : {}),
      // Pinned: which hooks run is a workflow decision, so a newer reading must not change it on
      // replay. (A later generation here needs the job's own, as the tool gate has.)
      engine: 1,
    });
    return decision.rule !== undefined;
  } catch {
    return true;
  }
}

/**
 * The hooks to run for `event`: every group whose matcher selects `toolName` (tool events; a tool
 * event without a tool name runs only the match-all groups), every group of an event without
 * matcher support, minus handlers whose `if` does not match `call`. Identical commands run once,
 * as in Claude Code (deduplicated by command string); the first occurrence, in settings order,
 * is kept with its timeout and source. Without `call`, `if` conditions cannot be evaluated and
 * their hooks are kept.
 */
export function matchHooks(config: HooksConfig, event: string, toolName?: string, call?: HookToolCall): HookCommand[] {
  const toolEvent = TOOL_HOOK_EVENTS.includes(event);
  const matcherless = MATCHERLESS_HOOK_EVENTS.includes(event);
  const seen = new Set<string>();
  const matched: HookCommand[] = [];
  for (const group of config[event] ?? []) {
    if (!matcherless) {
      const selects =
        toolName === undefined ? matcherKind(group.matcher) === 'all' : matchesHookMatcher(group.matcher, toolName);
      if (!selects) continue;
    }
    for (const hook of group.hooks) {
      if (hook.if !== undefined) {
        // Claude Code: on an event that is not a tool event, a hook with `if` never runs.
        if (!toolEvent) continue;
        if (toolName !== undefined && call !== undefined && !hookConditionMatches(hook.if, toolName, call)) continue;
      }
      if (seen.has(hook.command)) continue;
      seen.add(hook.command);
      matched.push(hook);
    }
  }
  return matched;
}

/** Drop repeated commands, keeping the first of each. */
export function dedupeHooks(hooks: readonly HookCommand[]): HookCommand[] {
  const seen = new Set<string>();
  return hooks.filter((hook) => {
    if (seen.has(hook.command)) return false;
    seen.add(hook.command);
    return true;
  });
}
