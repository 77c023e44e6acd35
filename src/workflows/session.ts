import { ActivityFailure, patched } from '@temporalio/workflow';
import { mergeRules } from '../shared/permissions';
import { resolvePermissions, sandboxLayersOf, SETTING_SOURCES } from '../shared/settings-trust';
import { resolveJobSandbox } from '../shared/sandbox';
import type { JobSandbox } from '../shared/sandbox';
import type { PermissionContext } from '../shared/permissions';
import { DEFAULT_MAX_TOKENS } from '../shared/recovery';
import type { HooksReport, SessionInput } from '../shared/session';
import { TOOL_DEFINITIONS } from '../shared/tools';
import type { SessionActivities } from './activity-proxies';
import type { SessionControl } from './session-control';
import { resolveHooks, STOP_HOOK_FLAG } from '../shared/hooks';
import type { HooksConfig } from '../shared/hooks';
import type { HookRunner } from './hooks-phase';
import type { ModelLimitsEntry } from '../shared/context/model-limits';
import type { ModelPricesEntry } from '../shared/pricing';

/** `--stop-hook` runs a test suite: minutes, not the 60 s of a settings hook without a timeout. */
/**
 * Jobs started before generation 2 of the permission engine's Bash reading keep generation 1 (see
 * `PERMISSION_ENGINE`): their histories replay with the decisions they made. A later generation
 * needs a new patch id here.
 */
export const PERMISSION_ENGINE_PATCH = 'permission-engine-2';
/** Generation 3 (see `PERMISSION_ENGINE`). */
export const PERMISSION_ENGINE_3_PATCH = 'permission-engine-3';

/** Jobs started before it took model prices from workspace settings outside CI. */
const USER_PRICES_PATCH = 'prices-from-user-settings';

export const DEFAULT_STOP_HOOK_TIMEOUT_SEC = 600;

function withStopHookTimeout<T extends { config: HooksConfig }>(resolved: T, timeoutSec: number): T {
  const config: HooksConfig = {};
  for (const [event, groups] of Object.entries(resolved.config)) {
    config[event] = groups?.map((group) => ({
      ...group,
      hooks: group.hooks.map((hook) => (hook.source === STOP_HOOK_FLAG ? { ...hook, timeoutSec } : hook)),
    }));
  }
  return { ...resolved, config };
}

function hooksReportOf(resolved: {
  config: HooksConfig;
  ignored: string[];
  notRun: string[];
}): HooksReport | undefined {
  const running: Record<string, number> = {};
  for (const [event, groups] of Object.entries(resolved.config)) {
    const count = (groups ?? []).reduce((sum, group) => sum + group.hooks.length, 0);
    if (count > 0) running[event] = count;
  }
  if (Object.keys(running).length === 0 && resolved.notRun.length === 0 && resolved.ignored.length === 0)
    return undefined;
  return { running, notRun: resolved.notRun, ignored: resolved.ignored };
}

/** True when any event the job runs has at least one hook. */
export function hasHooks(config: HooksConfig): boolean {
  return Object.values(config).some((groups) => (groups ?? []).some((group) => group.hooks.length > 0));
}

/** Everything a turn needs besides the State: fixed for the life of the job (but for added rules). */
export interface Session {
  input: SessionInput;
  sessionKey: string;
  systemPromptRef: string;
  tools: string[];
  maxTokens: number;
  activities: SessionActivities;
  control: SessionControl;
  /** The sandbox policy of every tool call; undefined for jobs started before it existed (the tools then require the default). */
  sandbox: JobSandbox | undefined;
  /** Undefined only for jobs started before permissions existed (their histories replay without). */
  permissions: PermissionContext | undefined;
  /** Phase 1's context pipeline is on (false for runs recorded before it existed). */
  contextPipeline: boolean;
  /** The hooks the job runs (settings files and `--stop-hook`); undefined when it has none. */
  hooksConfig: HooksConfig | undefined;
  hooks: HookRunner | undefined;
  /** Context window and output limit per model prefix: the job's own, then settings (highest precedence first). */
  modelLimits: ModelLimitsEntry[];
  /** Prices per model prefix: the job's own, then settings (highest precedence first); the built-in table after. */
  modelPrices: ModelPricesEntry[];
  /** Cost is counted and `--max-budget-usd` kept (false for runs recorded before either existed). */
  costBudget: boolean;
}

export type Prepared = { kind: 'ready'; session: Session } | { kind: 'failed'; detail: string };

/**
 * Start-up, before the first turn: the system prompt (workspace, git, CLAUDE.md) and the
 * permission settings of the workspace merged with the job's own. Done once; continue-as-new
 * carries both over.
 */
export async function prepareSession(
  input: SessionInput,
  sessionKey: string,
  activities: SessionActivities,
  control: SessionControl,
): Promise<Prepared> {
  const base = {
    input,
    sessionKey,
    tools: input.tools ?? TOOL_DEFINITIONS.map((tool) => tool.name),
    maxTokens: input.maxTokens ?? DEFAULT_MAX_TOKENS,
    activities,
    control,
    contextPipeline: false,
    hooksConfig: undefined,
    hooks: undefined,
    modelLimits: input.modelLimits ?? [],
    modelPrices: input.modelPrices ?? [],
    costBudget: false,
  };
  if (input.resume) {
    return {
      kind: 'ready',
      session: {
        ...base,
        systemPromptRef: input.resume.systemPromptRef,
        // A run carried over from before engine generations decided with the first one.
        permissions: input.resume.permissions && { engine: 1, ...input.resume.permissions },
        sandbox: input.resume.sandbox,
        hooksConfig: input.resume.hooks,
        modelLimits: input.resume.modelLimits ?? base.modelLimits,
        modelPrices: input.resume.modelPrices ?? base.modelPrices,
      },
    };
  }
  // A batch task whose workspace could not be made (a clone that failed) ends here, saying why.
  if (input.batch?.setupError !== undefined) return { kind: 'failed', detail: input.batch.setupError };
  try {
    const { ref } = await activities.buildSystemPrompt({
      workspace: input.workspace,
      model: input.model,
      appendSystemPrompt: input.appendSystemPrompt,
      ...(input.settingSources ? { settingSources: input.settingSources } : {}),
    });
    let permissions: PermissionContext | undefined;
    let sandbox: JobSandbox | undefined;
    let hooksConfig: HooksConfig | undefined;
    let modelLimits = base.modelLimits;
    let modelPrices = base.modelPrices;
    if (patched('setting-sources')) {
      // User, project and local settings as Claude Code reads them; what a workspace file may
      // grant is decided here, in replayable code, not in the activity that read the files.
      const { layers, homeDir } = await activities.loadSettings({
        workspace: input.workspace,
        sources: input.settingSources ?? [...SETTING_SOURCES],
      });
      const resolved = resolvePermissions({ layers, own: input.permissions, workspace: input.workspace, homeDir });
      // The engine generation is the job's for good: a replay decides each call as it was decided.
      const engine = patched(PERMISSION_ENGINE_3_PATCH) ? 3 : patched(PERMISSION_ENGINE_PATCH) ? 2 : 1;
      permissions = { ...resolved.context, engine };
      const sandboxed = resolveJobSandbox({
        layers: sandboxLayersOf(layers),
        noSandbox: input.noSandbox === true,
      });
      sandbox = sandboxed.sandbox;
      control.sandbox = sandbox;
      // Everything not taken is on the job's record, sandbox settings as much as rules.
      control.permissionSummary = {
        ...resolved.summary,
        ignored: [...resolved.summary.ignored, ...sandboxed.ignored],
      };
      for (const why of control.permissionSummary.ignored) {
        control.record({ turn: 1, kind: 'notice', text: `setting ignored: ${why}` });
      }
      const hooks = withStopHookTimeout(
        resolveHooks({
          layers,
          restrictWorkspace: input.permissions?.restrictWorkspace === true,
          stopHooks: input.stopHooks ?? [],
          ...(input.appHooks ? { appHooks: input.appHooks } : {}),
        }),
        input.stopHookTimeoutSec ?? DEFAULT_STOP_HOOK_TIMEOUT_SEC,
      );
      control.hooksReport = hooksReportOf(hooks);
      for (const why of hooks.ignored) control.record({ turn: 1, kind: 'notice', text: `hook ignored: ${why}` });
      for (const what of hooks.notRun) control.record({ turn: 1, kind: 'notice', text: `hook not run: ${what}` });
      // A workspace nobody vets (CI) must not make the job compact every turn, at the user's expense.
      const limitLayers = layers.filter(
        (layer) => layer.source === 'user' || input.permissions?.restrictWorkspace !== true,
      );
      // Nor make a budget meaningless by pricing the job's model at nothing: since this patch, in no
      // mode does a workspace file change prices (the user's settings and the job's own still do).
      const workspacePrices = layers.some((layer) => layer.source !== 'user' && layer.modelPrices);
      const priceLayers =
        workspacePrices && patched(USER_PRICES_PATCH) ? layers.filter((layer) => layer.source === 'user') : limitLayers;
      for (const layer of layers) {
        for (const key of ['modelLimits', 'modelPrices'] as const) {
          if (layer[key] && !(key === 'modelPrices' ? priceLayers : limitLayers).includes(layer)) {
            const why = limitLayers.includes(layer)
              ? 'a workspace file never changes prices or budgets'
              : 'workspace settings in CI';
            control.record({ turn: 1, kind: 'notice', text: `setting ignored: ${key} in ${layer.file} (${why})` });
          }
        }
      }
      modelLimits = [
        ...(input.modelLimits ?? []),
        ...[...limitLayers].reverse().flatMap((layer) => layer.modelLimits ?? []),
      ];
      modelPrices = [
        ...(input.modelPrices ?? []),
        ...[...priceLayers].reverse().flatMap((layer) => layer.modelPrices ?? []),
      ];
      // Only jobs that have hooks take the new path, so every older history replays as it was.
      if (hasHooks(hooks.config) && patched('hooks')) hooksConfig = hooks.config;
    } else if (patched('permission-settings')) {
      const settings = await activities.loadPermissionSettings({ workspace: input.workspace });
      const own = input.permissions;
      permissions = {
        mode: own?.mode ?? settings.defaultMode ?? 'default',
        rules: mergeRules(settings.rules, { allow: own?.allow, ask: own?.ask, deny: own?.deny }),
        workspace: input.workspace,
        engine: 1,
      };
    }
    return {
      kind: 'ready',
      session: { ...base, systemPromptRef: ref, permissions, sandbox, hooksConfig, modelLimits, modelPrices },
    };
  } catch (error) {
    // A job that cannot start (workspace missing on the worker, broken settings file) still ends
    // with a Terminal that says why.
    if (!(error instanceof ActivityFailure)) throw error;
    return { kind: 'failed', detail: error.cause?.message ?? error.message };
  }
}
