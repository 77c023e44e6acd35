import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { loadSettingsLayers } from '../activities/permission-settings';
import { resolvePermissions, sandboxLayersOf, SETTING_SOURCES } from '../shared/settings-trust';
import { resolveJobSandbox } from '../shared/sandbox';
import { SandboxEngine } from '../activities/sandbox/engine';
import { dataHome } from './config';
import { defaultBashEnv, executeTool } from '../activities/tools';
import type { ReadFileStates } from '../shared/file-state';
import type { ToolResultBlock } from '../shared/messages';
import { decidePermission, isBashRuleText } from '../shared/permissions';
import type { PermissionMode } from '../shared/permissions';
import { fileStateKeysFor } from '../shared/tools';
import type { Output } from './render';

export interface ToolCommandOptions {
  cwd: string;
  permissionMode?: PermissionMode;
  allow: string[];
  deny: string[];
  ask: string[];
  /** Run even when the rules say ask (there is nobody to ask in a one-shot call). */
  yes?: boolean;
  /** CI: the workspace's settings files may only add deny and ask rules. */
  restrictWorkspace?: boolean;
  /** `--no-sandbox`: run Bash without the OS sandbox. */
  noSandbox?: boolean;
}

/**
 * `durable-agent tool <Name> '<json>'`: one tool call outside Temporal, through the same permission
 * rules as a job (the workspace's settings plus the flags), printing the tool_result a job would
 * give the model. Returns the process exit status: 0 for a result, 1 for an error result, 2 when
 * the rules deny or would ask.
 */
export async function runToolCommand(
  name: string,
  json: string,
  options: ToolCommandOptions,
  out: Output,
  err: Output,
): Promise<number> {
  let input: unknown;
  try {
    input = JSON.parse(json);
  } catch (error) {
    err.write(
      `The tool input is not valid JSON (${(error as Error).message}). Quote it for the shell, e.g. '{"file_path":"README.md"}'.`,
    );
    return 2;
  }
  const workspace = fs.realpathSync(path.resolve(options.cwd));
  // The same trust rules as a job: a workspace file never grants bypassPermissions, and in CI it
  // may only add deny and ask rules.
  const homeDir = os.homedir();
  const layers = await loadSettingsLayers(workspace, { sources: [...SETTING_SOURCES], homeDir });
  const { context, summary } = resolvePermissions({
    layers,
    own: {
      ...(options.permissionMode ? { mode: options.permissionMode } : {}),
      allow: options.allow,
      ask: options.ask,
      deny: options.deny,
      ...(options.restrictWorkspace ? { restrictWorkspace: true } : {}),
    },
    workspace,
    homeDir,
  });
  const sandboxed = resolveJobSandbox({
    layers: sandboxLayersOf(layers),
    noSandbox: options.noSandbox === true,
  });
  for (const why of [...summary.ignored, ...sandboxed.ignored]) err.write(`setting ignored: ${why}`);
  const decision = decidePermission(name, input, context);
  err.write(`permission: ${decision.behavior} — ${decision.reason}`);
  if (decision.behavior === 'deny' || (decision.behavior === 'ask' && !options.yes)) {
    if (decision.behavior === 'ask') err.write('(a job would wait for `approve`; pass --yes to run it here)');
    return 2;
  }

  // A one-shot call has no session: the files it touches count as read in their current state.
  const readState: ReadFileStates = {};
  for (const key of fileStateKeysFor(name, input, workspace)) {
    const stat = fs.statSync(key, { throwIfNoEntry: false });
    if (stat?.isFile()) readState[key] = { mtimeMs: stat.mtimeMs, size: stat.size, partial: false };
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  try {
    const outcome = await executeTool(name, input, {
      workspace,
      signal: controller.signal,
      heartbeat: () => undefined,
      env: defaultBashEnv(process.env),
      // The same sandbox as a job's Bash, hiding the data folder of this machine's jobs.
      sandbox: { engine: new SandboxEngine({ workerPrivatePaths: [dataHome()] }), policy: sandboxed.sandbox },
      sessionKey: 'one-shot',
      readState,
      // As in a job: the tools re-check Read deny rules on real paths and on what a search finds.
      readDenyRules: context.rules.deny.filter((rule) => rule.trim().startsWith('Read(')),
      gitGuard: [...context.rules.deny, ...context.rules.ask].some(isBashRuleText),
    });
    const block: ToolResultBlock = {
      type: 'tool_result',
      tool_use_id: 'cli',
      content: outcome.blocks ?? outcome.content,
      ...(outcome.isError ? { is_error: true } : {}),
    };
    out.write(JSON.stringify(block, null, 2));
    return outcome.isError ? 1 : 0;
  } finally {
    process.off('SIGINT', stop);
  }
}
