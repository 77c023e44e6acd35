import { stat } from 'node:fs/promises';
import * as path from 'node:path';

const BATCH = 256;

/** Modification times (ms) of `files` relative to `cwd`; 0 for a file that vanished meanwhile. */
export async function statMtimes(files: readonly string[], cwd: string): Promise<number[]> {
  const result: number[] = [];
  // Batches keep a huge listing from opening thousands of stat calls at once.
  for (let i = 0; i < files.length; i += BATCH) {
    const batch = files.slice(i, i + BATCH);
    const times = await Promise.all(
      batch.map((file) =>
        stat(path.resolve(cwd, file)).then(
          (info) => info.mtimeMs,
          () => 0,
        ),
      ),
    );
    result.push(...times);
  }
  return result;
}

/** `files` (relative to `cwd`) newest first; equal times fall back to name order so output is stable. */
export async function sortNewestFirst(files: readonly string[], cwd: string): Promise<string[]> {
  return sortByMtime(files, cwd, -1);
}

/** `files` (relative to `cwd`) oldest first, as Claude Code's Glob lists them; ties in name order. */
export async function sortOldestFirst(files: readonly string[], cwd: string): Promise<string[]> {
  return sortByMtime(files, cwd, 1);
}

async function sortByMtime(files: readonly string[], cwd: string, direction: 1 | -1): Promise<string[]> {
  const mtimes = await statMtimes(files, cwd);
  return files
    .map((file, i) => ({ file, mtime: mtimes[i] ?? 0 }))
    .sort((a, b) => direction * (a.mtime - b.mtime) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    .map(({ file }) => file);
}
