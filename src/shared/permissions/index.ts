/**
 * Claude Code's permission rules (`permissions.allow/ask/deny` in settings.json) and modes
 * (`default`, `acceptEdits`, `plan`, `bypassPermissions`, `dontAsk`) as a pure engine the
 * deterministic workflow can call. No Node built-ins, no clock, no randomness.
 */
export {
  PERMISSION_ENGINE,
  PERMISSION_MODES,
  type ParsedRule,
  type PathPattern,
  type PermissionContext,
  type PermissionDecision,
  type PermissionMode,
  type PermissionRules,
  type RuleList,
} from './types';
export { decidePermission, readDenyRuleFor } from './decide';
export { mergeRules, parseRule, validateRules, KNOWN_TOOLS, type ParseRuleResult } from './rules';
export { suggestAllowRule } from './suggest';
export { isInsideDirectory, matchPathPattern, normalizePosixPath, resolveToolPath } from './paths';

import { PERMISSION_MODES, type PermissionMode } from './types';
import { parseRule } from './rules';

/** Type guard for a mode name read from settings or a CLI flag. */
export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === 'string' && (PERMISSION_MODES as readonly string[]).includes(value);
}

/** Is `text` a rule about Bash (`Bash`, `Bash(rm:*)`)? Invalid rules are not. */
export function isBashRuleText(text: string): boolean {
  const parsed = parseRule(text);
  return parsed.ok && parsed.rule.tool === 'Bash';
}
