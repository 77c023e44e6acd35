import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * `text` as an open, already unlinked file, to be a process's stdin. Not a pipe: Node's pipes are
 * socket pairs, and bash takes a socket on stdin for a remote login and sources ~/.bashrc, which
 * would run the user's start-up file (and whatever it exports) in every hook.
 */
export async function stdinFile(text: string, tmpdir = os.tmpdir()): Promise<FileHandle> {
  const dir = await mkdtemp(path.join(tmpdir, 'durable-agent-hook-'));
  try {
    const file = path.join(dir, 'stdin.json');
    await writeFile(file, text, { mode: 0o600 });
    return await open(file, 'r');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
