import { constants } from 'node:fs';
import { access, lstat, mkdir, open, readdir, readlink, realpath, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { describeFsError } from './fs-errors';
import { isInside } from './workspace-path';

/**
 * Opening a workspace path without leaving the workspace, whatever runs beside the worker.
 *
 * Checking a path and then opening it by name lets anything that can rename in the workspace (a
 * sandboxed command of another job, a hook) swap a folder for a symlink in between, and the open
 * lands outside. Here nothing is opened by name after a check: the walk holds a handle on the
 * workspace and opens one name at a time below the handle it holds (`/proc/self/fd/<fd>/<name>`,
 * which the kernel looks up in that very folder, as `openat` does), never following a symlink on
 * its own. A symlink met on the way is read and its target walked the same way, from the handle
 * of the folder it sits in (or of the workspace, for an absolute target inside it): one that
 * leads out, even for a moment, is refused. The handle returned is what the caller reads.
 */

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

let procChecked: Promise<void> | undefined;

/**
 * The walk names what a handle has open through /proc: without /proc every open would read as a
 * missing file (and a settings file's deny rules as absent), so its absence stops the call instead.
 */
async function checkProc(): Promise<void> {
  const handle = await open('/', O_RDONLY | O_DIRECTORY);
  try {
    await access(`/proc/self/fd/${handle.fd}`);
  } catch {
    procChecked = undefined;
    throw new Error(
      '/proc is not mounted here: durable-agent opens workspace files through /proc/self/fd, and will not open them by name. Mount /proc (containers have it by default) and start the worker again.',
    );
  } finally {
    await handle.close();
  }
}

/** Symlinks followed in one walk at most, as the kernel's own limit (ELOOP past it). */
const MAX_LINKS = 40;
/** Names listed at most for a missing file's suggestions. */
const MAX_LISTED = 5000;

export interface OpenedWorkspaceFile {
  ok: true;
  /** Open for reading, without blocking (a FIFO opens, and its fstat says what it is). */
  handle: FileHandle;
  /** The path the walk reached, symlinks inside the workspace resolved: for rules and messages. */
  absolute: string;
  /** The same, relative to the workspace ('.' for the workspace itself). */
  relative: string;
}

export interface WorkspaceOpenFailure {
  ok: false;
  /** What to tell the model. */
  error: string;
  /** `outside`: the path or a symlink on it leads out of the workspace; else the errno code. */
  code: string;
  /** The path the walk had reached when it failed (for a missing file: the file's own). */
  absolute: string;
  relative: string;
  /** For a missing file: the names in the folder it would be in, read through that folder's handle. */
  siblings?: string[];
}

export type WorkspaceOpenResult = OpenedWorkspaceFile | WorkspaceOpenFailure;

/**
 * Open `input` (absolute, or relative to `workspace`) for reading. `..` in `input` is resolved as
 * written, before the walk; a path that names something outside the workspace, or that reaches it
 * through a symlink, is refused with a sentence saying so.
 */
export function openWorkspaceFile(
  workspace: string,
  input: string,
  options: { listSiblingsIfMissing?: boolean } = {},
): Promise<WorkspaceOpenResult> {
  return walk(workspace, input, { ...options, folder: false });
}

/**
 * Open the folder `input` the same way; with `create`, folders missing on the way are made (each
 * in the handle of its parent, and synced into it, as `mkdir -p` that survives a power loss).
 */
export function openWorkspaceFolder(
  workspace: string,
  input: string,
  options: { create?: boolean } = {},
): Promise<WorkspaceOpenResult> {
  return walk(workspace, input, { ...options, folder: true });
}

async function walk(
  workspace: string,
  input: string,
  options: { listSiblingsIfMissing?: boolean; folder: boolean; create?: boolean },
): Promise<WorkspaceOpenResult> {
  await (procChecked ??= checkProc());
  const root = await realpath(workspace);
  const refuse = (code: string, error: string, at: string, siblings?: string[]): WorkspaceOpenFailure => ({
    ok: false,
    code,
    error,
    absolute: at,
    relative: path.relative(root, at) || '.',
    ...(siblings ? { siblings } : {}),
  });
  if (input.includes('\0')) return refuse('EINVAL', 'The path must not contain NUL bytes.', root);
  // An absolute path may name the workspace as it was given (through a symlinked folder) rather
  // than by its real path: the same place, so it is taken as the real path's.
  const given = path.resolve(workspace);
  const rebased = (absolute: string) =>
    !isInside(root, absolute) && isInside(given, absolute) ? path.join(root, path.relative(given, absolute)) : absolute;
  const lexical = rebased(path.resolve(root, input));
  const outsideMessage = `Path "${input}" is outside the workspace (${root}). Only files inside the workspace can be accessed; use a path relative to the workspace root.`;
  if (!isInside(root, lexical)) return refuse('outside', outsideMessage, lexical);

  const rootHandle = await open(root, O_RDONLY | O_DIRECTORY);
  /** The folders below the workspace the walk is in, outermost first, each with its handle. */
  const folders: { name: string; handle: FileHandle }[] = [];
  const here = () => path.join(root, ...folders.map((folder) => folder.name));
  const leave = async (count: number) => {
    for (const folder of folders.splice(folders.length - count, count)) await folder.handle.close();
  };
  const through = (link: string, target: string) =>
    refuse(
      'outside',
      `Path "${input}" resolves through a symbolic link (${path.relative(root, link)} -> ${target}) to a place outside the workspace (${root}).`,
      link,
    );
  let pending = path.relative(root, lexical).split(path.sep).filter(Boolean);
  let links = 0;
  try {
    while (pending.length > 0) {
      const name = pending.shift() as string;
      if (name === '.') continue;
      if (name === '..') {
        // Only a symlink's target gets here ('..' in the input was resolved before the walk).
        // (Links are resolved from the workspace's root, so only a link's own '..' could get here.)
        if (folders.length === 0) return refuse('outside', outsideMessage, path.dirname(root));
        await leave(1);
        continue;
      }
      const parent = folders.at(-1)?.handle ?? rootHandle;
      const entry = `/proc/self/fd/${parent.fd}/${name}`;
      const last = pending.length === 0;
      const flags = last && !options.folder ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK : O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
      let handle: FileHandle;
      try {
        handle = await open(entry, flags).catch(async (error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT' || !options.create || !options.folder) throw error;
          // A folder to make: made here (EEXIST if something else made it meanwhile, which is opened).
          await mkdir(entry).catch((made: NodeJS.ErrnoException) => {
            if (made.code !== 'EEXIST') throw made;
          });
          await syncFolder(parent);
          return open(entry, flags);
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
        const at = path.join(here(), name);
        if (code === 'ELOOP' || code === 'ENOTDIR') {
          const info = await lstat(entry).catch(() => undefined);
          // A folder now where a symlink was a moment ago (or the other way round): it is
          // changing under the walk, which looks again, within the same bound as for links.
          const changed = info?.isDirectory() && (!last || options.folder);
          if (info?.isSymbolicLink() || changed) {
            if (++links > MAX_LINKS)
              return refuse('ELOOP', `Path "${input}" has too many levels of symbolic links.`, at);
            const target = changed ? undefined : await readlink(entry).catch(() => undefined);
            if (target === undefined) pending.unshift(name);
            else {
              // Taken as written, from the folder the link is in ('..' too, as `ln -s` users mean
              // it), and walked again from the workspace's handle: a target that ends outside is
              // refused; one that climbs out and back in ends inside, and never goes through the parent.
              const resolved = rebased(path.resolve(here(), target));
              if (!isInside(root, resolved)) return through(at, target);
              await leave(folders.length);
              pending = [...path.relative(root, resolved).split(path.sep).filter(Boolean), ...pending];
            }
            continue;
          }
        }
        // Messages name the whole path as far as it was resolved.
        const whole = path.join(at, ...pending);
        const shown = path.relative(root, whole) || '.';
        if (code === 'ENOENT' && options.listSiblingsIfMissing) {
          // Suggestions come from the folder the file would be in, when that folder is there.
          const siblings = last ? await readdir(`/proc/self/fd/${parent.fd}`).catch(() => [] as string[]) : [];
          return refuse(code, describeOpenError(code, shown), whole, siblings.slice(0, MAX_LISTED));
        }
        return refuse(code, describeOpenError(code, shown), whole);
      }
      if (last)
        return {
          ok: true,
          handle,
          absolute: path.join(here(), name),
          relative: path.relative(root, path.join(here(), name)) || '.',
        };
      folders.push({ name, handle });
    }
    // The walk ended on a folder (the workspace itself, or a symlink's target): open it again from its parent's handle.
    const handle = await open(`/proc/self/fd/${(folders.at(-1)?.handle ?? rootHandle).fd}`, O_RDONLY | O_DIRECTORY);
    return { ok: true, handle, absolute: here(), relative: path.relative(root, here()) || '.' };
  } finally {
    await leave(folders.length);
    await rootHandle.close();
  }
}

/** What an open's failure means, in the words `describeFsError` uses for the same codes. */
function describeOpenError(code: string, shown: string): string {
  return describeFsError(Object.assign(new Error(`cannot be opened (${code})`), { code }), shown);
}

/**
 * A path naming what `handle` has open, for as long as it stays open, that a process this one
 * starts can use too (ripgrep's working folder, or the file it searches): the kernel resolves it to
 * the very file or folder, whatever has been renamed or swapped since.
 */
export function handlePath(handle: FileHandle): string {
  return `/proc/${process.pid}/fd/${handle.fd}`;
}

/**
 * Make a folder's new entry durable. A file system that cannot sync a folder says so with one of
 * these codes (as `fsyncDirectory` of the data home allows); anything else (EIO) is a failure.
 */
export async function syncFolder(folder: FileHandle): Promise<void> {
  try {
    await folder.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EPERM' && code !== 'EBADF' && code !== 'EISDIR')
      throw error;
  }
}
