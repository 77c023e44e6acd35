/**
 * Claude Code's hooks (PreToolUse, PostToolUse, Stop) as a pure engine the workflow can call:
 * validating the settings' `hooks` blocks, deciding which of them a job runs and which match an
 * event, the stdin each hook reads, and what their results mean together. The commands themselves
 * run in the `runHooks` activity (`src/activities/hooks`). No Node built-ins here.
 */
export {
  HOOK_DEFAULT_TIMEOUT_SEC,
  HOOK_EVENTS,
  HOOK_TEXT_CHARS,
  hookTimeoutSec,
  RUN_HOOK_EVENTS,
  type HookCommand,
  type HookDecision,
  type HookEvent,
  type HookMatcherGroup,
  type HooksConfig,
  type RunHookEvent,
  type RunHooksInput,
  type RunHooksResult,
} from './types';
export { hookHandlerSchema, hookMatcherGroupSchema, hooksSettingsSchema, parseHooksSettings } from './settings';
export {
  dedupeHooks,
  hookConditionMatches,
  MATCHERLESS_HOOK_EVENTS,
  matcherKind,
  matchesHookMatcher,
  matchHooks,
  TOOL_HOOK_EVENTS,
  type HookToolCall,
} from './match';
export { resolveHooks, STOP_HOOK_FLAG } from './resolve';
export { hookStdin, type HookEventFacts, type HookSessionFacts } from './stdin';
export {
  capHookText,
  combineHookOutcomes,
  hookOutputSchema,
  interpretHookRun,
  type HookOutcome,
  type HookRun,
} from './outcome';
