import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveWorkspacePath } from './workspace-path';

/**
 * This project's own folder inside a workspace. It holds tool results too large for the
 * conversation; Glob and Grep skip it as they skip `.git`, and a `.gitignore` of `*` inside it
 * keeps it out of the user's repository.
 */
export const WORKSPACE_DATA_DIR = '.durable-agent';

/** Where large tool results are stored, relative to the workspace root. */
export const TOOL_RESULTS_DIR = `${WORKSPACE_DATA_DIR}/tool-results`;

/**
 * Create the workspace's data folder with its `.gitignore` of `*`, and return its absolute path.
 * Refused, like any tool path, when a symlink leads it out of the workspace.
 */
export async function ensureWorkspaceDataDir(workspace: string): Promise<string> {
  const dataDir = await resolveWorkspacePath(workspace, WORKSPACE_DATA_DIR);
  if (!dataDir.ok) throw new Error(dataDir.error);
  await mkdir(dataDir.absolute, { recursive: true });
  try {
    await writeFile(path.join(dataDir.absolute, '.gitignore'), '*\n', { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return dataDir.absolute;
}
