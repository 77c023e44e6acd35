import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { GIT_DIR_PROTECTED_ENTRIES, WORKSPACE_PROTECTED_PATHS, type Placeholder } from './defaults';

/** One path of the workspace that a sandboxed command may not replace. */
export interface ProtectedPath {
  /** Where it is, as the workspace names it (symlinks not followed). */
  path: string;
  /**
   * 'read-only': nothing in it may change. 'pin': it stays writable but becomes a mount point,
   * which cannot be renamed or removed, so nobody can put another one in its place.
   */
  mode: 'read-only' | 'pin';
  /** When it is missing, what stands in for it while the command runs, so it cannot be created. */
  placeholder?: Placeholder;
}

/** Bounds of the walk through nested git directories (worktrees, submodules of submodules). */
const MAX_GIT_DIRS = 64;
const MAX_MODULE_DEPTH = 4;

const EMPTY_DIRECTORY: Placeholder = { type: 'directory' };

async function kindOf(target: string): Promise<'directory' | 'file' | 'missing'> {
  try {
    return (await stat(target)).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

/**
 * The protected paths of one workspace, as they are on disk now: the editor, shell and agent files
 * of `WORKSPACE_PROTECTED_PATHS`, the workspace's `.git` (a folder is pinned, a worktree's
 * `gitdir:` file is read-only, a missing one gets a placeholder so that no repository can be
 * started in its place), and the protected entries of every git directory the sandbox could write:
 * the workspace's, its worktrees', its submodules' and the common one a worktree points to.
 * `isWritable` says whether a real path is writable in the sandbox; nothing elsewhere needs
 * protecting. A path listed in `allowWrite` exactly is left writable.
 */
export async function findProtectedPaths(
  workspace: string,
  options: { isWritable: (realPath: string) => boolean; allowWrite: ReadonlySet<string> },
): Promise<ProtectedPath[]> {
  const found: ProtectedPath[] = WORKSPACE_PROTECTED_PATHS.map((relative) => ({
    path: path.join(workspace, relative),
    mode: 'read-only' as const,
    placeholder: EMPTY_DIRECTORY,
  }));
  const visited = new Set<string>();

  const protectGitDir = async (dir: string, depth: number): Promise<void> => {
    if (visited.has(dir) || visited.size >= MAX_GIT_DIRS || !options.isWritable(dir)) return;
    visited.add(dir);
    // A worktree's git directory reads only config.worktree itself; the rest comes from the
    // common directory its `commondir` names, which is protected in its turn.
    const linked = (await kindOf(path.join(dir, 'commondir'))) === 'file';
    for (const { name, placeholder } of GIT_DIR_PROTECTED_ENTRIES) {
      const withPlaceholder = !linked || name === 'config.worktree';
      found.push({ path: path.join(dir, name), mode: 'read-only', ...(withPlaceholder ? { placeholder } : {}) });
    }
    if (linked) {
      const common = (await readFile(path.join(dir, 'commondir'), 'utf8').catch(() => '')).trim();
      if (common) await protectGitDirAt(path.resolve(dir, common), depth);
    }
    for (const worktree of await subdirectories(path.join(dir, 'worktrees'))) {
      await protectGitDir(worktree, depth);
    }
    await protectModules(path.join(dir, 'modules'), depth + 1);
  };

  const protectGitDirAt = async (target: string, depth: number) => {
    const real = await realpath(target).catch(() => undefined);
    if (real && (await kindOf(real)) === 'directory') await protectGitDir(real, depth);
  };

  // Submodule git directories live at modules/<name>, and a name may contain slashes.
  const protectModules = async (dir: string, depth: number): Promise<void> => {
    if (depth > MAX_MODULE_DEPTH) return;
    for (const child of await subdirectories(dir)) {
      if ((await kindOf(path.join(child, 'HEAD'))) === 'file') await protectGitDir(child, depth);
      else await protectModules(child, depth + 1);
    }
  };

  const dotGit = path.join(workspace, '.git');
  const kind = await kindOf(dotGit);
  if (kind === 'missing') {
    // A dangling symlink is left alone: nothing can be mounted over a link.
    const dangling = await lstat(dotGit).then(
      () => true,
      () => false,
    );
    if (!dangling) found.push({ path: dotGit, mode: 'read-only', placeholder: EMPTY_DIRECTORY });
  } else if (kind === 'directory') {
    found.push({ path: dotGit, mode: 'pin' });
    await protectGitDirAt(dotGit, 0);
  } else {
    found.push({ path: dotGit, mode: 'read-only' });
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, 'utf8').catch(() => ''));
    if (pointer?.[1]) await protectGitDirAt(path.resolve(workspace, pointer[1]), 0);
  }
  return found.filter((entry) => !options.allowWrite.has(entry.path));
}

async function subdirectories(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory()).map((entry) => path.join(dir, entry.name));
  } catch {
    return [];
  }
}
