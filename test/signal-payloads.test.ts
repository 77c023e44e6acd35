/**
 * A signal can never wedge a job: the real `temporal` CLI, as an outside client, sends `null`,
 * wrong types, missing fields and extra arguments to every signal of a parked job; the job keeps
 * answering queries, notes each bad payload in its events, and then obeys a valid one.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findTemporalBinary } from '../src/client/temporal-binary';
import type { ScriptedSession } from '../src/model-server';
import type { SessionSnapshot } from '../src/shared/session';
import { abortPayload, approvalPayload, parsePayload } from '../src/shared/signal-payloads';
import { FileContentStore } from '../src/activities/store/content-store';
import type { StoredUserMessage } from '../src/shared/signal-payloads';
import { approvalSignal, storeRootsQuery, userMessageSignal } from '../src/workflows/definitions';
import { startTemporal } from './support/harness';
import { snapshot, textReply, toolUse, waitForSnapshot, withScriptedJob, terminalOf } from './support/jobs';
import type { TestWorkflowEnvironment } from '@temporalio/testing';

const run = promisify(execFile);

/** `temporal workflow signal` with each `--input` given as raw JSON, exactly as a person would type it. */
async function cliSignal(
  address: string,
  workflowId: string,
  name: string,
  inputs: string[],
  meta: string[] = [],
): Promise<void> {
  const args = ['workflow', 'signal', '--address', address, '--workflow-id', workflowId, '--name', name];
  for (const input of inputs) args.push('--input', input);
  for (const entry of meta) args.push('--input-meta', entry);
  await run(findTemporalBinary(), args, { timeout: 30_000 });
}

/** Every payload in a history, decoded as text, so a test can look for what it carries. */
function payloadTexts(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (typeof value !== 'object' || value === null) return '';
  return Object.values(value)
    .map((each) => payloadTexts(each))
    .filter((text) => text !== '')
    .join('\n');
}

function notices(s: SessionSnapshot): string[] {
  return s.events.filter((e) => e.kind === 'notice').map((e) => (e as { text: string }).text);
}

describe('signal payloads are validated in the workflow', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test('bad payloads to every signal are ignored with a notice; valid ones are obeyed', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [toolUse('toolu_write', 'Write', { file_path: 'out.txt', content: 'approved\n' })] },
        textReply('Written, and read your note.'),
      ],
    };
    await withScriptedJob(
      env,
      'bad-signals',
      { session, input: { permissions: { mode: 'default' } } },
      async ({ handle, server }) => {
        await waitForSnapshot(handle, (s) => s.pendingApprovals.length === 1, 'the Write to park');
        const id = handle.workflowId;
        const bad: Array<[string, string[]]> = [
          ['approval', ['null']],
          ['approval', ['"yes"']],
          ['approval', ['42']],
          ['approval', ['{}']],
          ['approval', ['{"decision":"maybe"}']],
          ['approval', ['{"decision":"allow","always":"yes"}']],
          ['approval', ['{"decision":"allow","toolUseId":7}']],
          ['approval', ['{"decision":"allow","surprise":true}']],
          ['approval', ['{"decision":"allow"}', '{"decision":"deny"}']],
          ['setMaxTurns', ['null']],
          ['setMaxTurns', ['"5"']],
          ['setMaxTurns', ['0']],
          ['setMaxTurns', ['-3']],
          ['setMaxTurns', ['2.5']],
          ['setMaxTurns', ['{"n":5}']],
          ['userMessage', ['null']],
          ['userMessage', ['17']],
          ['userMessage', ['"   "']],
          ['userMessage', ['["a","b"]']],
          ['userMessage', ['{"text":"hi"}']],
          ['setPermissionMode', ['null']],
          ['setPermissionMode', ['"root"']],
          ['setModel', ['""']],
          ['setModel', ['"a model; rm -rf"']],
          ['setModel', ['42']],
          ['hookCallbackAnswer', ['null']],
          ['hookCallbackAnswer', ['{"id":7}']],
          ['hookCallbackAnswer', ['{"id":"pre-toolu_write/hook_0","output":"yes"}']],
          ['hookCallbackAnswer', ['{"id":"pre-toolu_write/hook_0","surprise":true}']],
        ];
        for (const [name, inputs] of bad) await cliSignal(env.address, id, name, inputs);

        const after = await waitForSnapshot(
          handle,
          (s) => notices(s).filter((t) => / signal ignored: /.test(t)).length === bad.length,
          'a notice for every bad signal',
        );
        expect(after.pendingApprovals).toHaveLength(1);
        expect(after.permissionMode).toBe('default');
        expect(after.maxTurns).toBeUndefined();
        expect(after.queuedUserMessages).toBe(0);
        expect(notices(after)).toEqual(
          expect.arrayContaining([
            expect.stringMatching(/^approval signal ignored: null is not valid .*; send \{"decision"/),
            expect.stringMatching(/^approval signal ignored: it takes one argument, got 2/),
            expect.stringMatching(/^setMaxTurns signal ignored: "5" is not valid .*positive whole number/),
            expect.stringMatching(/^userMessage signal ignored: " {3}" is not valid \(the message is blank\)/),
          ]),
        );

        // The job was not wedged: valid signals from the same outside client are obeyed.
        await cliSignal(env.address, id, 'setMaxTurns', ['10']);
        await cliSignal(env.address, id, 'userMessage', ['"a note for later"']);
        await cliSignal(env.address, id, 'approval', ['{"decision":"allow"}']);
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.turnCount).toBe(2);
        expect(server.requests).toHaveLength(2);
        // The queued note joined the tool result in the second request.
        expect(JSON.stringify(server.requests[1]?.body)).toContain('a note for later');
        const final = await snapshot(handle);
        expect(final.maxTurns).toBe(10);
        expect(notices(final)).toContain('maxTurns set to 10');
      },
    );
  });

  test('a payload in an encoding nobody decodes is refused with a notice; the job goes on', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [toolUse('toolu_write', 'Write', { file_path: 'out.txt', content: 'approved\n' })] },
        textReply('Written.'),
      ],
    };
    await withScriptedJob(
      env,
      'undecodable-signal',
      { session, input: { permissions: { mode: 'default' } } },
      async ({ handle }) => {
        await waitForSnapshot(handle, (s) => s.pendingApprovals.length === 1, 'the Write to park');
        const id = handle.workflowId;
        for (const name of ['approval', 'userMessage', 'setMaxTurns']) {
          await cliSignal(env.address, id, name, ['"allow"'], ['encoding=binary/unknown']);
        }
        const after = await waitForSnapshot(
          handle,
          (s) => notices(s).filter((t) => /could not be decoded/.test(t)).length === 3,
          'a notice for each undecodable signal',
        );
        expect(after.pendingApprovals).toHaveLength(1);
        expect(notices(after)).toEqual(
          expect.arrayContaining([
            expect.stringMatching(
              /^approval signal ignored: its payload could not be decoded \(encoding "binary\/unknown", 7 bytes: .*\); send \{"decision"/,
            ),
          ]),
        );
        // Later signals still reach the job.
        await cliSignal(env.address, id, 'approval', ['{"decision":"allow"}']);
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
      },
    );
  });

  test('a flood of messages is bounded: what does not fit is refused with a notice, and the job goes on', async () => {
    // On main, 300 messages of 8 KB (or three of 1.9 MB) made the next model call's input pass
    // Temporal's payload limit: every workflow task failed, in a loop, until someone aborted.
    const session: ScriptedSession = {
      replies: [
        { content: [toolUse('toolu_write', 'Write', { file_path: 'out.txt', content: 'approved\n' })] },
        textReply('Written, and read your notes.'),
      ],
    };
    await withScriptedJob(
      env,
      'message-flood',
      { session, input: { permissions: { mode: 'default' } } },
      async ({ handle, server }) => {
        await waitForSnapshot(handle, (s) => s.pendingApprovals.length === 1, 'the Write to park');
        const note = (n: number) => `note ${String(n).padStart(3, '0')} `.padEnd(8_192, 'x');
        for (let n = 0; n < 300; n++) await handle.signal(userMessageSignal, note(n));
        const huge = 'y'.repeat(1_900_000);
        for (let n = 0; n < 3; n++) await handle.signal(userMessageSignal, `${n}${huge}`);
        const after = await waitForSnapshot(
          handle,
          (s) => notices(s).some((t) => /^userMessage signal refused: "2y/.test(t)),
          'notices for the refused messages, up to the last one sent',
        );
        const refused = notices(after).filter((t) => /^userMessage signal refused: /.test(t));
        expect(refused).toEqual(
          expect.arrayContaining([
            expect.stringMatching(
              /^userMessage signal refused: "note 299 x+"… \(8,192 characters\): the queued messages already hold 262,144 of the 262,144 characters a job queues inline; send it again once/,
            ),
            expect.stringMatching(
              /^userMessage signal refused: "0y+"… \(1,900,001 characters\): a message sent inline may be at most 32,768 characters; send it with `durable-agent send <id> --file <path>`/,
            ),
          ]),
        );
        // 32 notes of 8 KB fill the 256 KB a job queues inline; the rest, and the three huge ones, are refused.
        expect(after.queuedUserMessages).toBe(32);
        expect(refused).toHaveLength(300 - 32 + 3);
        await handle.signal(approvalSignal, { decision: 'allow' });
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(server.requests).toHaveLength(2);
        const second = JSON.stringify(server.requests[1]?.body);
        expect(second).toContain('note 000 ');
        expect(second).toContain('note 031 ');
        expect(second).not.toContain('note 032 ');
        expect(second).not.toContain('0yyyy');
      },
    );
  });

  test('a long message by reference reaches the model whole; one the store lacks is reported lost', async () => {
    const session: ScriptedSession = {
      replies: [
        { content: [toolUse('toolu_write', 'Write', { file_path: 'out.txt', content: 'approved\n' })] },
        textReply('Written, and read your notes.'),
      ],
    };
    await withScriptedJob(
      env,
      'message-by-ref',
      { session, input: { permissions: { mode: 'default' } } },
      async ({ handle, server, storeDir }) => {
        await waitForSnapshot(handle, (s) => s.pendingApprovals.length === 1, 'the Write to park');
        const text = `Long notes\n${'- keep the old API working\n'.repeat(12_000)}the end`;
        const stored: StoredUserMessage = { kind: 'user-message', text };
        const ref = await new FileContentStore(storeDir).put(stored);
        await handle.signal(userMessageSignal, { $contentRef: ref, chars: text.length, preview: text.slice(0, 200) });
        const missing = `sha256:${'0'.repeat(64)}`;
        await handle.signal(userMessageSignal, { $contentRef: missing, chars: 10, preview: 'gone' });
        // A sender that understates the length (to slip past the inbox's bounds) loses the message.
        const understated = await new FileContentStore(storeDir).put({ kind: 'user-message', text: 'twelve chars' });
        await handle.signal(userMessageSignal, { $contentRef: understated, chars: 5, preview: 'twelv' });
        await handle.signal(userMessageSignal, 'and a short one');
        const queued = await waitForSnapshot(handle, (s) => s.queuedUserMessages === 4, 'the four messages queued');
        // prune keeps what the queue refers to.
        expect(await handle.query(storeRootsQuery)).toEqual(expect.arrayContaining([ref, missing]));
        await handle.signal(approvalSignal, { decision: 'allow' });
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        const content = (server.requests[1]?.body as { messages: Array<{ content: unknown }> }).messages.at(
          -1,
        )?.content;
        expect(content).toEqual([
          expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_write' }),
          { type: 'text', text },
          {
            type: 'text',
            text: `[durable-agent: the user sent a message by reference (${missing}), but the store holds no message under it, so it is lost]`,
          },
          {
            type: 'text',
            text: `[durable-agent: the user sent a message by reference (${understated}) said to be 5 characters long, but the stored text is 12, so it was dropped]`,
          },
          // (The last block carries the prompt-cache breakpoint.)
          expect.objectContaining({ type: 'text', text: 'and a short one' }),
        ]);
        // The workflow's own history holds the reference, never the text.
        const history = payloadTexts(await handle.fetchHistory());
        expect(history).toContain(ref);
        expect(history).not.toContain('keep the old API working\n- keep the old API working');
        expect(queued.queuedUserMessages).toBe(4);
        const final = await snapshot(handle);
        expect(notices(final)).toEqual(
          expect.arrayContaining([
            expect.stringMatching(
              /^user: "Long notes\\n- keep the old API[^"]*"… \(324,018 characters, by reference\)$/,
            ),
          ]),
        );
      },
    );
  });

  test('an abort whose reason is not text still stops the job, without the reason', async () => {
    const session: ScriptedSession = {
      replies: [{ content: [toolUse('toolu_write', 'Write', { file_path: 'out.txt', content: 'x' })] }],
    };
    await withScriptedJob(
      env,
      'bad-abort',
      { session, input: { permissions: { mode: 'default' } } },
      async ({ handle }) => {
        await waitForSnapshot(handle, (s) => s.pendingApprovals.length === 1, 'the Write to park');
        await cliSignal(env.address, handle.workflowId, 'abort', ['{"why":1}']);
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('aborted_tools');
        expect(terminal.detail).toBe('aborted by request');
        const final = await snapshot(handle);
        expect(notices(final)).toEqual(
          expect.arrayContaining([
            expect.stringMatching(/^abort: the reason sent is not text, so it was dropped; aborting anyway/),
          ]),
        );
      },
    );
  });
});

describe('parsePayload', () => {
  test('keeps valid payloads and trims reasons', () => {
    expect(parsePayload('abort', abortPayload, [], 'x')).toEqual({ ok: true, value: undefined });
    expect(parsePayload('abort', abortPayload, [null], 'x')).toEqual({ ok: true, value: undefined });
    expect(parsePayload('abort', abortPayload, ['  stop  '], 'x')).toEqual({ ok: true, value: 'stop' });
    expect(parsePayload('approval', approvalPayload, [{ decision: 'deny', reason: ' no ' }], 'x')).toEqual({
      ok: true,
      value: { decision: 'deny', reason: 'no' },
    });
  });

  test('a payload that cannot be printed still gets a notice', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const parsed = parsePayload('approval', approvalPayload, [cyclic], 'x');
    expect(parsed.ok).toBe(false);
  });
});
