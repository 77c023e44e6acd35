/**
 * The callModel activity on each stop reason, run in Temporal's mock activity context against
 * the scripted model server through the real SDK: what it returns to the workflow, what it writes
 * into the transcript, and that the next request built from that transcript is one the API takes.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callModel, type CallModelDeps } from '../src/activities/call-model';
import { FileContentStore } from '../src/activities/store/content-store';
import { TranscriptStore } from '../src/activities/store/transcript-store';
import { ScriptedModelServer, type ScriptedReply, type ScriptedSession } from '../src/model-server';
import type { CallModelInput, CallModelResult } from '../src/shared/activity-types';
import { MODEL_FAILURE_TYPES } from '../src/shared/activity-types';
import type { Message } from '../src/shared/messages';
import { emptyTranscript, type PendingUserMessage, type TranscriptRef } from '../src/shared/transcript';

let dir: string;
let server: ScriptedModelServer | undefined;
let deps: CallModelDeps;
let transcripts: TranscriptStore;
let systemPromptRef: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'call-model-'));
  const store = new FileContentStore(dir);
  transcripts = new TranscriptStore(store);
  systemPromptRef = await store.put('You are a test.');
  deps = {
    anthropic: () => new Anthropic({ apiKey: 'test', baseURL: server?.url, maxRetries: 0 }),
    store,
    transcripts,
    dataDir: dir,
  };
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const userText = (text: string): PendingUserMessage => ({ role: 'user', content: [{ type: 'text', text }] });

async function start(replies: ScriptedReply[], extra: Partial<ScriptedSession> = {}): Promise<ScriptedModelServer> {
  server = await ScriptedModelServer.start({ replies, ...extra });
  return server;
}

/** One callModel activity, in a fresh mock activity context. */
function call(transcript: TranscriptRef, append: PendingUserMessage[]): Promise<CallModelResult> {
  const input: CallModelInput = {
    sessionKey: 'test-session',
    transcript,
    append,
    systemPromptRef,
    model: 'claude-test',
    maxTokens: 1000,
    tools: ['Bash', 'MultiEdit', 'Read'],
    fallbackAvailable: false,
  };
  // An expected failure is logged as a warning by the activity runner; only errors are news here.
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 30_000 }, { logger: new DefaultLogger('ERROR') });
  return env.run(callModel, deps, input);
}

const multiEditInput = {
  file_path: 'src/app.ts',
  edits: [
    { old_string: 'alpha', new_string: 'beta' },
    { old_string: 'gamma', new_string: 'delta' },
  ],
};
/** A MultiEdit cut right after its first edit: the SDK's parser would hand back one edit. */
const multiEditCutAfterFirstEdit = JSON.stringify(multiEditInput).replace(/,\{"old_string":"gamma".*$/, ',');

describe('callModel: a reply cut by max_tokens', () => {
  test('a cut tool_use is neither returned nor written; the text before it is', async () => {
    await start([
      {
        content: [
          { type: 'text', text: 'Applying both edits.' },
          {
            type: 'tool_use',
            id: 'toolu_multi',
            name: 'MultiEdit',
            input: multiEditInput,
            partial_json: multiEditCutAfterFirstEdit,
          },
        ],
        stop_reason: 'max_tokens',
      },
      { content: [{ type: 'text', text: 'Resumed.' }] },
    ]);
    const result = await call(emptyTranscript(), [userText('Edit app.ts')]);

    expect(result.stopReason).toBe('max_tokens');
    expect(result.truncatedToolUse).toEqual({ id: 'toolu_multi', name: 'MultiEdit' });
    expect(result.emptyReply).toBe(false);
    expect(result.message).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Applying both edits.' }] });
    expect(await transcripts.load(result.transcript)).toEqual<Message[]>([
      { role: 'user', content: [{ type: 'text', text: 'Edit app.ts' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Applying both edits.' }] },
    ]);
    expect(result.transcriptBeforeReply.messageCount).toBe(1);

    // The next request (a continuation prompt) is one the API accepts: no unanswered tool_use.
    const next = await call(result.transcript, [userText('Resume directly.')]);
    expect(next.message.content).toEqual([{ type: 'text', text: 'Resumed.' }]);
  });

  test('a reply that was only a cut tool_use leaves nothing to write: emptyReply', async () => {
    // Nothing is written, so the next request is turn 0 again: its first attempt gets the cut reply.
    const cut: ScriptedReply = {
      content: [
        {
          type: 'tool_use',
          id: 'toolu_bash',
          name: 'Bash',
          input: { command: 'npm test', timeout: 600000 },
          partial_json: '{"command":"npm test","timeo',
        },
      ],
      stop_reason: 'max_tokens',
    };
    await start([{ content: [{ type: 'text', text: 'Resumed.' }] }], {
      faults: [{ turn: 0, attempt: 1, kind: 'reply', reply: cut }],
    });
    const result = await call(emptyTranscript(), [userText('Run the tests')]);

    expect(result.truncatedToolUse).toEqual({ id: 'toolu_bash', name: 'Bash' });
    expect(result.emptyReply).toBe(true);
    expect(result.message.content).toEqual([]);
    expect(result.transcript).toEqual(result.transcriptBeforeReply);
    expect(await transcripts.load(result.transcript)).toHaveLength(1);

    // A continuation prompt after it merges with the first user message: still a valid request.
    const next = await call(result.transcript, [userText('Resume directly.')]);
    expect(next.message.content).toEqual([{ type: 'text', text: 'Resumed.' }]);
    expect(server?.requests.at(-1)?.body.messages).toHaveLength(2);
  });

  test('model_context_window_exceeded cuts a tool_use the same way', async () => {
    await start([
      {
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'a.txt' }, partial_json: '{"file_' },
        ],
        stop_reason: 'model_context_window_exceeded',
      },
    ]);
    const result = await call(emptyTranscript(), [userText('Read a.txt')]);
    expect(result.stopReason).toBe('model_context_window_exceeded');
    expect(result.truncatedToolUse).toEqual({ id: 'toolu_read', name: 'Read' });
    expect(result.message.content).toEqual([{ type: 'text', text: 'Reading.' }]);
    expect(result.transcript.messageCount).toBe(2);
  });

  test('a tool_use whose input streamed whole before the limit is kept, and runs as Claude Code runs it', async () => {
    await start([
      {
        content: [
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'toolu_whole', name: 'Read', input: { file_path: 'a.txt' } },
        ],
        stop_reason: 'max_tokens',
      },
    ]);
    const result = await call(emptyTranscript(), [userText('Read a.txt')]);
    expect(result.stopReason).toBe('max_tokens');
    expect(result.truncatedToolUse).toBeUndefined();
    expect(result.message.content).toEqual([
      { type: 'text', text: 'Reading it.' },
      { type: 'tool_use', id: 'toolu_whole', name: 'Read', input: { file_path: 'a.txt' } },
    ]);
    expect(result.transcript.messageCount).toBe(2);
  });

  test('a text reply cut by max_tokens is kept as it is: the loop continues it', async () => {
    await start([{ content: [{ type: 'text', text: 'The first half of' }], stop_reason: 'max_tokens' }]);
    const result = await call(emptyTranscript(), [userText('Explain')]);
    expect(result.truncatedToolUse).toBeUndefined();
    expect(result.emptyReply).toBe(false);
    expect(result.message.content).toEqual([{ type: 'text', text: 'The first half of' }]);
    expect(result.transcript.messageCount).toBe(2);
  });
});

describe('callModel: replies with no content', () => {
  test('no content blocks at all: nothing written, emptyReply, and the next request is valid', async () => {
    await start([{ content: [{ type: 'text', text: 'Here now.' }] }], {
      faults: [{ turn: 0, attempt: 1, kind: 'reply', reply: { content: [] } }],
    });
    const result = await call(emptyTranscript(), [userText('Hello')]);
    expect(result.stopReason).toBe('end_turn');
    expect(result.emptyReply).toBe(true);
    expect(result.transcript).toEqual(result.transcriptBeforeReply);

    const next = await call(result.transcript, [userText('Anyone there?')]);
    expect(next.message.content).toEqual([{ type: 'text', text: 'Here now.' }]);
  });

  test('whitespace-only text counts as no content (the API would refuse it sent back)', async () => {
    await start(
      [
        {
          content: [
            { type: 'text', text: '  ' },
            { type: 'tool_use', id: 'toolu_r', name: 'Read', input: { file_path: 'a.txt' } },
          ],
        },
      ],
      { faults: [{ turn: 0, attempt: 1, kind: 'reply', reply: { content: [{ type: 'text', text: '\n\n' }] } }] },
    );
    const blank = await call(emptyTranscript(), [userText('Hello')]);
    expect(blank.emptyReply).toBe(true);
    expect(blank.transcript).toEqual(blank.transcriptBeforeReply);

    // Next to a tool call the blank text just goes; the tool call stays and may run.
    const withTool = await call(blank.transcript, [userText('Read a.txt')]);
    expect(withTool.emptyReply).toBe(false);
    expect(withTool.message.content).toEqual([
      { type: 'tool_use', id: 'toolu_r', name: 'Read', input: { file_path: 'a.txt' } },
    ]);
  });
});

describe('callModel: refusal, pause_turn and a plain tool_use', () => {
  test('refusal: the reply is not written, no tool call survives, stopDetails says why', async () => {
    await start([
      {
        content: [
          { type: 'text', text: 'Sure, running it.' },
          { type: 'tool_use', id: 'toolu_ok', name: 'Bash', input: { command: 'ls' } },
          { type: 'text', text: 'Hello..' },
        ],
        stop_reason: 'refusal',
        stop_details: { type: 'refusal', category: 'cyber', explanation: 'This could enable cyber harm.' },
      },
    ]);
    const result = await call(emptyTranscript(), [userText('Do the thing')]);
    expect(result.stopReason).toBe('refusal');
    expect(result.stopDetails).toEqual({ category: 'cyber', explanation: 'This could enable cyber harm.' });
    expect(result.message.content).toEqual([
      { type: 'text', text: 'Sure, running it.' },
      { type: 'text', text: 'Hello..' },
    ]);
    expect(result.emptyReply).toBe(false);
    expect(result.transcript).toEqual(result.transcriptBeforeReply);
  });

  test('refusal without a named category still reports stopDetails, with nulls', async () => {
    await start([{ content: [], stop_reason: 'refusal' }]);
    const result = await call(emptyTranscript(), [userText('Do the thing')]);
    expect(result.stopDetails).toEqual({ category: null, explanation: null });
    expect(result.emptyReply).toBe(true);
  });

  test('pause_turn: written as it came, so the next call can send it back to be continued', async () => {
    await start([
      { content: [{ type: 'text', text: 'Searching the web.' }], stop_reason: 'pause_turn' },
      { content: [{ type: 'text', text: 'Found it.' }] },
    ]);
    const paused = await call(emptyTranscript(), [userText('Look it up')]);
    expect(paused.stopReason).toBe('pause_turn');
    expect(paused.transcript.messageCount).toBe(2);

    // Nothing to append: the request ends with the paused assistant message, as the API asks.
    const resumed = await call(paused.transcript, []);
    expect(server?.requests.at(-1)?.body.messages.at(-1)).toMatchObject({ role: 'assistant' });
    expect(resumed.message.content).toEqual([{ type: 'text', text: 'Found it.' }]);
  });

  test('a complete tool_use reply is returned and written whole', async () => {
    await start([
      {
        content: [
          { type: 'text', text: 'Editing.' },
          { type: 'tool_use', id: 'toolu_multi', name: 'MultiEdit', input: multiEditInput },
        ],
      },
    ]);
    const result = await call(emptyTranscript(), [userText('Edit app.ts')]);
    expect(result.stopReason).toBe('tool_use');
    expect(result.truncatedToolUse).toBeUndefined();
    expect(result.stopDetails).toBeUndefined();
    expect(result.message.content[1]).toEqual({
      type: 'tool_use',
      id: 'toolu_multi',
      name: 'MultiEdit',
      input: multiEditInput,
    });
    expect(result.transcript.messageCount).toBe(2);
  });
});

describe('callModel: failures', () => {
  test('402 billing_error fails the activity for good', async () => {
    await start([{ content: [{ type: 'text', text: 'never' }] }], {
      faults: [{ turn: 0, attempt: 1, kind: 'http', status: 402, errorType: 'billing_error' }],
    });
    const error = await call(emptyTranscript(), [userText('Hello')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).type).toBe(MODEL_FAILURE_TYPES.billing);
    expect((error as ApplicationFailure).nonRetryable).toBe(true);
  });
});
