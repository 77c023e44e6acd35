/**
 * The chaos jobs' processes, found by the marker (the run's tag) in their command lines: listed at
 * a kill, waited for by a kill aimed at a side-effecting Bash, and waited for (then SIGKILLed) at the
 * end of a phase.
 */
import fs from 'node:fs';
import { liveProcesses } from '../jobs';
import { sleep } from './sleep';

/** The command lines of live processes that hold `marker`, but for the sandbox's own wrapper. */
export function commandLines(marker: string): string[] {
  const lines: string[] = [];
  for (const pid of liveProcesses(marker)) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (!argv[0]?.endsWith('bwrap')) lines.push(argv.at(-1) ?? '');
    } catch {
      // ended meanwhile
    }
  }
  return [...new Set(lines)];
}

/** Resolve once a process holding `marker` runs, after `timeoutMs`, or when `signal` aborts. */
export async function untilCommandRuns(marker: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (commandLines(marker).length === 0 && Date.now() < deadline && !signal.aborted) await sleep(100, signal);
}

/** Wait up to `timeoutMs` for every process whose command line holds `marker` to end; then SIGKILL the rest. */
export async function waitForProcesses(marker: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (liveProcesses(marker).length > 0 && Date.now() < deadline) await sleep(200);
  for (const pid of liveProcesses(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
}
