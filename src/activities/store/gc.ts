import { randomBytes } from 'node:crypto';
import { lstat, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ContentRef } from '../../shared/transcript';
import { TOOL_RESULTS_DIR } from '../tools/workspace-data';

/** A content address anywhere in a text: a segment's `prev`, a `tool_result_ref`, a ref a message quotes. */
const REF_IN_TEXT = /sha256:([0-9a-f]{64})/g;
/** A file under the workspace's tool-results folder, as the notice the model saw names it. */
const RESULT_FILE_IN_TEXT = new RegExp(`${TOOL_RESULTS_DIR.replace(/[.]/g, '\\.')}/([A-Za-z0-9_.-]+\\.txt)`, 'g');

const OBJECT_NAME = /^[0-9a-f]{62}$/;
const FAN_OUT_NAME = /^[0-9a-f]{2}$/;
/**
 * A `put` that never reached its rename: `write-file-atomic` names its temporary file
 * `<name>.<decimal hash>`; older workers used `<name>.<hex>.tmp`.
 */
const TEMPORARY_NAME = /^[0-9a-f]{62}\.\d+$|\.tmp$/;
/** An object a sweep moved aside to check it; left behind only if that sweep was killed. */
const ASIDE_NAME = /^([0-9a-f]{62})\.[0-9a-f]+\.gc$/;

/** What the roots reach in the store. */
export interface Marked {
  /** Hex digests of the reachable objects that are in the store. */
  objects: Set<string>;
  /** References reached that name no stored object (lost, or kept by another store). */
  missing: Set<ContentRef>;
  /** Names of files in the workspaces' tool-results folders that reachable content points the model to. */
  resultFiles: Set<string>;
}

/** What reading one object for the mark found. */
export type ObjectRead = { text: string } | 'missing' | 'unreadable';

/** Reads an object of a store by its hex digest, as it is stored (unchecked). */
export type ObjectReader = (hex: string) => Promise<ObjectRead>;

/** The reader of a folder store's objects. */
export function fileObjectReader(storeRoot: string): ObjectReader {
  return async (hex) => {
    try {
      return { text: await readFile(objectPath(storeRoot, hex), 'utf8') };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unreadable';
    }
  };
}

/**
 * Mark: everything the roots reach. Each object reached is read as text and every `sha256:` ref
 * in it is followed (segment links, compaction links, tool results, refs quoted in messages), so
 * the walk needs no knowledge of the shapes stored and keeps whatever might be pointed at. Each
 * object is read once, so a malformed store (a cycle, garbage, a directory in an object's place)
 * cannot make it loop. `store` is a folder store's root, or a reader of any store's objects.
 */
export async function markReachable(store: string | ObjectReader, roots: Iterable<ContentRef>): Promise<Marked> {
  const read = typeof store === 'string' ? fileObjectReader(store) : store;
  const marked: Marked = { objects: new Set(), missing: new Set(), resultFiles: new Set() };
  const seen = new Set<string>();
  const pending: string[] = [];
  const reach = (text: string) => {
    for (const match of text.matchAll(REF_IN_TEXT)) {
      const hex = match[1] as string;
      if (!seen.has(hex)) {
        seen.add(hex);
        pending.push(hex);
      }
    }
  };
  for (const root of roots) reach(root);
  for (let hex = pending.pop(); hex !== undefined; hex = pending.pop()) {
    const found = await read(hex);
    if (found === 'missing') {
      marked.missing.add(`sha256:${hex}`);
      continue;
    }
    marked.objects.add(hex);
    // Present but unreadable: kept, since nothing can be known of what it points to.
    if (found === 'unreadable') continue;
    reach(found.text);
    for (const match of found.text.matchAll(RESULT_FILE_IN_TEXT)) marked.resultFiles.add(match[1] as string);
  }
  return marked;
}

export interface Tally {
  count: number;
  bytes: number;
}

export interface SweepReport {
  removed: Tally;
  /** Kept because a root reaches them. */
  live: Tally;
  /** Not reached, but written after the cutoff: a running activity may not have reported them yet. */
  recent: Tally;
  /** Temporary files of writes that never finished, removed once older than the cutoff. */
  abandoned: Tally;
}

export interface SweepOptions {
  /** Objects last written before this instant (ms since the epoch) may go. */
  cutoffMs: number;
  /** Count what would go, and remove nothing. */
  dryRun: boolean;
}

/**
 * Sweep: remove every object that is not marked and was last written before the cutoff. A `put`
 * of the same content rewrites the file (a fresh mtime), so an object a new job has just stored
 * again is never taken: each candidate is moved aside first and checked once more, where no
 * writer can reach it, and put back if it turned out fresh.
 */
export async function sweepObjects(storeRoot: string, marked: Marked, options: SweepOptions): Promise<SweepReport> {
  const report: SweepReport = { removed: tally(), live: tally(), recent: tally(), abandoned: tally() };
  const objectsDir = path.join(storeRoot, 'objects');
  for (const fanOut of await entries(objectsDir)) {
    if (!FAN_OUT_NAME.test(fanOut)) continue;
    const dir = path.join(objectsDir, fanOut);
    for (const name of await entries(dir)) {
      const file = path.join(dir, name);
      const info = await lstat(file).catch(() => undefined);
      if (!info?.isFile()) continue;
      const old = info.mtimeMs < options.cutoffMs;
      if (OBJECT_NAME.test(name)) {
        if (marked.objects.has(fanOut + name)) add(report.live, info.size);
        else if (!old) add(report.recent, info.size);
        else if (options.dryRun) add(report.removed, info.size);
        else {
          const removed = await removeUnlessRewritten(file, options.cutoffMs);
          if (removed === undefined) add(report.recent, info.size);
          else add(report.removed, removed);
        }
      } else if (TEMPORARY_NAME.test(name) && old) {
        if (!options.dryRun) await unlink(file).catch(() => undefined);
        add(report.abandoned, info.size);
      } else if (!options.dryRun) {
        await restoreAside(dir, name);
      }
    }
  }
  return report;
}

/** Bytes removed, or undefined when a writer stored the object again meanwhile (it is put back). */
async function removeUnlessRewritten(file: string, cutoffMs: number): Promise<number | undefined> {
  const aside = `${file}.${randomBytes(6).toString('hex')}.gc`;
  try {
    await rename(file, aside);
  } catch {
    return undefined;
  }
  const info = await lstat(aside);
  if (info.mtimeMs >= cutoffMs) {
    // Same name, same content: putting it back over a newer copy loses nothing.
    await rename(aside, file);
    return undefined;
  }
  await unlink(aside);
  return info.size;
}

/** An object a killed sweep left aside goes back (it was being checked, not yet condemned). */
async function restoreAside(dir: string, name: string): Promise<void> {
  const match = ASIDE_NAME.exec(name);
  if (!match?.[1]) return;
  const original = path.join(dir, match[1]);
  const exists = await lstat(original).catch(() => undefined);
  if (exists) await unlink(path.join(dir, name)).catch(() => undefined);
  else await rename(path.join(dir, name), original).catch(() => undefined);
}

/** The file of an object, as `FileContentStore` lays them out. */
export function objectPath(storeRoot: string, hex: string): string {
  return path.join(storeRoot, 'objects', hex.slice(0, 2), hex.slice(2));
}

async function entries(dir: string): Promise<string[]> {
  const info = await lstat(dir).catch(() => undefined);
  if (!info?.isDirectory()) return [];
  return readdir(dir);
}

export function tally(): Tally {
  return { count: 0, bytes: 0 };
}

export function add(into: Tally, bytes: number): void {
  into.count += 1;
  into.bytes += bytes;
}
