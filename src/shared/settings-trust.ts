/**
 * Which settings a job takes from where. Claude Code reads settings from three sources (user
 * `~/.claude/settings.json`, project `.claude/settings.json`, local `.claude/settings.local.json`)
 * and `--setting-sources` picks among them. The two workspace files travel with the repository: a
 * pull-request branch writes them. So a workspace file never grants `bypassPermissions`, an
 * explicit `--permission-mode` always wins, a workspace file never adds directories outside the
 * workspace, and in a restricted run (CI) a workspace file may only add deny and ask rules. Pure code: the workflow resolves this on the layers an activity read.
 */
import { mergeRules } from './permissions';
import type { ModelLimitsEntry } from './context/model-limits';
import type { ModelPricesEntry } from './pricing';
import type { HooksConfig } from './hooks';
import type { SandboxSettings, SandboxSettingsLayer } from './sandbox';
import type { PermissionContext, PermissionMode, PermissionRules, RuleList } from './permissions';

export const SETTING_SOURCES = ['user', 'project', 'local'] as const;
export type SettingSource = (typeof SETTING_SOURCES)[number];

/** One settings file as read by the worker, before any trust decision. */
export interface SettingsLayer {
  source: SettingSource;
  /** Absolute path of the file. */
  file: string;
  rules: Partial<PermissionRules>;
  defaultMode?: PermissionMode;
  /** As written in the file; resolved against the workspace (or `~`) here. */
  additionalDirectories?: string[];
  /** The file's `sandbox` block, validated (Claude Code's field names). */
  sandbox?: SandboxSettings;
  /** The file's `hooks` block, validated (`parseHooksSettings`); `resolveHooks` decides which run. */
  hooks?: HooksConfig;
  /** The file's `modelLimits`: context window and output limit per model prefix. */
  modelLimits?: ModelLimitsEntry[];
  /** The file's `modelPrices`: USD per million tokens per model prefix. */
  modelPrices?: ModelPricesEntry[];
}

/** What the job's own start options say (CLI flags), the most trusted layer. */
export interface OwnPermissions {
  mode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  additionalDirectories?: string[];
  /** A run nobody vets the workspace for (CI): workspace files may only add deny and ask rules. */
  restrictWorkspace?: boolean;
  /** Where `mode` came from when not `--permission-mode` (e.g. the headless default). */
  modeSource?: string;
}

/** A rule in force and the place it came from, for `status` and the Terminal. */
export interface RuleOrigin {
  list: RuleList;
  rule: string;
  /** `--allow`, `approve --always`, or a settings file's path. */
  source: string;
}

/** The permission setup of a job as a person needs to audit it. */
export interface PermissionSummary {
  mode: PermissionMode;
  modeSource: string;
  rules: RuleOrigin[];
  additionalDirectories: Array<{ path: string; source: string }>;
  /** Settings that were present but not taken, each saying why. */
  ignored: string[];
}

const WORKSPACE_SOURCES: ReadonlySet<SettingSource> = new Set(['project', 'local']);

/**
 * Merge the layers (user, project, local; later wins for `defaultMode`, rule lists add up) with
 * the job's own flags, applying the trust rules of the module comment.
 */
export function resolvePermissions(args: {
  layers: SettingsLayer[];
  own: OwnPermissions | undefined;
  workspace: string;
  homeDir: string | undefined;
}): { context: PermissionContext; summary: PermissionSummary } {
  const { layers, own, workspace, homeDir } = args;
  const restricted = own?.restrictWorkspace === true;
  const ignored: string[] = [];
  const origins: RuleOrigin[] = [];
  const directories: Array<{ path: string; source: string }> = [];
  let mode: PermissionMode = 'default';
  let modeSource = 'built-in default';

  for (const layer of layers) {
    const fromWorkspace = WORKSPACE_SOURCES.has(layer.source);
    const at = (field: string) => `${layer.file} ${field}`;
    for (const list of ['allow', 'ask', 'deny'] as const) {
      const rules = layer.rules[list] ?? [];
      if (rules.length === 0) continue;
      if (fromWorkspace && restricted && list === 'allow') {
        ignored.push(
          `${at('permissions.allow')} ${JSON.stringify(rules)}: this run is restricted (CI), so workspace settings may only add deny and ask rules`,
        );
        continue;
      }
      for (const rule of rules) origins.push({ list, rule, source: layer.file });
    }
    if (layer.defaultMode !== undefined) {
      if (fromWorkspace && restricted) {
        ignored.push(`${at('permissions.defaultMode')} "${layer.defaultMode}": this run is restricted (CI)`);
      } else if (fromWorkspace && layer.defaultMode === 'bypassPermissions') {
        ignored.push(
          `${at('permissions.defaultMode')} "bypassPermissions": a workspace file never grants it; pass --permission-mode bypassPermissions to choose it yourself`,
        );
      } else {
        mode = layer.defaultMode;
        modeSource = at('permissions.defaultMode');
      }
    }
    for (const dir of layer.additionalDirectories ?? []) {
      // Outside the workspace is exactly what a repository's own file must not open up.
      if (fromWorkspace) {
        ignored.push(
          `${at('permissions.additionalDirectories')} "${dir}": a workspace file cannot widen what tools may reach; pass --add-dir to choose it yourself`,
        );
        continue;
      }
      const resolved = resolveDirectory(dir, workspace, homeDir);
      if (resolved === undefined) ignored.push(`${at('permissions.additionalDirectories')} "${dir}": ~ is unknown`);
      else directories.push({ path: resolved, source: layer.file });
    }
  }

  if (own?.mode !== undefined) {
    if (modeSource !== 'built-in default' && own.mode !== mode) {
      ignored.push(`${modeSource} "${mode}": ${own.modeSource ?? `--permission-mode ${own.mode} was given`}`);
    }
    mode = own.mode;
    modeSource = own.modeSource ?? '--permission-mode';
  }
  for (const list of ['allow', 'ask', 'deny'] as const) {
    for (const rule of own?.[list] ?? []) origins.push({ list, rule, source: `--${list}` });
  }
  for (const dir of own?.additionalDirectories ?? []) {
    const resolved = resolveDirectory(dir, workspace, homeDir);
    if (resolved !== undefined) directories.push({ path: resolved, source: '--add-dir' });
  }

  const pick = (list: RuleList) => origins.filter((origin) => origin.list === list).map((origin) => origin.rule);
  const rules = mergeRules({ allow: pick('allow'), ask: pick('ask'), deny: pick('deny') });
  const additionalDirectories = [...new Set(directories.map((entry) => entry.path))];
  const context: PermissionContext = {
    mode,
    rules,
    workspace,
    ...(homeDir !== undefined ? { homeDir } : {}),
    ...(additionalDirectories.length > 0 ? { additionalDirectories } : {}),
  };
  return { context, summary: { mode, modeSource, rules: origins, additionalDirectories: directories, ignored } };
}

/** An additional directory as an absolute POSIX path: `~/x` under home, relative under the workspace. */
function resolveDirectory(dir: string, workspace: string, homeDir: string | undefined): string | undefined {
  let absolute: string;
  if (dir === '~' || dir.startsWith('~/')) {
    if (homeDir === undefined) return undefined;
    absolute = `${homeDir}/${dir.slice(1)}`;
  } else if (dir.startsWith('/')) absolute = dir;
  else absolute = `${workspace}/${dir}`;
  const out: string[] = [];
  for (const segment of absolute.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}

/** The layers that have a `sandbox` block, as `resolveJobSandbox` takes them. */
export function sandboxLayersOf(layers: SettingsLayer[]): SandboxSettingsLayer[] {
  return layers.flatMap((layer) =>
    layer.sandbox ? [{ source: layer.source, file: layer.file, sandbox: layer.sandbox }] : [],
  );
}
