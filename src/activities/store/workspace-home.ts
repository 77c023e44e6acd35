import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import path from 'node:path';

/** The folder under the store that holds one folder per workspace, named by `workspaceKey`. */
export const WORKSPACES_DIR = 'workspaces';

/**
 * The name of a workspace's folder under the data directory: a hash of its real path, so the same
 * folder reached through a symlink shares it and no path needs escaping.
 */
export async function workspaceKey(workspace: string): Promise<string> {
  const real = await realpath(workspace).catch(() => path.resolve(workspace));
  return createHash('sha256').update(real).digest('hex').slice(0, 32);
}

/**
 * Where the data directory keeps what tool calls leave for one workspace: the tool journal
 * (`journal/<job>/`) and the large results the model was pointed to, laid out as in the workspace
 * (`.durable-agent/tool-results/`) so Read and Grep can be run against it unchanged. It sits in the
 * store folder, which every worker of a job shares and Bash's sandbox hides, so neither a read-only
 * workspace, a `git clean -fdx` nor a command the model runs can lose or forge it.
 */
export async function workspaceHome(storeRoot: string, workspace: string): Promise<string> {
  return path.join(storeRoot, WORKSPACES_DIR, await workspaceKey(workspace));
}
