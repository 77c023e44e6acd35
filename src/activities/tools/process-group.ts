import { readdir, readFile } from 'node:fs/promises';

/** Send SIGKILL to every process in the group led by `pid`; a group already gone is fine. */
export function killProcessGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Resolve once no process of the group led by `pid` is still running, or after `maxWaitMs`.
 * Zombies count as gone: where nobody reaps orphans (a container whose PID 1 is not an init)
 * they stay in the group forever, yet run nothing.
 */
export async function waitForProcessGroupExit(pid: number, maxWaitMs = 2000, pollMs = 20): Promise<void> {
  const deadline = Date.now() + maxWaitMs;
  while (Date.now() < deadline) {
    if (!(await groupIsRunning(pid))) return;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

export async function groupIsRunning(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  // The group still has members; on Linux, look whether any of them is more than a zombie.
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after "pid (comm) ": state ppid pgrp ...; comm may itself contain ") ".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
  }
  return false;
}

/**
 * Every command's processes inherit this variable, with a value of its own: a process that left
 * the command's group (`setsid`, a daemon's double fork) still carries it, so a kill can find it.
 */
export const COMMAND_MARK_ENV = 'DURABLE_AGENT_COMMAND_MARK';

/**
 * SIGKILL every process whose environment carries `mark` (see {@link COMMAND_MARK_ENV}), looking
 * again until a look finds none, for at most `maxWaitMs`: a process forking meanwhile hands the
 * mark on, and the next look finds the child. Processes of other users, which this one may not
 * read, are not looked at; nor is a process that dropped the variable from its environment.
 */
export async function killMarked(mark: string, maxWaitMs = 2000): Promise<void> {
  const needle = Buffer.from(`${COMMAND_MARK_ENV}=${mark}\0`);
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    const found = await markedProcesses(needle);
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    if (found.length === 0 || Date.now() >= deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `/proc/<pid>/environ` files read at once when looking for a mark. */
const MARK_SCAN_BATCH = 16;

async function markedProcesses(needle: Buffer): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  const pids = entries.filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid);
  // A few at a time: a burst of opens must not take the descriptors other activities need.
  for (let i = 0; i < pids.length; i += MARK_SCAN_BATCH) {
    await Promise.all(
      pids.slice(i, i + MARK_SCAN_BATCH).map(async (entry) => {
        // A zombie's environment reads empty: it runs nothing and is not found.
        const environ = await readFile(`/proc/${entry}/environ`).catch(() => undefined);
        if (environ === undefined) return;
        const at = environ.indexOf(needle);
        if (at === 0 || (at > 0 && environ[at - 1] === 0)) found.push(Number(entry));
      }),
    );
  }
  return found;
}
