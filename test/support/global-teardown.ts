import fs from 'node:fs';
import { RUN_TMP_VAR } from './run-tmp';

/**
 * Stop what the run left running, then remove the run's temp folder (`global-setup.ts`).
 *
 * Tests stop what they start; one that fails half-way may not, and a detached embedded server or
 * worker would outlive the run (holding a port, writing into a folder about to go). Every process
 * the run started carries the run's own `TMPDIR` in its environment, and nothing else on the
 * machine does, so that is how they are told apart: nothing of another run or of the user's is
 * touched. Jest's own workers are left to Jest.
 */
export default async function globalTeardown(): Promise<void> {
  const runTmp = process.env[RUN_TMP_VAR];
  if (!runTmp) return;
  const leftovers = processesOfRun(runTmp);
  if (leftovers.length > 0) {
    console.warn(`stopping ${leftovers.length} process(es) the test run left running: ${leftovers.join(', ')}`);
    for (const pid of leftovers) signal(pid, 'SIGKILL');
  }
  try {
    fs.rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    // A test failure says more than this; the run's verdict does not hang on it.
    console.warn(`could not remove the test run's temp folder ${runTmp}: ${(err as Error).message}`);
  }
}

function processesOfRun(runTmp: string): number[] {
  const marker = `\0TMPDIR=${runTmp}\0`;
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return []; // no /proc (not Linux): the folder is still removed
  }
  const pids: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = `\0${fs.readFileSync(`/proc/${pid}/environ`, 'latin1')}`;
      if (!environ.includes(marker)) continue;
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      if (cmdline.includes('jest-worker')) continue;
      pids.push(pid);
    } catch {
      // gone already, or not ours to read
    }
  }
  return pids;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}
