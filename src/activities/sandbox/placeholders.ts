import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { link, lstat, mkdir, readdir, readFile, rename, rm, rmdir, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isProcessAlive } from '../../client/free-port';
import { GIT_DIR_PROTECTED_ENTRIES, type Placeholder } from './defaults';

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
 * `hooks` and `config`) and then renamed or linked into place; a folder with stand-ins in it
 * leaves by being renamed to a staging name first. What a killed worker leaves is then a whole
 * stamped stand-in (known again, as above) or a staging entry, which the next command there
 * sweeps away. One window stays: a stand-in folder another command holds is stamped again after
 * each change inside it, and a kill in between leaves it unstamped; the journal names it, and
 * `releaseLeftovers` takes a folder it names back as long as it holds nothing but stand-ins.
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
    const changes = new Changes();
    const paths: string[] = [];
    const leftovers: string[] = [];
    for (const target of present) {
      if (wanted.some((item) => item.path === target)) continue;
      const held = this.held.get(target);
      if (held) {
        held.count++;
        paths.push(target);
      } else {
        leftovers.push(target);
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
    // Each path's file system calls wait on the last; different paths go side by side, which
    // takes a command with a dozen stand-ins from one round trip per call to a few in all.
    const adopted = await allSettled(
      leftovers.map(async (target) => {
        await sweepAround(target, changes);
        return (await this.adoptLeftover(target)) ? [target] : [];
      }),
    );
    const made = await allSettled(
      byRoot(fresh, (item) => item.path).map(async (group) => {
        // Parents first: a missing `.git` is made whole, with the wanted `.git/hooks` in it.
        const done = new Set<string>();
        const held: string[] = [];
        for (const item of group) {
          if (done.has(item.path)) continue;
          const inside = group.filter((other) => other.path.startsWith(item.path + path.sep));
          for (const target of await this.adoptOrCreate(item, inside, changes)) {
            done.add(target);
            held.push(target);
          }
        }
        return held;
      }),
    );
    paths.push(...adopted.flat(), ...made.flat());
    await this.stampChanged(changes);
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
   * Adding or removing an entry changes a folder's mtime: a changed folder that is a stand-in
   * somebody holds (a `.git` made earlier, with a `.git/hooks` made in it now) is stamped again,
   * deepest first, or it would never be known as one.
   */
  private async stampChanged(changes: Changes): Promise<void> {
    for (const dir of [...changes.folders].sort((a, b) => depth(b) - depth(a))) {
      if (this.held.get(dir)?.placeholder.type === 'directory') await utimes(dir, 0, 0).catch(() => {});
    }
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
    else if (info.isFile() && info.size <= MAX_FILE_BYTES) {
      const content = await readFile(target, 'utf8').catch(() => undefined);
      if (content === undefined || !STAND_IN_CONTENTS.has(content)) return false;
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
  private async adoptOrCreate(
    item: WantedPlaceholder,
    inside: readonly WantedPlaceholder[],
    changes: Changes,
  ): Promise<string[]> {
    const { path: target, placeholder } = item;
    // Nothing can be staged inside a path that is not there: only its folder is swept then.
    const found = await lstat(target).catch(() => undefined);
    await sweepAround(target, changes, found?.isDirectory() ?? false);
    const before = found?.isDirectory() ? await lstat(target).catch(() => undefined) : found;
    if (before) {
      if (!(await isOurs(target, placeholder, before))) return [];
      this.held.set(target, { count: 1, dev: before.dev, ino: before.ino, placeholder });
      return [target];
    }
    const tree = placeholder.type === 'directory' ? [item, ...inside] : [item];
    const parent = path.dirname(target);
    let stage: string | undefined;
    try {
      stage = await buildStaged(parent, target, tree);
      changes.folders.add(parent);
      if (placeholder.type === 'directory') {
        // rename() would put it over an empty folder made meanwhile: say no to anything there.
        if (await lstat(target).catch(() => undefined)) throw new Error('appeared meanwhile');
        await rename(stage, target);
      } else {
        await putFile(stage, target, placeholder.content);
      }
    } catch {
      // Not creatable by the worker (a read-only folder, a parent that is a file, a race with
      // someone who made it first): then the sandbox, which runs as the same user with less
      // power, cannot create it either, or it exists now and is mounted as it is.
      if (stage) await rm(stage, { recursive: true, force: true }).catch(() => {});
      return [];
    } finally {
      if (stage) staging.delete(stage);
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
    const changes = new Changes();
    await removeStandIns(
      done.map(([target, held]) => ({ target, held })),
      (target) => this.held.has(target),
      changes,
    );
    await this.stampChanged(changes);
  }

  /**
   * Remove what a command whose worker died left of the placeholders made for it (`paths`, from
   * its journal record), once the command has ended: those no command of this process holds now,
   * and only while still what a worker put there. A folder it names goes even unstamped (a worker
   * killed while it changed the folder's content), as long as it holds nothing but stand-ins.
   */
  releaseLeftovers(paths: readonly string[]): Promise<void> {
    return this.serially(async () => {
      const changes = new Changes();
      for (const target of paths) await sweepAround(target, changes);
      const items: Array<{ target: string; held?: Held }> = paths
        .filter((target) => !this.held.has(target))
        .map((target) => ({ target }));
      await removeStandIns(items, (target) => this.held.has(target), changes);
      await this.stampChanged(changes);
    });
  }
}

/** The folders whose entries one operation changed, and those it already swept. */
class Changes {
  readonly folders = new Set<string>();
  readonly swept = new Set<string>();
}

function depth(target: string): number {
  return target.split(path.sep).length;
}

/** Every file placeholder is a line or two of text (`.git/commondir`, `.git/config`). */
const MAX_FILE_BYTES = 1024;

/** What a file stand-in holds: nothing, or what a git directory entry's stand-in holds. */
const STAND_IN_CONTENTS: ReadonlySet<string> = new Set([
  '',
  ...GIT_DIR_PROTECTED_ENTRIES.flatMap(({ placeholder }) => (placeholder.type === 'file' ? [placeholder.content] : [])),
]);

/**
 * Remove stand-ins, outermost first. A folder holding stand-ins goes whole (a `.git` stand-in with
 * its `hooks` and `config`): renamed out of the way, then deleted, so a worker killed on the way
 * leaves the whole stamped stand-in or a staging entry, never a half. A folder holding something
 * somebody still holds stays, and so does one holding anything that is not a stand-in.
 */
async function removeStandIns(
  items: Array<{ target: string; held?: Held }>,
  heldNow: (target: string) => boolean,
  changes: Changes,
): Promise<void> {
  // Paths under different roots go side by side; under one root, outermost first.
  await allSettled(
    byRoot(items, (item) => item.target).map(async (group) => {
      const removed: string[] = [];
      for (const { target, held } of group) {
        if (removed.some((dir) => target.startsWith(dir + path.sep))) continue;
        const info = await lstat(target).catch(() => undefined);
        if (!info) continue;
        const gone = await removeIfEmptyFolder(target, info, held);
        if (gone !== undefined) {
          if (gone) {
            removed.push(target);
            changes.folders.add(path.dirname(target));
          }
          continue;
        }
        const ours = held ? await stillOurs(target, held, info) : await isLeftover(target, info);
        if (!ours || (info.isDirectory() && (await holdsHeld(target, heldNow)))) continue;
        if (!(await removeEntry(target, info))) continue;
        removed.push(target);
        changes.folders.add(path.dirname(target));
      }
    }),
  );
}

/**
 * As `Promise.all`, but settles only once every one of `work` has: the first failure is thrown
 * then. With `Promise.all`, the others would still be changing the workspace after the queue that
 * keeps one command's stand-ins apart from the next had moved on.
 */
export async function allSettled<T>(work: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(work);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/**
 * `items` in groups that share nothing: each holds one outermost path and the paths inside it,
 * outermost first.
 */
function byRoot<T>(items: readonly T[], pathOf: (item: T) => string): T[][] {
  const groups: T[][] = [];
  const roots: string[] = [];
  for (const item of [...items].sort((a, b) => depth(pathOf(a)) - depth(pathOf(b)))) {
    const at = roots.findIndex((root) => pathOf(item) === root || pathOf(item).startsWith(root + path.sep));
    if (at >= 0) groups[at]!.push(item);
    else {
      roots.push(pathOf(item));
      groups.push([item]);
    }
  }
  return groups;
}

/**
 * The common case in one look: a stand-in folder that is still empty (nothing held, nothing
 * written in it) is removed at once. Whether it went; undefined when it is not such a folder (a
 * file, another inode, written into), for the whole check to decide.
 */
async function removeIfEmptyFolder(target: string, info: Stats, held: Held | undefined): Promise<boolean | undefined> {
  if (!info.isDirectory()) return undefined;
  if (held && (held.placeholder.type !== 'directory' || !sameStandIn(held, info))) return undefined;
  const names = await readdir(target).catch(() => undefined);
  if (names === undefined || names.length > 0) return undefined;
  // Something made in it meanwhile makes rmdir fail: then it stays.
  return rmdir(target).then(
    () => true,
    () => false,
  );
}

function sameStandIn(held: Held, now: Stats): boolean {
  return now.dev === held.dev && now.ino === held.ino && Number(now.mtimeMs) === 0;
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

/** Take one stand-in away: a folder with stand-ins in it is renamed aside first, then deleted. */
async function removeEntry(target: string, info: Stats): Promise<boolean> {
  const succeeded = (step: Promise<unknown>) =>
    step.then(
      () => true,
      () => false,
    );
  if (!info.isDirectory()) return succeeded(unlink(target));
  if ((await readdir(target).catch(() => ['?'])).length === 0) return succeeded(rmdir(target));
  const stage = stagingPath(path.dirname(target));
  try {
    if (!(await succeeded(rename(target, stage)))) return false;
    if (await looksStaged(stage, 0)) await rm(stage, { recursive: true, force: true }).catch(() => {});
    return true;
  } finally {
    staging.delete(stage);
  }
}

/**
 * A leftover the journal names, without this process's record of it: a stamped file of a stand-in's
 * size, or a folder holding nothing but stand-ins (stamped or not itself, see `releaseLeftovers`).
 */
async function isLeftover(target: string, info: Stats): Promise<boolean> {
  if (info.isDirectory()) return holdsOnlyStandIns(target);
  return Number(info.mtimeMs) === 0 && info.isFile() && info.size <= MAX_FILE_BYTES;
}

/** The very stand-in this process made or adopted, still exactly as it was left. */
async function stillOurs(target: string, held: Held, now: Stats): Promise<boolean> {
  return sameStandIn(held, now) && isOurs(target, held.placeholder, now);
}

/** Still what a worker put there: stamped, and holding only stand-ins (or the placeholder's text). */
async function isOurs(target: string, placeholder: Placeholder, info: Stats): Promise<boolean> {
  if (Number(info.mtimeMs) !== 0) return false;
  if (placeholder.type === 'directory') return info.isDirectory() && (await holdsOnlyStandIns(target));
  if (!info.isFile()) return false;
  // An empty stand-in with nothing in it needs no read (most are: `.bashrc`, `.mcp.json`, ...).
  if (placeholder.content === '') return info.size === 0;
  return (await readFile(target, 'utf8').catch(() => undefined)) === placeholder.content;
}

/**
 * A folder holding nothing but stamped stand-ins (a `.git` stand-in with its `.git/hooks` and
 * `.git/config` in it) and staging entries a dead worker left: anything written into a folder
 * changes its mtime, and a file a stand-in's content.
 */
async function holdsOnlyStandIns(dir: string): Promise<boolean> {
  const entries = await readdir(dir).catch(() => undefined);
  if (!entries) return false;
  for (const name of entries) {
    const child = path.join(dir, name);
    if (name.startsWith(STAGING_PREFIX)) {
      if (!(await isDeadStaging(child))) return false;
      continue;
    }
    const info = await lstat(child).catch(() => undefined);
    if (!info || Number(info.mtimeMs) !== 0) return false;
    if (info.isDirectory()) {
      if (!(await holdsOnlyStandIns(child))) return false;
    } else if (!(await isStandInFile(child, info))) return false;
  }
  return true;
}

async function isStandInFile(file: string, info: Stats): Promise<boolean> {
  if (!info.isFile() || info.size > MAX_FILE_BYTES) return false;
  const content = await readFile(file, 'utf8').catch(() => undefined);
  return content !== undefined && STAND_IN_CONTENTS.has(content);
}

/**
 * Staging names of stand-ins being made or taken away, beside their place: the worker's pid (so a
 * dead worker's are known) and a random part (so nothing put there beforehand is in the way).
 */
const STAGING_PREFIX = '.durable-agent-stand-in.';
/** This process's staging entries in flight: never swept. */
const staging = new Set<string>();

function stagingPath(dir: string): string {
  const name = path.join(dir, `${STAGING_PREFIX}${process.pid}.${randomBytes(6).toString('hex')}`);
  staging.add(name);
  return name;
}

/**
 * Make `tree` (a stand-in, and the stand-ins inside it when it is a folder) under a fresh staging
 * name in `dir`, where `root` is to go, and stamp every entry, innermost first (adding an entry
 * changes a folder's mtime; stamping one does not). Returns the staging path.
 */
async function buildStaged(dir: string, root: string, tree: readonly WantedPlaceholder[]): Promise<string> {
  const [top, ...rest] = [...tree].sort((a, b) => depth(a.path) - depth(b.path));
  if (!top) throw new Error('nothing to make');
  const make = ({ placeholder }: WantedPlaceholder, at: string) =>
    placeholder.type === 'directory' ? mkdir(at) : writeFile(at, placeholder.content, { flag: 'wx' });
  let stage: string | undefined;
  for (let attempt = 1; !stage; attempt++) {
    const candidate = stagingPath(dir);
    try {
      await make(top, candidate);
      stage = candidate;
    } catch (error) {
      staging.delete(candidate);
      // Somebody's entry under that name: another name, never theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw error;
    }
  }
  const at = (target: string) => path.join(stage, path.relative(root, target));
  for (const item of rest) await make(item, at(item.path));
  for (const { path: target } of [...tree].sort((a, b) => depth(b.path) - depth(a.path))) {
    await utimes(at(target), 0, 0);
  }
  return stage;
}

/**
 * Put a staged, stamped file at `target`: a hard link, which refuses an existing target, so
 * nobody's file is ever replaced. Where the filesystem has no hard links, the file is written in
 * place and stamped, as before staging.
 */
async function putFile(stage: string, target: string, content: string): Promise<void> {
  try {
    await link(stage, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw error;
    await writeFile(target, content, { flag: 'wx' });
    await utimes(target, 0, 0);
  }
  await unlink(stage).catch(() => {});
}

/**
 * Remove the staging entries a killed worker left beside `target` and inside it: those of a
 * process that is gone, or of this one and not in flight. Only what a stand-in could be goes;
 * anything else that bears the name is left alone.
 */
async function sweepAround(target: string, changes: Changes, inside = true): Promise<void> {
  for (const dir of inside ? [path.dirname(target), target] : [path.dirname(target)]) {
    if (changes.swept.has(dir)) continue;
    changes.swept.add(dir);
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(STAGING_PREFIX)) continue;
      const entry = path.join(dir, name);
      if (!(await isDeadStaging(entry))) continue;
      await rm(entry, { recursive: true, force: true }).catch(() => {});
      changes.folders.add(dir);
    }
  }
}

/** A staging entry no live process is working on, shaped as a stand-in (being) made. */
async function isDeadStaging(entry: string): Promise<boolean> {
  if (staging.has(entry)) return false;
  const pid = Number(path.basename(entry).slice(STAGING_PREFIX.length).split('.')[0]);
  if (pid !== process.pid && Number.isSafeInteger(pid) && pid > 0 && isProcessAlive(pid)) return false;
  return looksStaged(entry, 0);
}

/** Folders and stand-in files (stamped or not yet), a few, not deep: what staging ever holds. */
async function looksStaged(entry: string, level: number): Promise<boolean> {
  const info = await lstat(entry).catch(() => undefined);
  if (!info) return false;
  if (!info.isDirectory()) return isStandInFile(entry, info);
  if (level > 3) return false;
  const names = await readdir(entry).catch(() => undefined);
  if (!names || names.length > 16) return false;
  for (const name of names) if (!(await looksStaged(path.join(entry, name), level + 1))) return false;
  return true;
}
