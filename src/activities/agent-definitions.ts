import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { AgentDefinition, LoadAgentDefinitionInput, LoadAgentDefinitionResult } from '../shared/activity-types';
import type { SettingSource } from '../shared/settings-trust';
import { handlePath, openWorkspaceFile, openWorkspaceFolder } from './tools/workspace-open';

/** A definition longer than this is cut: it is a system prompt, not a corpus. */
const DEFINITION_LIMIT = 40_000;
/** Definition files read from one folder at most. */
const MAX_DEFINITIONS = 200;

/**
 * Subagent definitions in Claude Code's format: Markdown files in `.claude/agents/` of the
 * workspace (project) and of the worker's home (user), each with front matter (`name`,
 * `description`, `tools`, `model`) and the agent's system prompt as its body. A project definition
 * wins over a user one of the same name. The workspace's are opened through handles on the
 * workspace, so a symlink out of it is not followed.
 */
export async function loadAgentDefinitions(
  workspace: string,
  homeDir: string,
  sources: readonly SettingSource[] | undefined,
): Promise<AgentDefinition[]> {
  const byName = new Map<string, AgentDefinition>();
  if (!sources || sources.includes('user')) {
    for (const definition of await userDefinitions(path.join(homeDir, '.claude', 'agents'))) {
      byName.set(definition.name, definition);
    }
  }
  if (!sources || sources.includes('project')) {
    for (const definition of await projectDefinitions(workspace)) byName.set(definition.name, definition);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The activity: the definition named `input.name`, and the names there are. */
export async function loadAgentDefinition(
  homeDir: string,
  input: LoadAgentDefinitionInput,
): Promise<LoadAgentDefinitionResult> {
  const all = await loadAgentDefinitions(input.workspace, homeDir, input.settingSources);
  const found = all.find((definition) => definition.name === input.name);
  return { ...(found ? { definition: found } : {}), available: all.map((definition) => definition.name) };
}

async function userDefinitions(folder: string): Promise<AgentDefinition[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const definitions: AgentDefinition[] = [];
  for (const name of names
    .filter((each) => each.endsWith('.md'))
    .sort()
    .slice(0, MAX_DEFINITIONS)) {
    const text = await readFile(path.join(folder, name), 'utf8').catch(() => undefined);
    const definition = text === undefined ? undefined : parseAgentDefinition(text, name, 'user');
    if (definition) definitions.push(definition);
  }
  return definitions;
}

async function projectDefinitions(workspace: string): Promise<AgentDefinition[]> {
  const folder = await openWorkspaceFolder(workspace, '.claude/agents').catch(() => undefined);
  if (!folder?.ok) return [];
  let names: string[];
  try {
    names = await readdir(handlePath(folder.handle));
  } catch {
    return [];
  } finally {
    await folder.handle.close();
  }
  const definitions: AgentDefinition[] = [];
  for (const name of names
    .filter((each) => each.endsWith('.md'))
    .sort()
    .slice(0, MAX_DEFINITIONS)) {
    const opened = await openWorkspaceFile(workspace, `.claude/agents/${name}`).catch(() => undefined);
    if (!opened?.ok) continue;
    try {
      const info = await opened.handle.stat();
      if (!info.isFile()) continue;
      const bytes = Buffer.alloc(Math.min(info.size, DEFINITION_LIMIT * 4 + 4));
      const { bytesRead } = await opened.handle.read(bytes, 0, bytes.length, 0);
      const definition = parseAgentDefinition(
        new StringDecoder('utf8').write(bytes.subarray(0, bytesRead)),
        name,
        'project',
      );
      if (definition) definitions.push(definition);
    } catch {
      // An unreadable definition is left out, as Claude Code leaves out one it cannot parse.
    } finally {
      await opened.handle.close();
    }
  }
  return definitions;
}

/**
 * One definition file: `---` front matter of `key: value` lines, then the prompt. Without a name
 * and a description it is no definition (as in Claude Code); `tools` is a comma- or space-separated
 * list (absent: every tool the job has).
 */
export function parseAgentDefinition(
  text: string,
  file: string,
  source: AgentDefinition['source'],
): AgentDefinition | undefined {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!match) return undefined;
  const fields = new Map<string, string>();
  for (const line of match[1]!.split(/\r?\n/)) {
    const field = /^([A-Za-z_-]+)\s*:\s*(.*)$/.exec(line);
    if (field) fields.set(field[1]!.toLowerCase(), unquote(field[2]!.trim()));
  }
  const name = fields.get('name');
  const description = fields.get('description');
  if (!name || !description || !/^[A-Za-z0-9_.-]{1,100}$/.test(name)) return undefined;
  const tools = fields
    .get('tools')
    ?.replace(/^\[|\]$/g, '')
    .split(/[,\s]+/)
    .map((tool) => unquote(tool.trim()))
    .filter(Boolean);
  const model = fields.get('model');
  const prompt = match[2]!.trim();
  return {
    name,
    description: description.slice(0, 1_000),
    ...(tools?.length ? { tools } : {}),
    ...(model && model !== 'inherit' ? { model } : {}),
    prompt: prompt.length > DEFINITION_LIMIT ? `${prompt.slice(0, DEFINITION_LIMIT)}\n… (definition cut)` : prompt,
    source,
    file,
  };
}

function unquote(value: string): string {
  return /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value;
}
