import { lstat, mkdir, readdir, readFile, rmdir, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
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
      } else if (await this.adoptLeftover(target)) {
        paths.push(target);
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
    for (const item of ordered) {
      if (!(await this.adoptOrCreate(item))) continue;
      paths.push(item.path);
      // A stand-in made inside one another command holds (a `.git/hooks` in a `.git` made
      // earlier) changed that folder's mtime: stamp it again, or it is never known as ours.
      const parent = path.dirname(item.path);
      if (this.held.get(parent)?.placeholder.type === 'directory') await utimes(parent, 0, 0).catch(() => {});
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

  private async adoptOrCreate({ path: target, placeholder }: WantedPlaceholder): Promise<boolean> {
    const before = await lstat(target).catch(() => undefined);
    if (before) {
      if (!(await isOurs(target, placeholder, before))) return false;
      this.held.set(target, { count: 1, dev: before.dev, ino: before.ino, placeholder });
      return true;
    }
    try {
      if (placeholder.type === 'directory') await mkdir(target);
      else await writeFile(target, placeholder.content, { flag: 'wx' });
      await utimes(target, 0, 0);
      const made = await lstat(target);
      this.held.set(target, { count: 1, dev: made.dev, ino: made.ino, placeholder });
      return true;
    } catch {
      // Not creatable by the worker (a read-only folder, a parent that is a file, a race with
      // someone who made it first): then the sandbox, which runs as the same user with less
      // power, cannot create it either, or it exists now and is mounted as it is.
      return false;
    }
  }

  private async releaseAll(paths: string[]): Promise<void> {
    const done: Array<[string, Held]> = [];
    for (const target of paths) {
      const held = this.held.get(target);
      if (!held || --held.count > 0) continue;
      this.held.delete(target);
      done.push([target, held]);
    }
    await removeDeepestFirst(
      done.map(([target, held]) => ({ target, held })),
      (parent) => this.held.has(parent),
    );
  }

  /**
   * Remove what a command whose worker died left of the placeholders made for it (`paths`, from
   * its journal record), once the command has ended: those no command of this process holds now,
   * and only while still exactly what a worker put there.
   */
  releaseLeftovers(paths: readonly string[]): Promise<void> {
    return this.serially(async () => {
      const items: Array<{ target: string; held?: Held }> = paths
        .filter((target) => !this.held.has(target))
        .map((target) => ({ target }));
      await removeDeepestFirst(items, (parent) => this.held.has(parent));
    });
  }
}

function depth(target: string): number {
  return target.split(path.sep).length;
}

/**
 * Remove placeholders children first, so a `.git` placeholder goes once its `.git/hooks` has; each
 * removal changes the parent's mtime, so a parent that is a stand-in too is stamped again.
 */
async function removeDeepestFirst(
  items: Array<{ target: string; held?: Held }>,
  heldElsewhere: (parent: string) => boolean,
): Promise<void> {
  const targets = new Set(items.map((item) => item.target));
  for (const { target, held } of [...items].sort((a, b) => depth(b.target) - depth(a.target))) {
    const removed = held ? await removeIfOurs(target, held) : await removeIfStamped(target);
    const parent = path.dirname(target);
    // The parent is a stand-in too (of this removal, or one another command still holds).
    if (removed && (targets.has(parent) || heldElsewhere(parent))) await utimes(parent, 0, 0).catch(() => {});
  }
}

/** A leftover without this process's record of it: removed when stamped and empty (or tiny). */
async function removeIfStamped(target: string): Promise<boolean> {
  const info = await lstat(target).catch(() => undefined);
  if (!info || Number(info.mtimeMs) !== 0) return false;
  if (info.isDirectory()) {
    if ((await readdir(target).catch(() => ['?'])).length > 0) return false;
    return rmdir(target).then(
      () => true,
      () => false,
    );
  }
  // Every file placeholder is a line or two of text (`.git/commondir`, `.git/config`).
  if (!info.isFile() || info.size > 1024) return false;
  return unlink(target).then(
    () => true,
    () => false,
  );
}

async function removeIfOurs(target: string, held: Held): Promise<boolean> {
  const now = await lstat(target).catch(() => undefined);
  if (!now || now.dev !== held.dev || now.ino !== held.ino || !(await isOurs(target, held.placeholder, now))) {
    return false;
  }
  return (held.placeholder.type === 'directory' ? rmdir(target) : unlink(target)).then(
    () => true,
    () => false,
  );
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
