import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { isPermissionMode, PERMISSION_MODES, validateRules } from '../shared/permissions';
import type { SessionInput, SessionPermissions } from '../shared/session';
import { getToolDefinition, TOOL_DEFINITIONS } from '../shared/tools';
import { SETTING_SOURCES } from '../shared/settings-trust';
import type { SettingSource } from '../shared/settings-trust';
import { DEFAULT_MODEL } from './config';
import {
  EFFORTS,
  MIN_THINKING_BUDGET_TOKENS,
  modelFeaturesFor,
  THINKING_DISPLAYS,
  THINKING_MODES,
} from '../shared/thinking';
import type { Effort, ThinkingDisplay, ThinkingMode, ThinkingSetting } from '../shared/thinking';

/** `run`'s flags, as commander hands them over. */
export interface RunFlags {
  cwd?: string;
  model?: string;
  fallbackModel?: string;
  maxTurns?: number;
  maxTokens?: number;
  /** `--thinking adaptive|enabled|disabled` (Claude Code's spelling). */
  thinking?: string;
  /** `--max-thinking-tokens`: manual thinking with this budget (0 turns thinking off). */
  maxThinkingTokens?: number;
  /** `--thinking-display summarized|omitted`. */
  thinkingDisplay?: string;
  /** `--effort low|medium|high|xhigh|max`. */
  effort?: string;
  appendSystemPrompt?: string;
  tools?: string;
  permissionMode?: string;
  allow?: string[];
  deny?: string[];
  ask?: string[];
  approvalTimeout?: number;
  onApprovalTimeout?: string;
  /** Claude Code's `--setting-sources`: a comma-separated subset of user, project, local. */
  settingSources?: string;
  addDir?: string[];
  stopHook?: string[];
  stopHookTimeout?: number;
  /** commander's `--no-sandbox`: false when given. */
  sandbox?: boolean;
  /** `--max-budget-usd`, parsed by {@link parseBudgetUsd}. */
  maxBudgetUsd?: number;
  /** Claude Code's `--allowedTools` / `--disallowedTools`: rule lists, comma- or space-separated. */
  allowedTools?: string[];
  disallowedTools?: string[];
}

/** `CI=true` (or 1): the run is a pipeline's, and nobody vets the workspace it checks out. */
export function isCiEnvironment(env: NodeJS.ProcessEnv): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/**
 * Why nobody can answer an approval in this run (a pipeline, or no terminal to ask at), or
 * undefined at an interactive terminal. Such a run defaults to `dontAsk`, so it never parks.
 */
export function headlessReason(env: NodeJS.ProcessEnv, stdinIsTTY = Boolean(process.stdin.isTTY)): string | undefined {
  if (isCiEnvironment(env)) return 'CI is set';
  if (!stdinIsTTY) return 'no terminal on stdin';
  return undefined;
}

/**
 * One `--allowedTools` / `--disallowedTools` value as Claude Code takes it: rules separated by
 * commas or spaces, where the parentheses of a rule may hold either (`Bash(git log:*) Read`).
 */
export function splitToolRules(value: string): string[] {
  const rules: string[] = [];
  let current = '';
  let depth = 0;
  for (const char of value) {
    if (char === '(') depth += 1;
    if (char === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === ',' || /\s/.test(char))) {
      if (current) rules.push(current);
      current = '';
    } else current += char;
  }
  if (current) rules.push(current);
  return rules;
}

function parseSettingSources(text: string | undefined): SettingSource[] | undefined {
  if (text === undefined) return undefined;
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(SETTING_SOURCES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `--setting-sources: unknown source(s) ${unknown.join(', ')}; use a comma-separated list of ${SETTING_SOURCES.join(', ')} (e.g. --setting-sources user).`,
    );
  }
  return [...new Set(names)] as SettingSource[];
}

export function parsePositiveInt(value: string, name = 'value'): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`${name} must be a whole number of 1 or more (got "${value}").`);
  return n;
}

/** `--max-budget-usd`: a positive amount of USD written as a plain decimal, e.g. 5 or 0.50. */
export function parseBudgetUsd(value: string): number {
  const text = value.trim();
  const usd = Number(text);
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text) || !Number.isFinite(usd) || usd <= 0) {
    throw new InvalidArgumentError(
      `--max-budget-usd must be a positive amount in USD written as a decimal, e.g. --max-budget-usd 5 or 0.50 (got "${value}").`,
    );
  }
  return usd;
}

/**
 * Check a job's settings before anything starts and build its input. Every problem is reported
 * with what is wrong and how to fix it; no model call is made for a job that cannot run.
 */
export function buildSessionInput(
  prompt: string,
  flags: RunFlags,
  env: NodeJS.ProcessEnv = process.env,
  /** Set for a run nobody can answer approvals in (`headlessReason`): the mode defaults to dontAsk. */
  headless?: string,
): SessionInput {
  if (!prompt.trim())
    throw new InvalidArgumentError(
      `${prompt === '' ? 'No prompt was given' : 'The prompt is empty'}: say what the agent should do, ` +
        'e.g. durable-agent run "Check the login module" (or pipe it in on stdin).',
    );
  const given = flags.cwd ?? process.cwd();
  const workspace = path.resolve(given);
  const stat = fs.statSync(workspace, { throwIfNoEntry: false });
  // On a remote cluster the workspace is a path on the workers' machines, which this shell may
  // not see; the job then checks it on the worker and ends with a Terminal if it is missing.
  const remote = Boolean(env.TEMPORAL_ADDRESS?.trim());
  if (!stat?.isDirectory() && !(remote && path.isAbsolute(given) && !stat)) {
    throw new InvalidArgumentError(
      `--cwd ${workspace} is not a directory: point it at the repository the agent should work in` +
        (remote ? ' (with TEMPORAL_ADDRESS set, an absolute path as the workers see it is also accepted).' : '.'),
    );
  }
  const tools = flags.tools
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = tools?.filter((name) => !getToolDefinition(name));
  if (unknown?.length) throw new InvalidArgumentError(`Unknown tool(s) in --tools: ${unknown.join(', ')}.`);
  const settingSources = parseSettingSources(flags.settingSources);
  const permissions = buildPermissions(flags, isCiEnvironment(env), headless);
  const model = chosenModel(flags.model, env);
  const effort = effortOf(flags.effort);
  const offered = withoutDeniedTools(tools, permissions?.deny ?? []);
  return {
    prompt,
    workspace: stat ? fs.realpathSync(workspace) : workspace,
    model,
    ...fallbackModels(flags.fallbackModel, model),
    ...(flags.maxTurns !== undefined ? { maxTurns: flags.maxTurns } : {}),
    ...(flags.maxBudgetUsd !== undefined ? { maxBudgetUsd: flags.maxBudgetUsd } : {}),
    // Without --max-tokens, what Claude Code asks this model for (128,000 on the 5.x family).
    maxTokens: flags.maxTokens ?? modelFeaturesFor(model).defaultMaxTokens,
    thinking: thinkingSettingOf(flags),
    ...(effort ? { effort } : {}),
    ...(flags.appendSystemPrompt ? { appendSystemPrompt: flags.appendSystemPrompt } : {}),
    ...(offered ? { tools: offered } : {}),
    ...(permissions ? { permissions } : {}),
    ...(settingSources ? { settingSources } : {}),
    ...(flags.sandbox === false ? { noSandbox: true } : {}),
    ...stopHooks(flags.stopHook, flags.stopHookTimeout),
  };
}

/**
 * `--thinking`, `--max-thinking-tokens` and `--thinking-display` as one setting. Thinking is on
 * unless turned off: adaptive where the model decides for itself, else a budget.
 */
export function thinkingSettingOf(
  flags: Pick<RunFlags, 'thinking' | 'maxThinkingTokens' | 'thinkingDisplay'>,
): ThinkingSetting {
  const { thinking, maxThinkingTokens: budget, thinkingDisplay } = flags;
  if (thinking !== undefined && !(THINKING_MODES as readonly string[]).includes(thinking)) {
    throw new InvalidArgumentError(
      `--thinking must be one of ${THINKING_MODES.join(', ')} (got "${thinking}"); e.g. --thinking disabled.`,
    );
  }
  if (thinkingDisplay !== undefined && !(THINKING_DISPLAYS as readonly string[]).includes(thinkingDisplay)) {
    throw new InvalidArgumentError(
      `--thinking-display must be one of ${THINKING_DISPLAYS.join(', ')} (got "${thinkingDisplay}").`,
    );
  }
  if (budget !== undefined && budget !== 0 && budget < MIN_THINKING_BUDGET_TOKENS) {
    throw new InvalidArgumentError(
      `--max-thinking-tokens must be 0 (no thinking) or at least ${MIN_THINKING_BUDGET_TOKENS}, the smallest budget the API takes (got ${budget}).`,
    );
  }
  if (budget !== undefined && budget > 0 && thinking === 'disabled') {
    throw new InvalidArgumentError(
      '--max-thinking-tokens gives thinking a budget, and --thinking disabled turns it off: keep one of them.',
    );
  }
  const mode: ThinkingMode =
    budget === 0 ? 'disabled' : ((thinking as ThinkingMode | undefined) ?? (budget ? 'enabled' : 'adaptive'));
  return {
    mode,
    ...(budget ? { budgetTokens: budget } : {}),
    ...(thinkingDisplay && mode !== 'disabled' ? { display: thinkingDisplay as ThinkingDisplay } : {}),
  };
}

/** The thinking and effort options of `run` and `batch`, spelled as Claude Code spells them. */
export function withThinkingOptions(command: Command): Command {
  return command
    .option('--thinking <mode>', 'adaptive | enabled | disabled (default adaptive where the model supports it)')
    .option(
      '--max-thinking-tokens <n>',
      'thinking budget on models that take one (0: no thinking)',
      parseThinkingTokens,
    )
    .option('--thinking-display <display>', "summarized | omitted (default: the model's)")
    .option('--effort <level>', "low | medium | high | xhigh | max (default: the model's, as Claude Code's)");
}

/** `--effort`, checked against the API's levels. */
export function effortOf(value: string | undefined): Effort | undefined {
  if (value === undefined) return undefined;
  if (!(EFFORTS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(
      `--effort must be one of ${EFFORTS.join(', ')} (got "${value}"); e.g. --effort high.`,
    );
  }
  return value as Effort;
}

/** `--max-thinking-tokens`: a whole number, 0 to turn thinking off. */
export function parseThinkingTokens(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError(
      `--max-thinking-tokens must be a whole number of tokens, at least ${MIN_THINKING_BUDGET_TOKENS} (or 0 for no thinking); got "${value}".`,
    );
  }
  return n;
}

/**
 * The tools to offer: a deny rule that is a bare tool name (`--disallowedTools Bash`) takes the
 * tool out of the list, as Claude Code does, so the model never sees it; a rule with a specifier
 * (`Bash(rm:*)`) still only refuses the calls it matches. Undefined keeps the default (all).
 */
export function withoutDeniedTools(tools: string[] | undefined, deny: string[]): string[] | undefined {
  const denied = new Set(deny.filter((rule) => getToolDefinition(rule) !== undefined));
  if (denied.size === 0) return tools;
  return (tools ?? TOOL_DEFINITIONS.map((tool) => tool.name)).filter((name) => !denied.has(name));
}

function stopHooks(
  commands: string[] | undefined,
  timeoutSec: number | undefined,
): Pick<SessionInput, 'stopHooks' | 'stopHookTimeoutSec'> {
  if (!commands?.length) {
    if (timeoutSec !== undefined)
      throw new InvalidArgumentError('--stop-hook-timeout needs a --stop-hook to apply to.');
    return {};
  }
  if (commands.some((command) => command.trim() === '')) {
    throw new InvalidArgumentError('--stop-hook needs a command, e.g. --stop-hook "npm test".');
  }
  return { stopHooks: commands, ...(timeoutSec !== undefined ? { stopHookTimeoutSec: timeoutSec } : {}) };
}

/** `--model`, else `$ANTHROPIC_MODEL` (an empty one counts as unset), else the default. */
function chosenModel(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag !== undefined) {
    if (!flag.trim()) {
      throw new InvalidArgumentError(
        `--model is empty: name a model (e.g. --model ${DEFAULT_MODEL}), or leave the flag out for $ANTHROPIC_MODEL or ${DEFAULT_MODEL}.`,
      );
    }
    return flag.trim();
  }
  return env.ANTHROPIC_MODEL?.trim() || DEFAULT_MODEL;
}

/** Claude Code's setting allows a chain of up to three fallback models. */
export const MAX_FALLBACK_MODELS = 3;

/**
 * `--fallback-model a,b`: the models tried in order after repeated overload. A single model is
 * also given as `fallbackModel`, which every worker version understands.
 */
function fallbackModels(
  flag: string | undefined,
  model: string,
): Pick<SessionInput, 'fallbackModel' | 'fallbackModels'> {
  if (flag === undefined) return {};
  const models = flag.split(',').map((name) => name.trim());
  if (models.some((name) => name === '')) {
    throw new InvalidArgumentError(
      `--fallback-model "${flag}" has an empty name: give one model or a comma-separated list, e.g. --fallback-model claude-opus-4-6,claude-haiku-4-5.`,
    );
  }
  if (models.length > MAX_FALLBACK_MODELS) {
    throw new InvalidArgumentError(
      `--fallback-model names ${models.length} models; at most ${MAX_FALLBACK_MODELS} are allowed.`,
    );
  }
  const repeated = models.find((name, index) => name === model || models.indexOf(name) !== index);
  if (repeated !== undefined) {
    throw new InvalidArgumentError(
      `--fallback-model lists ${repeated} ${repeated === model ? "which is the job's own model" : 'twice'}: each fallback must be a different model.`,
    );
  }
  return models.length === 1
    ? { fallbackModel: models[0] as string }
    : { fallbackModel: models[0] as string, fallbackModels: models };
}

function buildPermissions(flags: RunFlags, ci: boolean, headless: string | undefined): SessionPermissions | undefined {
  if (flags.permissionMode !== undefined && !isPermissionMode(flags.permissionMode)) {
    throw new InvalidArgumentError(
      `--permission-mode "${flags.permissionMode}" is not one of ${PERMISSION_MODES.join(', ')}.`,
    );
  }
  if (
    flags.onApprovalTimeout !== undefined &&
    flags.onApprovalTimeout !== 'deny' &&
    flags.onApprovalTimeout !== 'allow'
  ) {
    throw new InvalidArgumentError(`--on-approval-timeout must be deny or allow (got "${flags.onApprovalTimeout}").`);
  }
  const rules = {
    allow: [...(flags.allow ?? []), ...(flags.allowedTools ?? []).flatMap(splitToolRules)],
    ask: flags.ask ?? [],
    deny: [...(flags.deny ?? []), ...(flags.disallowedTools ?? []).flatMap(splitToolRules)],
  };
  const problems = validateRules(rules);
  if (problems.length > 0) throw new InvalidArgumentError(`Invalid permission rule(s):\n  ${problems.join('\n  ')}`);
  const additionalDirectories = (flags.addDir ?? []).map((dir) => {
    const absolute = path.resolve(dir);
    if (!fs.statSync(absolute, { throwIfNoEntry: false })?.isDirectory()) {
      throw new InvalidArgumentError(`--add-dir ${absolute} is not a directory.`);
    }
    return fs.realpathSync(absolute);
  });
  const headlessDefault = headless !== undefined && flags.permissionMode === undefined;
  const permissions: SessionPermissions = {
    ...(flags.permissionMode ? { mode: flags.permissionMode } : {}),
    ...(headlessDefault
      ? {
          mode: 'dontAsk' as const,
          modeSource: `the headless default (${headless}: nobody can answer an approval; --permission-mode chooses another mode)`,
        }
      : {}),
    ...(additionalDirectories.length ? { additionalDirectories } : {}),
    ...(ci ? { restrictWorkspace: true } : {}),
    ...(rules.allow.length ? { allow: rules.allow } : {}),
    ...(rules.ask.length ? { ask: rules.ask } : {}),
    ...(rules.deny.length ? { deny: rules.deny } : {}),
    ...(flags.approvalTimeout !== undefined ? { approvalTimeoutMs: flags.approvalTimeout * 1000 } : {}),
    ...(flags.onApprovalTimeout ? { onApprovalTimeout: flags.onApprovalTimeout } : {}),
  };
  return Object.keys(permissions).length > 0 ? permissions : undefined;
}

/**
 * What a headless run that can still park prints before it starts: with any mode but dontAsk, a
 * call the rules ask about waits for `approve` or `deny` from another shell.
 */
export function parkWarning(input: SessionInput, headless: string | undefined): string | undefined {
  const mode = input.permissions?.mode;
  if (headless === undefined || mode === undefined || mode === 'dontAsk') return undefined;
  const timeoutMs = input.permissions?.approvalTimeoutMs;
  const bound =
    timeoutMs !== undefined
      ? `after ${timeoutMs / 1000} s it is ${input.permissions?.onApprovalTimeout === 'allow' ? 'allowed' : 'denied'} (--approval-timeout)`
      : 'it waits with no limit; --approval-timeout N ends the wait';
  return (
    `durable-agent: nobody can answer an approval here (${headless}), and --permission-mode ${mode} ` +
    `parks a call the rules ask about until \`durable-agent approve <id>\` or \`deny <id>\` from another shell; ` +
    `${bound}, and --permission-mode dontAsk refuses such calls instead.`
  );
}

/** commander's collector for a repeatable option (`--allow R --allow R2`). */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
