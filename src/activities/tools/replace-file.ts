import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { access, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { PlannedFileChange, ToolContext } from './tool-context';
import { handlePath, openWorkspaceFile, openWorkspaceFolder } from './workspace-open';
import { writeInFolder } from './workspace-write';

/**
 * The journal could not record a file change: an infrastructure failure, not the tool's. It
 * passes through the tool's own error handling, so the activity fails and is retried.
 */
export class FileChangeNotRecordedError extends Error {
  override readonly name = 'FileChangeNotRecordedError';
}

/** SHA-256 (hex) of a file's bytes. */
export function contentHash(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Replace the user's file with `data` the crash-safe way: the journal hears what is about to
 * happen (the hashes before and after), then the new content is written beside the file and
 * renamed over it through the handle on its folder (`writeInFolder`), keeping its mode (and owner,
 * where the process may set it). A crash leaves the old file or the new one, never half of each.
 * A file the process may not write is refused as an in-place write would be, although the rename
 * alone would succeed. Returns the new file's state.
 */
export async function replaceFile(
  ctx: ToolContext,
  change: Omit<PlannedFileChange, 'after'>,
  data: string,
  target: { folder: FileHandle; name: string; existing?: Stats },
): Promise<Stats> {
  if (change.before !== null) await access(`/proc/self/fd/${target.folder.fd}/${target.name}`, constants.W_OK);
  try {
    await ctx.beforeFileChange?.({ ...change, after: contentHash(data) });
  } catch (error) {
    throw new FileChangeNotRecordedError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  return writeInFolder(target.folder, target.name, data, target.existing);
}

/**
 * Remove the temporary copies a replacement killed between writing and renaming left beside
 * `file`: `<name>.<digits>`, as `writeInFolder` (and write-file-atomic before it) names them, holding exactly the content the
 * replacement meant to write (hash `after`). Anything else of that shape is the user's and stays.
 */
export async function removeAbandonedCopies(workspace: string, file: string, after: string): Promise<void> {
  // The folder from a handle on the workspace, its entries through that handle: a folder swapped
  // for a link since the crash is refused, not followed.
  // A workspace gone meanwhile has no copies to remove.
  const folder = await openWorkspaceFolder(workspace, path.dirname(file)).catch(() => undefined);
  if (!folder?.ok) return;
  try {
    const dir = handlePath(folder.handle);
    const prefix = `${path.basename(file)}.`;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(prefix) || !/^\d+$/.test(name.slice(prefix.length))) continue;
      const copy = `${dir}/${name}`;
      if ((await entryHash(copy)) === after) await unlink(copy).catch(() => undefined);
    }
  } finally {
    await folder.handle.close();
  }
}

/** The hash of a regular file that is the entry itself (no link followed); undefined otherwise. */
async function entryHash(entry: string): Promise<string | undefined> {
  const handle = await open(entry, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => undefined,
  );
  if (!handle) return undefined;
  try {
    return (await handle.stat()).isFile() ? contentHash(await handle.readFile()) : undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * The file a journal entry names, as a recovery finds it: opened from a handle on the workspace.
 * `hash` null when there is none; undefined when it cannot be read as a regular file inside the
 * workspace (a link out, a folder swapped in since).
 */
export async function recoveredFile(
  workspace: string,
  absolute: string,
): Promise<{ hash: string | null; stats?: Stats } | undefined> {
  // A workspace gone meanwhile (its root cannot be resolved) holds neither content: undefined.
  const opened = await openWorkspaceFile(workspace, absolute).catch(() => undefined);
  if (!opened) return undefined;
  if (!opened.ok) return opened.code === 'ENOENT' ? { hash: null } : undefined;
  try {
    const stats = await opened.handle.stat();
    return stats.isFile() ? { hash: contentHash(await opened.handle.readFile()), stats } : undefined;
  } catch {
    return undefined;
  } finally {
    await opened.handle.close();
  }
}
