import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { access, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { PlannedFileChange, ToolContext } from './tool-context';
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

/** SHA-256 (hex) of the file at `absolute`; null when there is none. */
export async function fileHash(absolute: string): Promise<string | null> {
  try {
    return contentHash(await readFile(absolute));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
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
export async function removeAbandonedCopies(file: string, after: string): Promise<void> {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || !/^\d+$/.test(name.slice(prefix.length))) continue;
    const copy = path.join(dir, name);
    if ((await fileHash(copy).catch(() => undefined)) === after) await unlink(copy).catch(() => undefined);
  }
}
