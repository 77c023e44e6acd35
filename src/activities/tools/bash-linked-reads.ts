import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { readBashCommand, readsOfProgram, type BashRead } from '../../shared/shell';
import type { ReadDenyGuard } from './read-deny';

/**
 * The permission engine decides on the paths a Bash command names. A symbolic link inside the
 * workspace (`s -> secrets/key`, a folder linked to `~/.ssh`) looks like any other file to it, so
 * `cat s` passed as read-only where `cat secrets/key` was denied. Before a command runs, this
 * looks at what it really reads: each file a known reading program (`cat`, `grep`, `rg`, ...)
 * names, resolved; each entry a glob in it may match; and, for `grep -R` and `rg -L`, each link
 * below the folders it searches. A link into a place a `Read(...)` deny rule covers refuses the
 * command.
 *
 * This checks the files before the command opens them by name. A link swapped in between needs a
 * second command running at the same time; that command was approved by a rule or mode that
 * could have let it read the file itself, and the OS sandbox still hides the denied places outside
 * the workspace. git is left out: it reads contents from its own store, never through a link.
 */

/** Entries looked at for one command's globs and followed trees, at most. */
export const LINK_CHECK_LIMIT = 20_000;

/** Why `command` may not run under `guard`'s rules, or undefined when none of its reads leads into a denied place. */
export async function linkedReadRefusal(
  command: string,
  workspace: string,
  guard: ReadDenyGuard,
): Promise<string | undefined> {
  const home = safeHomeDir();
  const reads: BashRead[] = [];
  for (const invocation of readBashCommand(command).invocations) {
    if (invocation.program === undefined || invocation.program === 'git') continue;
    const found = readsOfProgram(invocation.program, invocation.words.slice(1), {
      workspace,
      ...(home === undefined ? {} : { homeDir: home }),
    });
    reads.push(...(found ?? []));
  }
  const budget = { left: LINK_CHECK_LIMIT };
  for (const read of reads) {
    const why = read.glob === undefined ? await checkNamed(read, guard) : await checkGlob(read, guard, budget);
    if (why !== undefined) return refusal(why, workspace);
    if (read.follows === true) {
      const inTree = await checkFollowedTree(read.path, guard, budget);
      if (inTree !== undefined) return refusal(inTree, workspace);
    }
  }
  return undefined;
}

interface Finding {
  /** The name the command reads (a path, absolute). */
  name: string;
  rule: string;
  /** Set when the check gave up, with why. */
  tooMany?: boolean;
}

function refusal(finding: Finding, workspace: string): string {
  const relative = path.relative(workspace, finding.name);
  const shown = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : finding.name;
  if (finding.tooMany) {
    return `Permission to use Bash was denied: the command reads more than ${LINK_CHECK_LIMIT} entries below ${shown} through globs or followed links, too many to check against the rule ${finding.rule} in permissions.deny. Name the files, or search a smaller folder (grep -r and rg without -L do not follow links).`;
  }
  return `Permission to use Bash was denied: the command reads ${shown}, which leads (through a symbolic link) to a place the rule ${finding.rule} in permissions.deny covers. Read rules are checked on the path a file really leads to.`;
}

/** A path the command names: the place it leads to, and for a tree, whether a rule may cover anything below. */
async function checkNamed(read: BashRead, guard: ReadDenyGuard): Promise<Finding | undefined> {
  const rule = await ruleForTarget(read.path, read.tree, guard, read.written);
  return rule === undefined ? undefined : { name: read.path, rule };
}

/**
 * The rule covering where `name` really leads, when its name alone is not covered: the workflow
 * already decided on the names, and a tree it only saw as "may hold a denied file" stays its call.
 */
async function ruleForTarget(
  name: string,
  tree: boolean,
  guard: ReadDenyGuard,
  written = name,
): Promise<string | undefined> {
  // As written: `a/b/../x` goes through `a/b`, which may be a link, where `a/x` would not.
  const real = await realpath(written).catch(() => undefined);
  // A name that leads nowhere reads nothing (the command will say so).
  if (real === undefined || real === name) return undefined;
  const ruleFor = (place: string) => (tree ? guard.ruleForTree(place) : guard.ruleForPath(place));
  return ruleFor(name) === undefined ? ruleFor(real) : undefined;
}

/**
 * A glob: every entry at each level its pattern walks below the literal prefix (a superset of
 * what it matches, which needs no second reading of bash's matching rules). A link among them
 * that leads into a denied place refuses the command.
 */
async function checkGlob(read: BashRead, guard: ReadDenyGuard, budget: { left: number }): Promise<Finding | undefined> {
  const prefixRule = await ruleForTarget(read.path, true, guard, read.written);
  if (prefixRule !== undefined) return { name: read.path, rule: prefixRule };
  const depth = (read.glob as string).split('/').length - read.path.split('/').filter(Boolean).length - 1;
  let level = [await realpath(read.written ?? read.path).catch(() => read.path)];
  for (let d = 1; d <= depth && level.length > 0; d++) {
    const next: string[] = [];
    for (const directory of level) {
      const entries = await listing(directory);
      budget.left -= entries.length;
      if (budget.left < 0) return { name: read.path, rule: guard.firstRule, tooMany: true };
      for (const entry of entries) {
        const name = path.join(directory, entry.name);
        if (entry.isSymbolicLink()) {
          const rule = await ruleForTarget(name, true, guard);
          if (rule !== undefined) return { name, rule };
        }
        if (d < depth && (entry.isDirectory() || (entry.isSymbolicLink() && (await isDirectory(name)))))
          next.push(name);
      }
    }
    level = next;
  }
  return undefined;
}

/** `grep -R`, `rg -L`: every link below `root`, followed as the program would, with each place visited once. */
async function checkFollowedTree(
  root: string,
  guard: ReadDenyGuard,
  budget: { left: number },
): Promise<Finding | undefined> {
  const start = await realpath(root).catch(() => undefined);
  if (start === undefined) return undefined;
  const seen = new Set<string>([start]);
  const pending = [start];
  for (let directory = pending.pop(); directory !== undefined; directory = pending.pop()) {
    const entries = await listing(directory);
    budget.left -= entries.length;
    if (budget.left < 0) return { name: root, rule: guard.firstRule, tooMany: true };
    for (const entry of entries) {
      const name = path.join(directory, entry.name);
      if (entry.isDirectory()) {
        pending.push(name);
        continue;
      }
      if (!entry.isSymbolicLink()) continue;
      const rule = await ruleForTarget(name, true, guard);
      if (rule !== undefined) return { name, rule };
      const real = await realpath(name).catch(() => undefined);
      if (real !== undefined && !seen.has(real) && (await isDirectory(real))) {
        seen.add(real);
        pending.push(real);
      }
    }
  }
  return undefined;
}

async function listing(directory: string): Promise<Dirent[]> {
  return readdir(directory, { withFileTypes: true }).catch(() => []);
}

async function isDirectory(name: string): Promise<boolean> {
  return stat(name).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

function safeHomeDir(): string | undefined {
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}
