/**
 * An abort stops the running tools before the job's Terminal is written, with the production
 * timeouts (30 s tool heartbeat timeout): the cancellation reaches a running Bash within about a
 * second, its whole process group is dead when the Terminal arrives, and a side effect the command
 * would have had later never happens. Real Temporal dev server, in-process worker, the real
 * Anthropic SDK against the scripted model server.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { ScriptedSession } from '../src/model-server';
import { abortSignal } from '../src/workflows/definitions';
import { spawnerPid } from '../src/worker/spawner';
import { waitFor } from './support/harness';
import {
  isAlive,
  scriptedJobSuite,
  textReply,
  toolResultFor,
  toolUse,
  waitForSnapshot,
  terminalOf,
} from './support/jobs';

/** State, parent and process group of `pid` from /proc, or undefined once it is gone. */
function procStat(pid: number): { state: string; ppid: number; pgrp: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return { state: state ?? '', ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
}

/** True while the process group `pgid` has a member that is more than a zombie. */
function groupRunning(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
  }
  return false;
}

/** The live process whose command line is exactly `argv`. */
function processWithArgs(argv: string[]): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = (() => {
      try {
        return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    })();
    if (cmdline === `${argv.join('\0')}\0` && isAlive(Number(entry))) return Number(entry);
  }
  return undefined;
}

/**
 * The process this worker had started for the command, the leader of the group an abort kills:
 * the worker's command helper starts it (the worker itself when there is no helper).
 */
function groupLeaderOf(pid: number): number {
  const starters = [process.pid, spawnerPid()];
  let current = pid;
  for (;;) {
    const stat = procStat(current);
    if (!stat) throw new Error(`process ${current} is gone`);
    if (starters.includes(stat.ppid)) return current;
    if (stat.ppid <= 1) throw new Error(`process ${pid} was not started by this worker`);
    current = stat.ppid;
  }
}

/** Milliseconds since epoch of the running tool activity's last heartbeat the server recorded. */
async function lastHeartbeat(handle: WorkflowHandle): Promise<number | undefined> {
  const description = await handle.describe();
  const pending = description.raw.pendingActivities ?? [];
  const time = pending.find((a) => a.activityId?.startsWith('tool-'))?.lastHeartbeatTime;
  return time ? Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : undefined;
}

/** Resolve just after the server recorded a new heartbeat of the tool: the next is as far off as it gets. */
async function justAfterHeartbeat(handle: WorkflowHandle): Promise<void> {
  const first = await waitFor(() => lastHeartbeat(handle), 10_000, 'a first heartbeat');
  await waitFor(
    async () => ((await lastHeartbeat(handle)) ?? first) > first || undefined,
    10_000,
    'the next heartbeat',
  );
}

/** Poll until the group and the command are gone; resolves with when that was seen. */
function watchDeath(leader: number, command: number): Promise<number> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (groupRunning(leader) || isAlive(command)) return;
      clearInterval(timer);
      resolve(Date.now());
    }, 10);
  });
}

describe('abort waits for the tools to stop (production timeouts)', () => {
  const { withJob } = scriptedJobSuite();
  // Production timeouts: no `timeouts` in the job's input.
  const input = { timeouts: undefined };

  for (const how of ['abort signal', 'Temporal cancellation'] as const) {
    test(`${how}: Terminal only after the Bash process group is dead, within seconds, no late side effect`, async () => {
      // A unique duration names the process: inside the sandbox's PID namespace $$ is not a host pid.
      const duration = how === 'abort signal' ? '30.0731' : '30.0732';
      const session: ScriptedSession = {
        replies: [
          {
            content: [
              { type: 'text', text: 'Appending a line later.' },
              toolUse('toolu_late', 'Bash', { command: `sleep ${duration}; echo late >> effects.log` }),
            ],
          },
          textReply('never reached'),
        ],
      };
      await withJob(`abort-waits-${how.split(' ')[0]}`, { session, input }, async ({ handle, workspace, server }) => {
        await waitForSnapshot(handle, (s) => s.runningTools.some((t) => t.toolUseId === 'toolu_late'), 'Bash to start');
        const sleep = await waitFor(async () => processWithArgs(['sleep', duration]), 10_000, 'the sleep process');
        const leader = groupLeaderOf(sleep);
        const sleepGroup = procStat(sleep)?.pgrp ?? leader;
        const died = watchDeath(leader, sleep);

        // Right after a heartbeat: the cancellation has to wait for the next one, the worst case.
        await justAfterHeartbeat(handle);
        const abortedAt = Date.now();
        if (how === 'abort signal') await handle.signal(abortSignal, 'stop now');
        else await handle.cancel();
        const terminal = await terminalOf(handle);
        const terminalAt = Date.now();

        // When the Terminal arrives, nothing the command started is still running.
        expect({ group: groupRunning(leader), sleepGroup: groupRunning(sleepGroup), sleep: isAlive(sleep) }).toEqual({
          group: false,
          sleepGroup: false,
          sleep: false,
        });
        const diedAt = await died;
        expect(diedAt).toBeLessThanOrEqual(terminalAt);
        // The abort reached the command within 2 s (one heartbeat), the Terminal came seconds later at most.
        expect(diedAt - abortedAt).toBeLessThan(2_000);
        expect(terminalAt - abortedAt).toBeLessThan(5_000);

        expect(terminal.reason).toBe('aborted_tools');
        expect(terminal.detail).toBe(how === 'abort signal' ? 'stop now' : 'workflow cancelled');
        expect(server.requests).toHaveLength(1);
        expect(toolResultFor(server, 'toolu_late')).toBe('');

        // The workflow waited for the activity to confirm: its cancellation is in the history before the end.
        const events = (await handle.fetchHistory()).events ?? [];
        const canceled = events.findIndex((e) => e.activityTaskCanceledEventAttributes);
        // An aborted job ends failed, with its Terminal in the failure.
        const ended = events.findIndex((e) => e.workflowExecutionFailedEventAttributes);
        expect(canceled).toBeGreaterThan(0);
        expect(canceled).toBeLessThan(ended);

        // The line the command would have written later never comes.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const effects = path.join(workspace, 'effects.log');
        expect(fs.existsSync(effects) ? fs.readFileSync(effects, 'utf8') : '').not.toContain('late');
      });
    });
  }
});
