/**
 * A job whose input stays open (the Agent SDK's streaming input, `SessionInput.inputOpen`) on a
 * real dev server: each answered message publishes its own result and the job waits for the next,
 * with a turn limit per message; `closeInput` or the idle time end it, completed.
 */
import type { ScriptedSession } from '../src/model-server';
import type { SessionSnapshot } from '../src/shared/session';
import {
  closeInputSignal,
  setPermissionModeSignal,
  snapshotQuery,
  userMessageSignal,
} from '../src/workflows/definitions';
import { waitFor } from './support/harness';
import { readCall, scriptedJobSuite, terminalOf, textReply } from './support/jobs';

describe('workflow: open input', () => {
  const { withJob } = scriptedJobSuite();

  test('each message gets its result and its own maxTurns; the job waits between them and ends on closeInput', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [readCall('r1', 'a.txt')] },
        textReply('First answer.'),
        { content: [readCall('r2', 'a.txt')] },
        textReply('Second answer.'),
      ],
    };
    const input = { maxTurns: 2, inputOpen: { idleMs: 600_000 } };
    await withJob('open-input', { session, input, files: { 'a.txt': 'hello\n' } }, async ({ server, handle }) => {
      const answered = (query: number) =>
        waitFor(
          async () => {
            const snapshot = await handle.query(snapshotQuery);
            return snapshot.phase === 'waiting_for_input' && snapshot.turnResult?.query === query
              ? snapshot
              : undefined;
          },
          30_000,
          `message ${query} answered`,
        );
      const first = await answered(1);
      expect(first.turnResult!.terminal).toMatchObject({
        reason: 'completed',
        turnCount: 2,
        finalText: 'First answer.',
      });
      expect(first.terminal).toBeUndefined();
      await handle.signal(userMessageSignal, 'And again?');
      // Two more turns: over a maxTurns of 2 for the job, within 2 for this message.
      const second = await answered(2);
      const result = second.turnResult!.terminal;
      expect(result).toMatchObject({ turnCount: 2, finalText: 'Second answer.' });
      // Its usage is its own: the job's is the sum of both messages'.
      expect(result.usage.output_tokens).toBeGreaterThan(0);
      expect(result.usage.output_tokens).toBeLessThan(second.usage.output_tokens);
      await handle.signal(closeInputSignal);
      const terminal = await terminalOf(handle);
      expect(terminal).toMatchObject({ reason: 'completed', turnCount: 4, finalText: 'Second answer.' });
      expect(terminal.detail).toBeUndefined();
      expect(server.requests.filter((request) => request.kind === 'turn')).toHaveLength(4);
    });
  });

  test('a job no message reaches within its idle time ends on its own, completed, and says why', async () => {
    const session: ScriptedSession = { replies: [textReply('Only answer.')] };
    await withJob('open-input-idle', { session, input: { inputOpen: { idleMs: 1_500 } } }, async ({ handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal).toMatchObject({
        reason: 'completed',
        finalText: 'Only answer.',
        detail: 'no further message came within 2 s, so the job ended',
      });
    });
  });

  test('setPermissionMode: only for jobs the SDK started, and never up to bypassPermissions unless allowed', async () => {
    const session: ScriptedSession = {
      slowTurns: { 0: 300 },
      replies: [{ content: [readCall('r1', 'a.txt')] }, textReply('Read it.')],
    };
    const files = { 'a.txt': 'hello\n' };
    const notices = async (handle: { query: (q: typeof snapshotQuery) => Promise<SessionSnapshot> }) =>
      (await handle.query(snapshotQuery)).events.flatMap((event) => (event.kind === 'notice' ? [event.text] : []));
    // A job a person started with `run`: an outside client may not change its mode at all.
    await withJob('mode-plain', { session, files, input: { permissions: { mode: 'plan' } } }, async ({ handle }) => {
      await handle.signal(setPermissionModeSignal, 'acceptEdits');
      const terminal = await terminalOf(handle);
      expect(terminal.permissions?.mode).toBe('plan');
      expect(await notices(handle)).toContain(
        'setPermissionMode acceptEdits refused: only jobs the Agent SDK started take it',
      );
    });
    // An SDK job may change its mode (test/agent-sdk.test.ts), but not to bypassPermissions unless it
    // was allowed at its start.
    const input = { permissions: { mode: 'default' as const }, inputOpen: { idleMs: 1_000 } };
    await withJob('mode-sdk', { session, files, input }, async ({ handle }) => {
      await handle.signal(setPermissionModeSignal, 'bypassPermissions');
      const terminal = await terminalOf(handle);
      expect(terminal.permissions?.mode).toBe('default');
      expect((await notices(handle)).join('\n')).toContain(
        'setPermissionMode bypassPermissions refused: the job was not started with bypassPermissions allowed',
      );
    });
  });
});
