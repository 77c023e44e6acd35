import { link, lstat, mkdir, readdir, readFile, rename, rm, rmdir, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isProcessAlive } from '../../client/free-port';
import type { Placeholder } from './defaults';

/** A protected path that must exist while a command runs, and what to put there if it does not. */
export interface WantedPlaceholder {
  path: string;
  placeholder: Placeholder;
}

/** The placeholders one command holds; `release` once the command and its sandbox have ended. */
export interface PlaceholderLease {
  /** The placeholders this lease holds (made for it, or shared with another running command). */
  paths: string[];
  release(): Promise<void>;
}

interface Held {
  count: number;
  dev: number;
  ino: number;
  placeholder: Placeholder;
}

/**
 * Stand-ins for missing protected paths. A path that does not exist cannot be a mount point, and
 * a read-only mount is the only thing that stops a sandboxed command from creating it in a
 * writable folder. bubblewrap would create the mount point itself, on the host, and leave it
 * behind (an empty `.mcp.json` in `git status`, an empty `.git/commondir` that breaks git), so the
 * worker makes them instead and removes them when the last command that needed them ends: empty
 * folders, which git does not show or commit, and, inside a git directory, files that mean to git
 * what their absence means. Each is stamped with an mtime of 0, so one left behind by a killed
 * worker is known again and removed, and one that somebody has written into since is left alone.
 *
 * A worker can be killed at any instruction, so a stand-in never sits in place unstamped: it is
 * made and stamped under a staging name beside its place (a whole tree at once, a `.git` with its
 * `hooks` and `config`) and then renamed or linked into place; it leaves by being renamed to a
 * staging name first. What a killed worker leaves is then either a whole stamped stand-in (known
 * again, as above) or a staging entry, which the next command there sweeps away.
 */
export class Placeholders {
  private readonly held = new Map<string, Held>();
  private queue: Promise<unknown> = Promise.resolve();

  /** Make the missing ones of `wanted`; paths that exist for real are not touched. */
  acquire(wanted: readonly WantedPlaceholder[]): Promise<PlaceholderLease> {
    return this.serially(() => this.acquireNow(wanted, []));
  }

  /**
   * As `acquire`, with the list worked out by `find` while no other command of this worker makes
   * or removes a stand-in. A protected path that `find` saw as present may be a stand-in another
   * running command holds: it is held for this command too, so that command's end cannot remove
   * it from under this one's sandbox (whose mount would then have no source).
   */
  acquireFound(
    find: () => Promise<{ wanted: readonly WantedPlaceholder[]; present: readonly string[] }>,
  ): Promise<PlaceholderLease> {
    return this.serially(async () => {
      const { wanted, present } = await find();
      return this.acquireNow(wanted, present);
    });
  }

  private async acquireNow(
    wanted: readonly WantedPlaceholder[],
    present: readonly string[],
  ): Promise<PlaceholderLease> {
    const paths: string[] = [];
    for (const target of present) {
      if (wanted.some((item) => item.path === target)) continue;
      const held = this.held.get(target);
      if (held) {
        held.count++;
        paths.push(target);
      } else {
        await sweepAround(target);
        if (await this.adoptLeftover(target)) paths.push(target);
      }
    }
    const fresh: WantedPlaceholder[] = [];
    for (const item of wanted) {
      const held = this.held.get(item.path);
      if (held) {
        held.count++;
        paths.push(item.path);
      } else {
        fresh.push(item);
      }
    }
    // Parents first (a `.git` before its `.git/hooks`); then the folders are stamped again, deepest
    // first, since making an entry in a folder changes the folder's mtime.
    const ordered = [...fresh].sort((a, b) => depth(a.path) - depth(b.path));
    const done = new Set<string>();
    for (const item of ordered) {
      if (done.has(item.path)) continue;
      const inside = ordered.filter((other) => other.path.startsWith(item.path + path.sep));
      const made = await this.adoptOrCreate(item, inside);
      for (const target of made) done.add(target);
      paths.push(...made);
      // A stand-in made inside one another command holds (a `.git/hooks` in a `.git` made
      // earlier) changed that folder's mtime: stamp it again, or it is never known as ours.
      const parent = path.dirname(item.path);
      if (made.length > 0 && this.held.get(parent)?.placeholder.type === 'directory') {
        await utimes(parent, 0, 0).catch(() => {});
      }
    }
    for (const target of [...paths].sort((a, b) => depth(b) - depth(a))) {
      const held = this.held.get(target);
      if (held?.placeholder.type === 'directory' && held.count === 1) await utimes(target, 0, 0).catch(() => {});
    }
    let released = false;
    return {
      paths,
      release: () => {
        if (released) return Promise.resolve();
        released = true;
        return this.serially(() => this.releaseAll(paths));
      },
    };
  }

  // One worker's commands in one workspace may start and end side by side.
  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * A protected path found present that is a stand-in nobody here holds: one a worker made and
   * died before its journal named it (so no retry knows to remove it). Held for this command, it
   * goes when the command ends; a real path (not stamped, or written into) is left alone.
   */
  private async adoptLeftover(target: string): Promise<boolean> {
    const info = await lstat(target).catch(() => undefined);
    if (!info || Number(info.mtimeMs) !== 0) return false;
    let placeholder: Placeholder;
    if (info.isDirectory()) placeholder = { type: 'directory' };
    else if (info.isFile() && info.size <= 1024) {
      const content = await readFile(target, 'utf8').catch(() => undefined);
      if (content === undefined) return false;
      placeholder = { type: 'file', content };
    } else return false;
    if (!(await isOurs(target, placeholder, info))) return false;
    this.held.set(target, { count: 1, dev: info.dev, ino: info.ino, placeholder });
    return true;
  }

  /**
   * Adopt `item` when a stand-in of ours is already there, else make it, with the wanted stand-ins
   * `inside` it when it is a folder (they cannot exist while it does not): built and stamped under
   * a staging name, then put in place in one step. Returns the paths now held.
   */
  private async adoptOrCreate(item: WantedPlaceholder, inside: readonly WantedPlaceholder[]): Promise<string[]> {
    const { path: target, placeholder } = item;
    await sweepAround(target);
    const before = await lstat(target).catch(() => undefined);
    if (before) {
      if (!(await isOurs(target, placeholder, before))) return [];
      this.held.set(target, { count: 1, dev: before.dev, ino: before.ino, placeholder });
      return [target];
    }
    const tree = placeholder.type === 'directory' ? [item, ...inside] : [item];
    const stage = stagingName(path.dirname(target));
    try {
      await buildStaged(stage, target, tree);
      if (placeholder.type === 'directory') {
        // rename() would replace an empty folder made meanwhile; a folder is a folder, but say no
        // to anything else that appeared.
        if (await lstat(target).catch(() => undefined)) throw new Error('appeared meanwhile');
        await rename(stage, target);
      } else {
        // link() refuses an existing target, so nobody's file is ever replaced.
        await link(stage, target);
        await unlink(stage);
      }
    } catch {
      // Not creatable by the worker (a read-only folder, a parent that is a file, a race with
      // someone who made it first): then the sandbox, which runs as the same user with less
      // power, cannot create it either, or it exists now and is mounted as it is.
      await rm(stage, { recursive: true, force: true }).catch(() => {});
      return [];
    } finally {
      staging.delete(stage);
    }
    const made: string[] = [];
    for (const { path: each, placeholder: kind } of tree) {
      const info = await lstat(each).catch(() => undefined);
      if (!info) continue;
      this.held.set(each, { count: 1, dev: info.dev, ino: info.ino, placeholder: kind });
      made.push(each);
    }
    return made;
  }

  private async releaseAll(paths: string[]): Promise<void> {
    const done: Array<[string, Held]> = [];
    for (const target of paths) {
      const held = this.held.get(target);
      if (!held || --held.count > 0) continue;
      this.held.delete(target);
      done.push([target, held]);
    }
    await removeStandIns(
      done.map(([target, held]) => ({ target, held })),
      (target) => this.held.has(target),
    );
  }

  /**
   * Remove what a command whose worker died left of the placeholders made for it (`paths`, from
   * its journal record), once the command has ended: those no command of this process holds now,
   * and only while still exactly what a worker put there.
   */
  releaseLeftovers(paths: readonly string[]): Promise<void> {
    return this.serially(async () => {
      for (const target of paths) await sweepAround(target);
      const items: Array<{ target: string; held?: Held }> = paths
        .filter((target) => !this.held.has(target))
        .map((target) => ({ target }));
      await removeStandIns(items, (target) => this.held.has(target));
    });
  }
}

function depth(target: string): number {
  return target.split(path.sep).length;
}

/**
 * Remove stand-ins, outermost first: a `.git` stand-in goes whole, with its `hooks` and `config`,
 * by a rename out of the way and then a delete, so a worker killed on the way leaves either the
 * whole stamped stand-in or a staging entry, never a half. One that holds a stand-in somebody
 * still holds stays. Removing an entry changes its folder's mtime, so a folder that is a stand-in
 * somebody holds is stamped again.
 */
async function removeStandIns(
  items: Array<{ target: string; held?: Held }>,
  heldNow: (target: string) => boolean,
): Promise<void> {
  const removed: string[] = [];
  const within = (target: string, dir: string) => target.startsWith(dir + path.sep);
  const kept = new Set(items.map((item) => item.target));
  for (const { target, held } of [...items].sort((a, b) => depth(a.target) - depth(b.target))) {
    if (removed.some((dir) => within(target, dir))) continue;
    const info = await lstat(target).catch(() => undefined);
    if (!info) continue;
    const ours = held ? await stillOurs(target, held, info) : await isLeftover(target, info);
    if (!ours || (info.isDirectory() && (await holdsHeld(target, heldNow)))) continue;
    if (!(await removeEntry(target, info))) continue;
    removed.push(target);
    kept.delete(target);
    const parent = path.dirname(target);
    // The parent is a stand-in too (of this removal, or one another command still holds).
    if (kept.has(parent) || heldNow(parent)) await utimes(parent, 0, 0).catch(() => {});
  }
}

/** Whether a stand-in somebody still holds lies inside `dir`. */
async function holdsHeld(dir: string, heldNow: (target: string) => boolean): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const child = path.join(dir, entry.name);
    if (heldNow(child) || (entry.isDirectory() && (await holdsHeld(child, heldNow)))) return true;
  }
  return false;
}

/** Take one stand-in away: a folder with entries is renamed aside first, then deleted. */
async function removeEntry(target: string, info: Awaited<ReturnType<typeof lstat>>): Promise<boolean> {
  const succeeded = (step: Promise<unknown>) =>
    step.then(
      () => true,
      () => false,
    );
  if (!info.isDirectory()) return succeeded(unlink(target));
  if ((await readdir(target).catch(() => ['?'])).length === 0) return succeeded(rmdir(target));
  const stage = stagingName(path.dirname(target));
  try {
    if (!(await succeeded(rename(target, stage)))) return false;
    await rm(stage, { recursive: true, force: true }).catch(() => {});
    return true;
  } finally {
    staging.delete(stage);
  }
}

/** A leftover without this process's record of it: stamped, and a stamped tree or a tiny file. */
async function isLeftover(target: string, info: Awaited<ReturnType<typeof lstat>>): Promise<boolean> {
  if (Number(info.mtimeMs) !== 0) return false;
  if (info.isDirectory()) return isStampedTree(target);
  // Every file placeholder is a line or two of text (`.git/commondir`, `.git/config`).
  return info.isFile() && info.size <= 1024;
}

/** The very stand-in this process made or adopted, still exactly as it was left. */
async function stillOurs(target: string, held: Held, now: Awaited<ReturnType<typeof lstat>>): Promise<boolean> {
  return now.dev === held.dev && now.ino === held.ino && isOurs(target, held.placeholder, now);
}

/** Staging names of stand-ins being made or taken away, beside their place. */
const STAGING_PREFIX = '.durable-agent-stand-in.';
/** The staging entries of this process in flight: never swept. */
const staging = new Set<string>();
let staged = 0;

function stagingName(dir: string): string {
  const name = path.join(dir, `${STAGING_PREFIX}${process.pid}.${++staged}`);
  staging.add(name);
  return name;
}

/**
 * Make `tree` (a stand-in, and the stand-ins inside it when it is a folder) at `stage`, where
 * `root` would go, and stamp every entry, innermost first (adding an entry changes a folder's
 * mtime; stamping one does not).
 */
async function buildStaged(stage: string, root: string, tree: readonly WantedPlaceholder[]): Promise<void> {
  const at = (target: string) => path.join(stage, path.relative(root, target));
  for (const { path: target, placeholder } of [...tree].sort((a, b) => depth(a.path) - depth(b.path))) {
    if (placeholder.type === 'directory') await mkdir(at(target));
    else await writeFile(at(target), placeholder.content, { flag: 'wx' });
  }
  for (const { path: target } of [...tree].sort((a, b) => depth(b.path) - depth(a.path))) {
    await utimes(at(target), 0, 0);
  }
}

/**
 * Remove the staging entries a killed worker left beside `target` and inside it: those of a
 * process that is gone, or of this one from before and not in flight now. Only what a stand-in
 * could be goes (folders and small files, a few of them); anything else that bears the name is
 * left alone.
 */
async function sweepAround(target: string): Promise<void> {
  for (const dir of [path.dirname(target), target]) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(STAGING_PREFIX)) continue;
      const entry = path.join(dir, name);
      if (staging.has(entry)) continue;
      const pid = Number(name.slice(STAGING_PREFIX.length).split('.')[0]);
      if (pid !== process.pid && Number.isSafeInteger(pid) && pid > 0 && isProcessAlive(pid)) continue;
      if (await looksStaged(entry, 0)) await rm(entry, { recursive: true, force: true }).catch(() => {});
    }
  }
}

async function looksStaged(entry: string, level: number): Promise<boolean> {
  const info = await lstat(entry).catch(() => undefined);
  if (!info) return false;
  if (info.isFile()) return info.size <= 1024;
  if (!info.isDirectory() || level > 3) return false;
  const names = await readdir(entry).catch(() => undefined);
  if (!names || names.length > 16) return false;
  for (const name of names) if (!(await looksStaged(path.join(entry, name), level + 1))) return false;
  return true;
}

/** Still exactly what a worker put there: stamped, and empty (or holding the placeholder's text). */
async function isOurs(
  target: string,
  placeholder: Placeholder,
  info: Awaited<ReturnType<typeof lstat>>,
): Promise<boolean> {
  if (Number(info.mtimeMs) !== 0) return false;
  if (placeholder.type === 'directory') return info.isDirectory() && (await isStampedTree(target));
  return info.isFile() && (await readFile(target, 'utf8').catch(() => undefined)) === placeholder.content;
}

/**
 * A stamped folder holding nothing but stamped placeholders (a `.git` stand-in with its
 * `.git/hooks` and `.git/config` in it): a worker's, since anything written into a folder changes
 * its mtime.
 */
async function isStampedTree(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return false;
  for (const entry of entries) {
    const child = path.join(dir, entry.name);
    const info = await lstat(child).catch(() => undefined);
    if (!info || Number(info.mtimeMs) !== 0) return false;
    if (info.isDirectory() ? !(await isStampedTree(child)) : !info.isFile() || info.size > 1024) return false;
  }
  return true;
}
