import { randomInt } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { openWorkspaceFile, openWorkspaceFolder, syncFolder, type WorkspaceOpenFailure } from './workspace-open';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/**
 * Where Write and Edit put a file: the folder it is in, held open (see `workspace-open.ts`), and
 * its name there. Everything after is done through that handle: the file as it is now is opened
 * from it, the new content is written beside it and renamed over it there, so a folder swapped
 * for a symlink meanwhile changes nothing about where the bytes go.
 */
export interface WriteTarget {
  ok: true;
  folder: FileHandle;
  name: string;
  /** The file's path (symlinks inside the workspace resolved) and the same relative to the workspace. */
  absolute: string;
  relative: string;
  /** The file as it is now, opened from the folder; undefined when there is none. */
  existing?: FileHandle;
  close(): Promise<void>;
}

/**
 * Find where `input` is written: a symlink inside the workspace is written through (its target is
 * replaced), as before; folders missing on the way are made when `createFolders` says so (Write).
 */
export async function openWriteTarget(
  workspace: string,
  input: string,
  options: { createFolders: boolean },
): Promise<WriteTarget | WorkspaceOpenFailure> {
  // Where the file is, symlinks inside the workspace followed (or would be, when there is none yet).
  const probe = await openWorkspaceFile(workspace, input);
  if (probe.ok) await probe.handle.close();
  else if (probe.code !== 'ENOENT') return probe;
  if (probe.relative === '.') {
    return { ...probe, ok: false, code: 'EISDIR', error: `${input} is the workspace folder; give the path of a file.` };
  }
  const folder = await openWorkspaceFolder(workspace, path.dirname(probe.relative), { create: options.createFolders });
  if (!folder.ok) {
    if (folder.code !== 'ENOENT') return folder;
    return {
      ...folder,
      error: `File does not exist: ${probe.relative}`,
      relative: probe.relative,
      absolute: probe.absolute,
    };
  }
  const name = path.basename(probe.relative);
  let existing: FileHandle | undefined;
  try {
    existing = await open(`/proc/self/fd/${folder.handle.fd}/${name}`, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    if (code !== 'ENOENT') {
      await folder.handle.close();
      const changed = code === 'ELOOP';
      return {
        ok: false,
        code,
        absolute: probe.absolute,
        relative: probe.relative,
        error: changed
          ? `${probe.relative} became a symbolic link while it was being opened; nothing was written. Look at it, then try again.`
          : `${probe.relative}: cannot be opened (${code}).`,
      };
    }
  }
  return {
    ok: true,
    folder: folder.handle,
    name,
    absolute: probe.absolute,
    relative: probe.relative,
    ...(existing ? { existing } : {}),
    close: async () => {
      await existing?.close();
      await folder.handle.close();
    },
  };
}

/**
 * Replace `name` in `folder` with `data` the crash-safe way, through the folder's handle: a new
 * file beside it (created, never opened through a symlink), fsynced, given the old file's mode
 * and owner (where the process may set them), renamed over the old one and the folder fsynced. A
 * crash leaves the old file or the new one; a copy left by one is `<name>.<digits>`, which
 * `removeAbandonedCopies` knows. Returns the new file's state.
 *
 * write-file-atomic, used for the data home's files, resolves the path by name (realpath) and
 * opens its temporary file by name, which is what this must not do in a workspace.
 */
export async function writeInFolder(folder: FileHandle, name: string, data: string, like?: Stats): Promise<Stats> {
  const at = (entry: string) => `/proc/self/fd/${folder.fd}/${entry}`;
  let temporary = '';
  let handle: FileHandle | undefined;
  for (let attempt = 0; !handle; attempt++) {
    temporary = `${name}.${randomInt(1_000_000_000, 9_999_999_999)}`;
    try {
      handle = await open(at(temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, like ? like.mode & 0o7777 : 0o666);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw error;
    }
  }
  try {
    let written: Stats;
    try {
      await handle.writeFile(data);
      await handle.sync();
      if (like) {
        // Only root may give a file away; anyone keeps their own. The mode is set past the umask.
        await handle.chown(like.uid, like.gid).catch(() => undefined);
        await handle.chmod(like.mode & 0o7777);
      }
      written = await handle.stat();
    } finally {
      await handle.close();
    }
    await rename(at(temporary), at(name));
    await syncFolder(folder);
    return written;
  } catch (error) {
    await unlink(at(temporary)).catch(() => undefined);
    throw error;
  }
}
