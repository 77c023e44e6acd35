import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/**
 * Replace `file` with `data` so that after a crash or power loss it holds either its old content
 * or the new, never a mix, and once this resolves the new content survives a power loss.
 *
 * `write-file-atomic` writes a temporary file beside `file`, fsyncs it, gives it the mode and owner
 * of the file it replaces (when there is one; the owner only where the process may set it) and
 * renames it into place. It does not fsync the folder, so the rename itself could still be lost:
 * that is done here.
 */
export async function writeFileDurably(file: string, data: string | Buffer): Promise<void> {
  await writeFileAtomic(file, data);
  await fsyncDirectory(path.dirname(file));
}

/**
 * `mkdir -p` whose new folders survive a power loss: each folder it created is fsynced into its
 * parent. Cheap when the folder is there already (nothing is created, nothing synced).
 */
export async function ensureDirDurably(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (first === undefined) return;
  // From the parent of the first folder created down to `dir`'s parent: each holds a new entry.
  const created = path.relative(path.dirname(first), dir).split(path.sep);
  let parent = path.dirname(first);
  for (const name of created) {
    await fsyncDirectory(parent);
    parent = path.join(parent, name);
  }
}

/** Make a folder's entries (a rename, a new file) durable. Platforms that cannot fsync a folder skip it. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    // Windows cannot open a folder; some file systems refuse to fsync one. Nothing more can be done there.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF' && code !== 'ENOTSUP') {
      throw error;
    }
  } finally {
    await handle?.close();
  }
}
