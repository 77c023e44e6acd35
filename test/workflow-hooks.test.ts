/**
 * Hooks in the loop, with real commands in the real sandbox: Stop (`--stop-hook` and settings),
 * PreToolUse and PostToolUse from `.claude/settings.json`, in Claude Code's format.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import type { SessionSnapshot } from '../src/shared/session';
import { formatSnapshot } from '../src/client/render';
import { abortSignal, snapshotQuery } from '../src/workflows/definitions';
import { waitFor } from './support/harness';
import { messagesOf, scriptedJobSuite, textReply, toolResultBlocks, toolUse, terminalOf } from './support/jobs';

const notices = (snapshot: SessionSnapshot) =>
  snapshot.events.filter((e) => e.kind === 'notice').map((e) => (e as { text: string }).text);

const lastUserText = (body: unknown) => JSON.stringify(messagesOf({ body } as never).at(-1));

const settings = (hooks: unknown) => JSON.stringify({ hooks });

describe('workflow: hooks', () => {
  const { withJob } = scriptedJobSuite();

  test('--stop-hook that fails sends the agent back to work with the reason; once it passes, the job completes', async () => {
    const session: ScriptedSession = {
      replies: [
        textReply('Finished, I think.'),
        { content: [toolUse('w1', 'Write', { file_path: 'done.txt', content: 'done\n' })] },
        textReply('Now it is really finished.'),
      ],
    };
    const hook = "test -f done.txt || { echo 'done.txt is missing: create it' >&2; exit 2; }";
    await withJob('stop-hook', { session, input: { stopHooks: [hook] } }, async ({ server, handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.turnCount).toBe(3);
      expect(terminal.finalText).toBe('Now it is really finished.');
      expect(terminal.transitions?.stop_hook_blocking).toBe(1);
      expect(fs.existsSync(path.join(workspace, 'done.txt'))).toBe(true);
      const second = server.requests.find((r) => r.kind === 'turn' && r.turn === 1);
      expect(lastUserText(second?.body)).toContain('Stop hook feedback:\\ndone.txt is missing: create it');
      expect(notices(await handle.query(snapshotQuery))).toContain(
        'Stop hook blocked (1 in a row): done.txt is missing: create it',
      );
    });
  });

  test('a --stop-hook that fails like a test runner (exit 1) blocks with what it printed; never a pass', async () => {
    const session: ScriptedSession = {
      replies: [
        textReply('Finished, I think.'),
        { content: [toolUse('w1', 'Write', { file_path: 'done.txt', content: 'done\n' })] },
        textReply('Now the suite passes.'),
      ],
    };
    const input = { stopHooks: ["test -f done.txt || { echo 'FAIL: done.txt is missing'; exit 1; }"] };
    await withJob('stop-hook-exit-1', { session, input }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.turnCount).toBe(3);
      const second = server.requests.find((r) => r.kind === 'turn' && r.turn === 1);
      expect(lastUserText(second?.body)).toContain('FAIL: done.txt is missing');
    });
  });

  test('a --stop-hook that is not found gives no verdict: stop_hook_prevented, not completed', async () => {
    const session: ScriptedSession = { replies: [textReply('Done.')] };
    await withJob('stop-hook-missing', { session, input: { stopHooks: ['npm-tset'] } }, async ({ handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('stop_hook_prevented');
      expect(terminal.detail).toContain('could not run (exit 127: command not found)');
    });
  });

  test('a --stop-hook that never passes ends the job after 8 blocks as stop_hook_prevented', async () => {
    const session: ScriptedSession = { replies: Array.from({ length: 9 }, (_, i) => textReply(`Done (${i}).`)) };
    const input = { stopHooks: ["cat > /dev/null; echo 'still failing' >&2; exit 2"] };
    await withJob('stop-hook-cap', { session, input }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('stop_hook_prevented');
      expect(terminal.turnCount).toBe(9);
      expect(terminal.detail).toContain('the Stop hooks blocked 8 times in a row');
      expect(terminal.transitions?.stop_hook_blocking).toBe(8);
      // Every stop after the first told the hook it was already active.
      expect(server.requests.filter((r) => r.kind === 'turn')).toHaveLength(9);
    });
  });

  test('{"continue": false} from a Stop hook ends the job as stop_hook_prevented', async () => {
    const session: ScriptedSession = { replies: [textReply('All done.')] };
    const input = { stopHooks: [`echo '{"continue": false, "stopReason": "the build is red"}'`] };
    await withJob('stop-hook-prevented', { session, input }, async ({ handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('stop_hook_prevented');
      expect(terminal.detail).toContain('the build is red');
    });
  });

  test('PreToolUse from settings denies with a reason the model sees; PostToolUse feedback joins the results', async () => {
    const deny =
      'if grep -q "rm -rf" ; then printf \'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no recursive deletes here"}}\'; fi';
    const files = {
      '.claude/settings.json': settings({
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: deny }] }],
        PostToolUse: [
          {
            matcher: 'Write|Edit',
            hooks: [{ type: 'command', command: `echo '{"decision":"block","reason":"run the formatter on it"}'` }],
          },
        ],
      }),
    };
    const session: ScriptedSession = {
      replies: [
        { content: [toolUse('b1', 'Bash', { command: 'rm -rf build' })] },
        { content: [toolUse('b2', 'Bash', { command: 'echo fine' })] },
        { content: [toolUse('w1', 'Write', { file_path: 'a.txt', content: 'a\n' })] },
        textReply('Done.'),
      ],
    };
    await withJob('pre-post-hooks', { session, files }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      const turn = (n: number) => server.requests.find((r) => r.kind === 'turn' && r.turn === n);
      const denied = toolResultBlocks(messagesOf(turn(1)).at(-1))[0];
      expect(denied).toMatchObject({ tool_use_id: 'b1', is_error: true });
      expect(String(denied?.content)).toContain('no recursive deletes here');
      expect(terminal.denials).toEqual([
        expect.objectContaining({ toolUseId: 'b1', reason: expect.stringContaining('PreToolUse hook') }),
      ]);
      // The harmless command ran.
      expect(String(toolResultBlocks(messagesOf(turn(2)).at(-1))[0]?.content)).toContain('fine');
      // The Write ran, and the PostToolUse feedback follows its result.
      expect(lastUserText(turn(3)?.body)).toContain('PostToolUse hook on Write (w1): run the formatter on it');
    });
  });

  test('in CI (nobody vets the workspace) its hooks are ignored, and the job says so', async () => {
    const files = {
      '.claude/settings.json': settings({
        Stop: [{ hooks: [{ type: 'command', command: 'touch ran.txt; exit 2' }] }],
        Notification: [{ hooks: [{ type: 'command', command: 'true' }] }],
      }),
    };
    const session: ScriptedSession = { replies: [textReply('Done.')] };
    const input = { permissions: { mode: 'bypassPermissions' as const, restrictWorkspace: true } };
    await withJob('ci-hooks', { session, files, input }, async ({ handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(fs.existsSync(path.join(workspace, 'ran.txt'))).toBe(false);
      const said = notices(await handle.query(snapshotQuery));
      expect(said.some((n) => n.startsWith('hook ignored:') && n.includes('settings.json'))).toBe(true);
    });
  });

  test('outside CI the workspace Stop hook runs, in the sandbox, and other events are listed as not run', async () => {
    const files = {
      '.claude/settings.json': settings({
        Stop: [{ hooks: [{ type: 'command', command: 'touch ran.txt' }] }],
        Notification: [{ hooks: [{ type: 'command', command: 'true' }] }],
      }),
    };
    const session: ScriptedSession = { replies: [textReply('Done.')] };
    await withJob('workspace-hooks', { session, files }, async ({ handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(fs.existsSync(path.join(workspace, 'ran.txt'))).toBe(true);
      const snapshot = await handle.query(snapshotQuery);
      expect(notices(snapshot).some((n) => n.startsWith('hook not run:') && n.includes('Notification'))).toBe(true);
      // status lists them for as long as the job lives, not only among the recent notices.
      expect(snapshot.hooks?.running).toEqual({ Stop: 1 });
      expect(snapshot.hooks?.notRun).toEqual([expect.stringContaining('Notification')]);
      expect(formatSnapshot('job', snapshot)).toMatch(/hooks: Stop 1\n\s+not run: Notification/);
    });
  });
});

describe('workflow: hooks meet permissions, abort and large inputs', () => {
  const { withJob } = scriptedJobSuite();
  const allowAll = `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`;

  test("a PreToolUse allow answers the mode's question, never a deny rule's", async () => {
    const files = {
      '.claude/settings.json': settings({
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: allowAll }] }],
      }),
    };
    const session: ScriptedSession = {
      replies: [
        // In default mode this would park for approval: the hook answers for the person.
        { content: [toolUse('b1', 'Bash', { command: 'touch made-by-hook-allow.txt' })] },
        // The program is only known when it runs: a curl deny rule cannot be ruled out.
        { content: [toolUse('b2', 'Bash', { command: 'x=curl; $x --version > curl-ran.txt' })] },
        textReply('Done.'),
      ],
    };
    const input = {
      permissions: { mode: 'default' as const, deny: ['Bash(curl:*)'], approvalTimeoutMs: 2_000 },
    };
    await withJob('hook-allow-vs-deny', { session, files, input }, async ({ handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(fs.existsSync(path.join(workspace, 'made-by-hook-allow.txt'))).toBe(true);
      expect(fs.existsSync(path.join(workspace, 'curl-ran.txt'))).toBe(false);
      expect(terminal.denials.map((d) => d.toolUseId)).toEqual(['b2']);
    });
  });

  test('a PreToolUse hook sees the whole content of a large Write, not the store reference', async () => {
    const scan = `if grep -q SECRET_MARKER; then printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"looks like a secret"}}'; fi`;
    const files = {
      '.claude/settings.json': settings({
        PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: scan }] }],
      }),
    };
    const content = `${'filler line\n'.repeat(3_000)}SECRET_MARKER=abc\n`; // 36 KB: travels by reference
    const session: ScriptedSession = {
      replies: [{ content: [toolUse('w1', 'Write', { file_path: 'big.txt', content })] }, textReply('Done.')],
    };
    await withJob('hook-large-input', { session, files }, async ({ handle, workspace }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');
      expect(fs.existsSync(path.join(workspace, 'big.txt'))).toBe(false);
      expect(terminal.denials[0]?.reason).toContain('looks like a secret');
    });
  });

  test('a --stop-hook that times out gives no verdict: the job does not pass as completed', async () => {
    const session: ScriptedSession = { replies: [textReply('Done.')] };
    const input = { stopHooks: ['sleep 20'], stopHookTimeoutSec: 1 };
    await withJob('stop-hook-timeout', { session, input }, async ({ handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('stop_hook_prevented');
      expect(terminal.detail).toContain('the --stop-hook "sleep 20" timed out after 1 s');
      expect(terminal.detail).toContain('--stop-hook-timeout');
    });
  });

  test('abort reaches a running Stop hook', async () => {
    const session: ScriptedSession = { replies: [textReply('Done.')] };
    await withJob('stop-hook-abort', { session, input: { stopHooks: ['sleep 60'] } }, async ({ handle }) => {
      await waitFor(
        async () => ((await handle.query(snapshotQuery)).phase === 'running_hooks' ? true : undefined),
        20_000,
        'the Stop hook to start',
      );
      const started = Date.now();
      await handle.signal(abortSignal, 'enough');
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('aborted_tools');
      expect(terminal.detail).toContain('enough (during the Stop hooks)');
      expect(Date.now() - started).toBeLessThan(15_000);
    });
  });
});

describe("workflow: the Agent SDK app's hook callbacks", () => {
  const { withJob } = scriptedJobSuite();
  const callback = (id: string, extra: Record<string, unknown> = {}) => ({
    command: `the Agent SDK app's hook callback ${id}`,
    source: 'the Agent SDK app',
    callback: id,
    ...extra,
  });
  /** The first hook callback the job waits on, once it does. */
  const pendingCallback = (handle: Parameters<Parameters<typeof withJob>[2]>[0]['handle']) =>
    waitFor(async () => (await handle.query(snapshotQuery)).hookCallbacks?.[0], 30_000, 'a hook callback to wait on');

  test('the job waits on each callback until the app answers: PostToolUse context, a Stop block, a timeout', async () => {
    const session: ScriptedSession = {
      replies: [{ content: [toolUse('r1', 'Read', { file_path: 'a.txt' })] }, textReply('Done.'), textReply('Really.')],
    };
    const input = {
      permissions: { mode: 'bypassPermissions' as const },
      appHooks: { PostToolUse: [{ hooks: [callback('hook_0')] }], Stop: [{ hooks: [callback('hook_1')] }] },
    };
    const files = { 'a.txt': 'hello\n' };
    await withJob('app-hook-callbacks', { session, input, files }, async ({ server, handle }) => {
      const post = await pendingCallback(handle);
      expect(post).toMatchObject({
        callbackId: 'hook_0',
        event: 'PostToolUse',
        toolUseId: 'r1',
        toolResponseRef: expect.any(String),
        input: { hook_event_name: 'PostToolUse', tool_name: 'Read', tool_input: { file_path: 'a.txt' } },
        timeoutSec: 60,
      });
      expect(formatSnapshot('job', await handle.query(snapshotQuery))).toContain(
        "waiting for the Agent SDK app's PostToolUse hook callback hook_0 [r1]",
      );
      // Until the app answers, the model is not asked again.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(server.requests.filter((r) => r.kind === 'turn')).toHaveLength(1);
      await handle.signal('hookCallbackAnswer', {
        id: post.id,
        output: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'Checked by the app.' } },
      });
      const stop = await pendingCallback(handle);
      expect(stop).toMatchObject({ event: 'Stop', callbackId: 'hook_1' });
      await handle.signal('hookCallbackAnswer', {
        id: stop.id,
        output: { decision: 'block', reason: 'Run the tests.' },
      });
      const again = await waitFor(
        async () => {
          const next = (await handle.query(snapshotQuery)).hookCallbacks?.[0];
          return next && next.id !== stop.id ? next : undefined;
        },
        30_000,
        'the second Stop callback',
      );
      await handle.signal('hookCallbackAnswer', { id: again.id, timedOut: true });
      const terminal = await terminalOf(handle);
      expect(terminal).toMatchObject({ reason: 'completed', finalText: 'Really.' });
      const turns = server.requests.filter((r) => r.kind === 'turn');
      expect(JSON.stringify(turns[1]!.body)).toContain('Checked by the app.');
      expect(lastUserText(turns[2]!.body)).toContain('Stop hook feedback:\\nRun the tests.');
      expect(notices(await handle.query(snapshotQuery)).join('\n')).toContain('timed out after 60 s');
    });
  });

  test('a PreToolUse callback that blocks on failure denies the call when the app fails; abort ends a wait', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [toolUse('b1', 'Bash', { command: 'touch ran.txt' })] },
        { content: [toolUse('b2', 'Bash', { command: 'touch ran-too.txt' })] },
        textReply('never'),
      ],
    };
    const input = {
      permissions: { mode: 'bypassPermissions' as const },
      appHooks: { PreToolUse: [{ matcher: 'Bash', hooks: [callback('hook_0', { onFailure: 'block' })] }] },
    };
    await withJob('app-hook-block', { session, input }, async ({ server, handle, workspace }) => {
      const first = await pendingCallback(handle);
      await handle.signal('hookCallbackAnswer', { id: first.id, error: 'the app threw' });
      await pendingCallback(handle).then(async (second) => {
        expect(second.toolUseId).toBe('b2');
        // A malformed answer is a notice; the job still waits.
        await handle.signal('hookCallbackAnswer', { id: second.id, output: 'yes' });
        await handle.signal(abortSignal, 'stopped while the app thought');
      });
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('aborted_tools');
      expect(fs.existsSync(path.join(workspace, 'ran.txt'))).toBe(false);
      expect(fs.existsSync(path.join(workspace, 'ran-too.txt'))).toBe(false);
      const turns = server.requests.filter((r) => r.kind === 'turn');
      expect(JSON.stringify(turns[1]!.body)).toContain('it blocks on failure, so the call was not made');
      const snapshot = await handle.query(snapshotQuery);
      expect(snapshot.hookCallbacks ?? []).toEqual([]);
      expect(notices(snapshot).join('\n')).toContain('hookCallbackAnswer signal ignored');
    });
  });
});
