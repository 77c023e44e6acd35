import { lstat, mkdir, readdir, readFile, rmdir, unlink, utimes, writeFile } from 'node:fs/promises';
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
    return this.serially(async () => {
      const paths: string[] = [];
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
      const made = await Promise.all(fresh.map((item) => this.adoptOrCreate(item)));
      paths.push(...fresh.filter((_, index) => made[index]).map((item) => item.path));
      let released = false;
      return {
        paths,
        release: () => {
          if (released) return Promise.resolve();
          released = true;
          return this.serially(() => this.releaseAll(paths));
        },
      };
    });
  }

  // One worker's commands in one workspace may start and end side by side.
  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
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
    await Promise.all(done.map(([target, held]) => removeIfOurs(target, held)));
  }
}

async function removeIfOurs(target: string, held: Held): Promise<void> {
  const now = await lstat(target).catch(() => undefined);
  if (!now || now.dev !== held.dev || now.ino !== held.ino || !(await isOurs(target, held.placeholder, now))) return;
  await (held.placeholder.type === 'directory' ? rmdir(target) : unlink(target)).catch(() => undefined);
}

/** Still exactly what a worker put there: stamped, and empty (or holding the placeholder's text). */
async function isOurs(
  target: string,
  placeholder: Placeholder,
  info: Awaited<ReturnType<typeof lstat>>,
): Promise<boolean> {
  if (Number(info.mtimeMs) !== 0) return false;
  if (placeholder.type === 'directory') {
    return info.isDirectory() && (await readdir(target).catch(() => ['?'])).length === 0;
  }
  return info.isFile() && (await readFile(target, 'utf8').catch(() => undefined)) === placeholder.content;
}
