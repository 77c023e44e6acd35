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
