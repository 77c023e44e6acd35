/**
 * Which configured hooks a job runs. Claude Code merges the hooks of every settings file (user,
 * project, local) and runs them all. A hook is a command run on the worker, so the trust rules of
 * `settings-trust.ts` apply: in a restricted run (CI), where nobody vets the workspace, a
 * workspace file's hooks are commands nobody approved, and are ignored. Pure code: the workflow
 * resolves this on the layers an activity read.
 */
import type { SettingsLayer } from '../settings-trust';
import { HOOK_EVENTS, RUN_HOOK_EVENTS, type HookCommand, type HookMatcherGroup, type HooksConfig } from './types';

const WORKSPACE_SOURCES: ReadonlySet<string> = new Set(['project', 'local']);

/** The source of hooks given with `--stop-hook`. */
export const STOP_HOOK_FLAG = '--stop-hook';

const count = (n: number) => `${n} hook${n === 1 ? '' : 's'}`;

/**
 * Merge the layers' hooks in settings order, then the `--stop-hook` commands (always run: the
 * person starting the job chose them). Returns the configuration of the events durable-agent runs
 * (`RUN_HOOK_EVENTS`), the hooks ignored for trust (`ignored`, each naming its file and why), and
 * what is configured but does not run here (`notRun`).
 */
export function resolveHooks(args: {
  layers: SettingsLayer[];
  /** A run nobody vets the workspace for (CI): workspace files' hooks are ignored. */
  restrictWorkspace?: boolean;
  /** Commands of `--stop-hook`, in the order given. */
  stopHooks?: string[];
  /** The Agent SDK app's hook callbacks (`SessionInput.appHooks`), after the settings' hooks. */
  appHooks?: HooksConfig;
}): { config: HooksConfig; ignored: string[]; notRun: string[] } {
  const config: HooksConfig = {};
  const ignored: string[] = [];
  const notRun: string[] = [];
  for (const layer of args.layers) {
    if (layer.hooks === undefined) continue;
    const fromWorkspace = WORKSPACE_SOURCES.has(layer.source);
    for (const [event, groups] of Object.entries(layer.hooks)) {
      if (groups === undefined || groups.length === 0) continue;
      const configured = groups.reduce((n, group) => n + group.hooks.length + (group.notes?.length ?? 0), 0);
      if (fromWorkspace && args.restrictWorkspace === true) {
        ignored.push(
          `${layer.file} hooks.${event} (${count(configured)}): this run is restricted (CI), so a workspace file may not run commands nobody approved; put hooks you trust in ~/.claude/settings.json or pass ${STOP_HOOK_FLAG}`,
        );
        continue;
      }
      if (!(RUN_HOOK_EVENTS as readonly string[]).includes(event)) {
        const what = (HOOK_EVENTS as readonly string[]).includes(event)
          ? 'not run by durable-agent'
          : 'not a Claude Code hook event, not run';
        notRun.push(`${event} (${count(configured)} in ${layer.file}): ${what}`);
        continue;
      }
      for (const group of groups) {
        for (const why of group.notes ?? []) notRun.push(`${event} hook in ${layer.file}: ${why}`);
        if (group.hooks.length === 0) continue;
        const kept: HookMatcherGroup = {
          ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
          hooks: group.hooks,
        };
        (config[event] ??= []).push(kept);
      }
    }
  }
  for (const [event, groups] of Object.entries(args.appHooks ?? {})) {
    if (!(RUN_HOOK_EVENTS as readonly string[]).includes(event)) {
      notRun.push(`${event} (the Agent SDK app's hook callbacks): not run by durable-agent`);
      continue;
    }
    for (const group of groups ?? []) if (group.hooks.length > 0) (config[event] ??= []).push(group);
  }
  const stopHooks: HookCommand[] = (args.stopHooks ?? []).map((command) => ({ command, source: STOP_HOOK_FLAG }));
  if (stopHooks.length > 0) (config.Stop ??= []).push({ hooks: stopHooks });
  return { config, ignored, notRun };
}
