import { readFile } from 'node:fs/promises';
import { openWorkspaceFile } from './tools/workspace-open';
import path from 'node:path';
import { z } from 'zod';
import {
  mergeRules,
  PERMISSION_MODES,
  validateRules,
  type PermissionMode,
  type PermissionRules,
} from '../shared/permissions';
import { parseHooksSettings, type HooksConfig } from '../shared/hooks';
import type { ModelLimitsEntry } from '../shared/context/model-limits';
import { DEFAULT_CACHE_READ_FACTOR, DEFAULT_CACHE_WRITE_FACTOR } from '../shared/pricing';
import type { ModelPricesEntry } from '../shared/pricing';
import { parseSandboxSettings } from '../shared/sandbox';
import type { SandboxSettings } from '../shared/sandbox';
import { SETTING_SOURCES } from '../shared/settings-trust';
import type { SettingSource, SettingsLayer } from '../shared/settings-trust';

/**
 * Claude Code's project settings files, lowest precedence first. The local file is the user's
 * own (Claude Code git-ignores it); it wins for `defaultMode`, and rule lists are concatenated
 * (Claude Code merges permission rules from every settings file rather than overriding them).
 */
export const SETTINGS_FILES = ['.claude/settings.json', '.claude/settings.local.json'] as const;

export interface PermissionSettings {
  rules: PermissionRules;
  defaultMode?: PermissionMode;
  /** The settings files that exist and were read, in precedence order. */
  sources: string[];
}

const ruleList = z.array(z.string());

// The files hold every other Claude Code setting too (env, hooks, model, ...): unknown keys pass.
const permissionsSchema = z.looseObject({
  allow: ruleList.optional(),
  ask: ruleList.optional(),
  deny: ruleList.optional(),
  defaultMode: z.string().optional(),
  additionalDirectories: z.array(z.string()).optional(),
});
const settingsSchema = z.looseObject({
  permissions: permissionsSchema.optional(),
  modelLimits: z.unknown().optional(),
  modelPrices: z.unknown().optional(),
});

/**
 * Read `<workspace>/.claude/settings.json` and `.claude/settings.local.json`. A missing file is
 * fine; a file that is not valid JSON, has a wrong type where permissions are expected, names an
 * unknown mode or holds an invalid rule makes this throw an Error naming the file, the JSON path
 * and the fix: a permission setting the user wrote must never be silently ignored.
 */
export async function loadPermissionSettings(workspace: string): Promise<PermissionSettings> {
  const layers = await loadSettingsLayers(workspace, { sources: ['project', 'local'] });
  let defaultMode: PermissionMode | undefined;
  for (const layer of layers) if (layer.defaultMode !== undefined) defaultMode = layer.defaultMode;
  return {
    rules: mergeRules(...layers.map((layer) => layer.rules)),
    ...(defaultMode !== undefined ? { defaultMode } : {}),
    sources: layers.map((layer) => layer.file),
  };
}

/** Where each setting source lives; `user` needs the home directory. */
export function settingsFile(
  source: SettingSource,
  workspace: string,
  homeDir: string | undefined,
): string | undefined {
  switch (source) {
    case 'user':
      return homeDir === undefined ? undefined : path.join(homeDir, '.claude', 'settings.json');
    case 'project':
      return path.join(workspace, SETTINGS_FILES[0]);
    case 'local':
      return path.join(workspace, SETTINGS_FILES[1]);
  }
}

/**
 * Read the settings files of the given sources, lowest precedence first (user, project, local),
 * each validated as `loadPermissionSettings` does. Trust decisions are not made here: the workflow
 * makes them on what this returns (`resolvePermissions`), so they replay deterministically.
 */
export async function loadSettingsLayers(
  workspace: string,
  options: { sources: readonly SettingSource[]; homeDir?: string },
): Promise<SettingsLayer[]> {
  const layers: SettingsLayer[] = [];
  for (const source of SETTING_SOURCES) {
    if (!options.sources.includes(source)) continue;
    const file = settingsFile(source, workspace, options.homeDir);
    if (file === undefined) continue;
    const text =
      source === 'user'
        ? await readSettingsFile(file)
        : await readWorkspaceSettingsFile(workspace, SETTINGS_FILES[source === 'project' ? 0 : 1], file);
    if (text === undefined) continue;
    const settings = parseSettings(file, text);
    layers.push({
      source,
      file,
      rules: settings.rules ?? {},
      ...(settings.defaultMode !== undefined ? { defaultMode: settings.defaultMode } : {}),
      ...(settings.additionalDirectories?.length ? { additionalDirectories: settings.additionalDirectories } : {}),
      ...(settings.sandbox !== undefined ? { sandbox: settings.sandbox } : {}),
      ...(settings.hooks !== undefined ? { hooks: settings.hooks } : {}),
      ...(settings.modelLimits !== undefined ? { modelLimits: settings.modelLimits } : {}),
      ...(settings.modelPrices !== undefined ? { modelPrices: settings.modelPrices } : {}),
    });
  }
  return layers;
}

async function readSettingsFile(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new Error(
      `${file}: cannot be read (${code ?? (error as Error).message}). Fix the file's permissions or remove it.`,
      {
        cause: error,
      },
    );
  }
}

/** A settings file larger than this is refused: settings are a few kilobytes. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

/**
 * A repository's settings file, opened from a handle on the workspace (`openWorkspaceFile`): one
 * that is a symlink out of the workspace is refused unread, so no file outside it (a key, the
 * worker's environment) is parsed, or quoted in the error a parse failure gives.
 */
async function readWorkspaceSettingsFile(
  workspace: string,
  relative: string,
  file: string,
): Promise<string | undefined> {
  const opened = await openWorkspaceFile(workspace, relative);
  if (!opened.ok) {
    if (opened.code === 'ENOENT' || opened.code === 'ENOTDIR') return undefined;
    if (opened.code === 'outside') {
      throw new Error(
        `${file}: ${opened.error} Settings are read only from inside the workspace: replace the link with the file itself, or remove it.`,
      );
    }
    throw new Error(`${file}: cannot be read (${opened.code}). Fix the file's permissions or remove it.`);
  }
  try {
    const info = await opened.handle.stat();
    if (info.isDirectory()) {
      throw new Error(`${file}: cannot be read (EISDIR). Fix the file's permissions or remove it.`);
    }
    if (!info.isFile()) throw new Error(`${file}: is not a regular file. Settings must be a JSON file; remove it.`);
    if (info.size > MAX_SETTINGS_BYTES) {
      throw new Error(`${file}: is ${info.size} bytes; a settings file may hold at most ${MAX_SETTINGS_BYTES}.`);
    }
    return await opened.handle.readFile('utf8');
  } finally {
    await opened.handle.close();
  }
}

/** Validate one settings file's text; exported for tests and for a future `settings check` command. */
export function parseSettings(
  file: string,
  text: string,
): {
  rules?: Partial<PermissionRules>;
  defaultMode?: PermissionMode;
  additionalDirectories?: string[];
  sandbox?: SandboxSettings;
  hooks?: HooksConfig;
  modelLimits?: ModelLimitsEntry[];
  modelPrices?: ModelPricesEntry[];
} {
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new Error(`${file}: not valid JSON: ${describeJsonError(text, error as Error)}`, { cause: error });
  }
  const parsed = settingsSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => describeIssue(issue, data));
    throw new Error(formatProblems(file, problems));
  }
  const permissions = parsed.data.permissions;
  const blocks: {
    sandbox?: SandboxSettings;
    hooks?: HooksConfig;
    modelLimits?: ModelLimitsEntry[];
    modelPrices?: ModelPricesEntry[];
  } = {};
  if (parsed.data.modelLimits !== undefined) blocks.modelLimits = parseModelLimits(parsed.data.modelLimits, file);
  if (parsed.data.modelPrices !== undefined) blocks.modelPrices = parseModelPrices(parsed.data.modelPrices, file);
  if (parsed.data.sandbox !== undefined) {
    const checked = parseSandboxSettings(parsed.data.sandbox, file);
    if (!checked.ok) throw new Error(checked.message);
    blocks.sandbox = checked.settings;
  }
  // A malformed hooks block throws here, naming the file and the path; handlers that load but do
  // not run travel in the config (`notRun`) and are reported when the job resolves its hooks.
  if (parsed.data.hooks !== undefined) blocks.hooks = parseHooksSettings(parsed.data.hooks, file).hooks;
  if (permissions === undefined) return blocks;

  const problems: string[] = [];
  let defaultMode: PermissionMode | undefined;
  if (permissions.defaultMode !== undefined) {
    const mode = permissions.defaultMode === 'manual' ? 'default' : permissions.defaultMode; // Claude Code's alias
    if ((PERMISSION_MODES as readonly string[]).includes(mode)) defaultMode = mode as PermissionMode;
    else {
      problems.push(
        `permissions.defaultMode ${JSON.stringify(permissions.defaultMode)} is ${mode === 'auto' ? "Claude Code's classifier mode, which durable-agent does not support" : 'not a permission mode'}; use one of ${PERMISSION_MODES.map((m) => `"${m}"`).join(', ')}`,
      );
    }
  }
  const rules: Partial<PermissionRules> = {
    ...(permissions.allow ? { allow: permissions.allow } : {}),
    ...(permissions.ask ? { ask: permissions.ask } : {}),
    ...(permissions.deny ? { deny: permissions.deny } : {}),
  };
  problems.push(...validateRules({ allow: rules.allow ?? [], ask: rules.ask ?? [], deny: rules.deny ?? [] }));
  if (problems.length > 0) throw new Error(formatProblems(file, problems));
  return {
    rules,
    ...(defaultMode !== undefined ? { defaultMode } : {}),
    ...(permissions.additionalDirectories ? { additionalDirectories: permissions.additionalDirectories } : {}),
    ...blocks,
  };
}

const modelLimitsSchema = z.record(
  z.string().min(1),
  z.strictObject({
    contextWindow: z.number().int().min(10_000).max(100_000_000),
    maxOutputTokens: z.number().int().min(1_000).max(10_000_000),
  }),
);

/**
 * `modelLimits`: context window and output limit per model name prefix, e.g.
 * `{"claude-opus-4-7": {"contextWindow": 1000000, "maxOutputTokens": 128000}}`. A wrong entry
 * would make the job compact too early or fail late, so a malformed one stops the job at start.
 */
function parseModelLimits(raw: unknown, file: string): ModelLimitsEntry[] {
  const parsed = modelLimitsSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `modelLimits${issue.path.map((part) => `.${String(part)}`).join('')}: ${issue.message}`,
    );
    throw new Error(
      `${formatProblems(file, problems)}\nWrite it as {"modelLimits": {"<model name or prefix>": {"contextWindow": 200000, "maxOutputTokens": 64000}}}.`,
    );
  }
  return Object.entries(parsed.data).map(([prefix, limits]) => ({ prefix, ...limits }));
}

/** USD per million tokens: generous enough for any model, small enough to catch a price given per token. */
const usdPerMillion = z.number().min(0).max(10_000);
const modelPricesSchema = z.record(
  z.string().min(1),
  z.strictObject({
    input: usdPerMillion,
    output: usdPerMillion,
    cacheWrite: usdPerMillion.optional(),
    cacheRead: usdPerMillion.optional(),
  }),
);

/**
 * `modelPrices`: USD per million tokens per model name prefix, e.g.
 * `{"my-model": {"input": 3, "output": 15, "cacheWrite": 3.75, "cacheRead": 0.3}}`. Without
 * `cacheWrite` and `cacheRead`, a cache write costs 1.25 times the input price and a read a tenth
 * of it, as on Anthropic's price list. A malformed entry stops the job at start: a wrong price
 * would make a budget stop too early or too late.
 */
function parseModelPrices(raw: unknown, file: string): ModelPricesEntry[] {
  const parsed = modelPricesSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `modelPrices${issue.path.map((part) => `.${String(part)}`).join('')}: ${issue.message}`,
    );
    throw new Error(
      `${formatProblems(file, problems)}\nWrite it as {"modelPrices": {"<model name or prefix>": {"input": 3, "output": 15}}} (USD per million tokens; "cacheWrite" and "cacheRead" are optional).`,
    );
  }
  return Object.entries(parsed.data).map(([prefix, prices]) => ({
    prefix,
    input: prices.input,
    output: prices.output,
    cacheWrite: prices.cacheWrite ?? prices.input * DEFAULT_CACHE_WRITE_FACTOR,
    cacheRead: prices.cacheRead ?? prices.input * DEFAULT_CACHE_READ_FACTOR,
  }));
}

function formatProblems(file: string, problems: string[]): string {
  if (problems.length === 1) return `${file}: ${problems[0]}`;
  return `${file} has ${problems.length} problems:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`;
}

function describeIssue(issue: z.core.$ZodIssue, data: unknown): string {
  const where = jsonPath(issue.path);
  const actual = valueAt(data, issue.path);
  if (issue.code === 'invalid_type') {
    const found = describeValue(actual);
    const key = issue.path[issue.path.length - 1];
    const parentKey = issue.path[issue.path.length - 2];
    if (issue.path.length === 0)
      return `the file must hold a JSON object such as {"permissions": {"allow": []}}, not ${found}`;
    if (key === 'permissions')
      return `${where} must be an object such as {"allow": ["Bash(npm test:*)"]}, not ${found}`;
    if (key === 'allow' || key === 'ask' || key === 'deny') {
      return `${where} must be an array of rule strings such as ["Bash(npm test:*)"], not ${found}`;
    }
    if (typeof key === 'number' && (parentKey === 'allow' || parentKey === 'ask' || parentKey === 'deny')) {
      return `${where} must be a string such as "Bash(npm test:*)", not ${found}`;
    }
    if (key === 'defaultMode')
      return `${where} must be a string, one of ${PERMISSION_MODES.map((m) => `"${m}"`).join(', ')}; found ${found}`;
    if (key === 'additionalDirectories' || parentKey === 'additionalDirectories') {
      return `${where} must be ${key === 'additionalDirectories' ? 'an array of directory paths' : 'a directory path string'}, not ${found}`;
    }
    return `${where} must be ${issue.expected}, not ${found}`;
  }
  return `${where || 'the file'}: ${issue.message}`;
}

function jsonPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

function valueAt(data: unknown, segments: readonly PropertyKey[]): unknown {
  let value = data;
  for (const segment of segments) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value === 'number' ? 'the number' : typeof value === 'boolean' ? 'the boolean' : typeof value} ${String(value)}`;
}

function describeJsonError(text: string, error: Error): string {
  if (text.trim() === '') return 'the file is empty; write {} for no settings';
  const stated = /position (\d+)/.exec(error.message);
  const offset = stated ? Number(stated[1]) : findJsonErrorOffset(text);
  let where = '';
  if (offset !== undefined) {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - before.lastIndexOf('\n');
    where = ` at line ${line}, column ${column}`;
  }
  const message = error.message.replace(/\s*\(line \d+ column \d+\)/, '').replace(/, "[\s\S]*" is not valid JSON$/, '');
  return `${message}${where}. Fix the syntax (JSON allows no comments and no trailing commas).`;
}

/** Where a JSON text first goes wrong (Node 20 does not always say), or undefined if it does not. */
export function findJsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const blank = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i] as string)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    if (!text.startsWith(word, i)) fail();
    i += word.length;
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if ((text.charCodeAt(i) as number) < 0x20) fail();
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail();
    i++;
  };
  const value = (): void => {
    blank();
    const ch = text[i];
    if (ch === '{') {
      i++;
      blank();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        blank();
        if (text[i] !== '"') fail();
        string();
        blank();
        if (text[i] !== ':') fail();
        i++;
        value();
        blank();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail();
      }
    } else if (ch === '[') {
      i++;
      blank();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        blank();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail();
      }
    } else if (ch === '"') string();
    else if (ch === 't') literal('true');
    else if (ch === 'f') literal('false');
    else if (ch === 'n') literal('null');
    else {
      const match = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i));
      if (!match) fail();
      i += (match as RegExpExecArray)[0].length;
    }
  };
  try {
    value();
    blank();
    if (i < text.length) fail();
    return undefined;
  } catch (offset) {
    if (typeof offset === 'number') return offset;
    throw offset;
  }
}
