/**
 * The job's sandbox policy, as the workflow resolves it and reports it: Bash is sandboxed unless
 * the user opts out with --no-sandbox; a workspace file cannot turn it off; `status` and the
 * Terminal say how Bash was confined and how many commands ran unsandboxed.
 */
import type { ScriptedSession } from '../src/model-server';
import { formatTerminal } from '../src/client/render';
import { scriptedJobSuite, snapshot, textReply, toolResultFor, toolUse, terminalOf } from './support/jobs';

/** The number of processes the probe command counted under /proc. */
function processesSeen(result: string): number {
  const match = /"content":"(\d+)\\n/.exec(result);
  if (!match) throw new Error(`no process count in ${result}`);
  return Number(match[1]);
}

const probe = (): ScriptedSession => ({
  replies: [
    // In the sandbox the command is PID 1 of its own namespace, so it sees no worker process.
    { content: [toolUse('toolu_ps', 'Bash', { command: 'ls /proc | grep -c "^[0-9]"; echo pid=$$' })] },
    textReply('Looked.'),
  ],
});

describe('workflow: the sandbox policy in status and the Terminal', () => {
  const { withJob } = scriptedJobSuite();

  test('by default Bash runs sandboxed and the Terminal says so', async () => {
    await withJob('sandboxed', { session: probe() }, async ({ handle, server }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.sandbox).toMatchObject({ enabled: true, source: 'default', unsandboxedCommands: 0 });
      expect(formatTerminal(terminal)).toMatch(/sandbox: Bash runs sandboxed/);
      expect(formatTerminal(terminal)).not.toMatch(/UNSANDBOXED/);
      expect(processesSeen(toolResultFor(server, 'toolu_ps'))).toBeLessThanOrEqual(5);
    });
  });

  test('--no-sandbox: the command runs unsandboxed, and status and the Terminal count it', async () => {
    await withJob('unsandboxed', { session: probe(), input: { noSandbox: true } }, async ({ handle, server }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.sandbox).toMatchObject({ enabled: false, source: '--no-sandbox', unsandboxedCommands: 1 });
      expect(formatTerminal(terminal)).toMatch(/Bash runs unsandboxed \(--no-sandbox\) — 1 command ran UNSANDBOXED/);
      // Outside the sandbox the worker, the test runner and the Temporal server are all visible.
      expect(processesSeen(toolResultFor(server, 'toolu_ps'))).toBeGreaterThan(5);
      expect((await snapshot(handle)).sandbox?.unsandboxedCommands).toBe(1);
    });
  });

  test('a workspace file cannot turn the sandbox off', async () => {
    const files = { '.claude/settings.json': JSON.stringify({ sandbox: { enabled: false } }) };
    await withJob('workspace-opt-out', { session: probe(), files }, async ({ handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.sandbox).toMatchObject({ enabled: true, unsandboxedCommands: 0 });
      expect(terminal.permissions?.ignored).toEqual([expect.stringContaining('cannot turn the sandbox off')]);
      const notices = (await snapshot(handle)).events.filter((e) => e.kind === 'notice').map((e) => JSON.stringify(e));
      expect(notices.join('\n')).toMatch(/sandbox.enabled false: a workspace file cannot turn the sandbox off/);
    });
  });

  test('a malformed sandbox block ends the job at start, naming the file and field', async () => {
    const files = { '.claude/settings.json': JSON.stringify({ sandbox: { enabled: 'yes' } }) };
    await withJob('bad-sandbox-block', { session: probe(), files }, async ({ handle, server }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('setup_failed');
      expect(terminal.detail).toMatch(/settings\.json: sandbox\.enabled: /);
      expect(server.requests).toHaveLength(0);
    });
  });
});
