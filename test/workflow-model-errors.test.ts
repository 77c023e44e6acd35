/**
 * Phase 2 and 3 of a turn when the model call goes wrong: API errors and their retries, the
 * fallback model, max-output-tokens recovery, and the API key's absence from workflow history.
 * Faults come from the scripted model server; the real Anthropic SDK talks to it.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ScheduledFault, ScriptedReply, ScriptedSession } from '../src/model-server';
import { ESCALATED_MAX_TOKENS, MAX_OUTPUT_RECOVERY_PROMPT, DEFAULT_MAX_TOKENS } from '../src/shared/recovery';
import type { DistributiveOmit } from '../src/shared/session';
import { createWorker } from '../src/worker/create-worker';
import { snapshotQuery } from '../src/workflows/definitions';
import type { ScriptedModelServer } from './support/harness';
import { messagesOf, scriptedJobSuite, textReply as text, terminalOf } from './support/jobs';

// ---------------------------------------------------------------------------------------------
// Helpers used only here (the shared ones are in support/jobs.ts)

const toolTurn = (id: string): ScriptedReply => ({
  content: [
    { type: 'text', text: 'Reading a.txt.' },
    { type: 'tool_use', id, name: 'Read', input: { file_path: 'a.txt' } },
  ],
});

const attemptsOf = (server: ScriptedModelServer, turn: number) => server.requests.filter((r) => r.turn === turn);

function fault(
  turn: number,
  attempt: number,
  spec: DistributiveOmit<ScheduledFault, 'turn' | 'attempt'>,
): ScheduledFault {
  return { turn, attempt, ...spec };
}

const overloaded = (turn: number, attempt: number) =>
  fault(turn, attempt, { kind: 'http', status: 529, errorType: 'overloaded_error' });

// ---------------------------------------------------------------------------------------------

describe('workflow: model call failures', () => {
  // Every job's workspace holds a.txt, and its requests are timestamped in `arrivals`.
  const { withJob } = scriptedJobSuite({ files: { 'a.txt': 'alpha\n' }, recordArrivals: true });

  describe('errors that end the job', () => {
    test('400 invalid_request_error: model_error after exactly one attempt', async () => {
      const session: ScriptedSession = {
        replies: [text('never sent')],
        faults: [
          fault(0, 1, {
            kind: 'http',
            status: 400,
            errorType: 'invalid_request_error',
            message: 'messages.0.content: bad block',
          }),
        ],
      };
      await withJob('http-400', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('model_error');
        expect(terminal.detail).toContain('400');
        expect(terminal.detail).toContain('messages.0.content: bad block');
        expect(terminal.turnCount).toBe(1);
        expect(server.requests).toHaveLength(1);
        // The prompt was still written to the transcript: the Terminal points at it.
        expect(terminal.messageCount).toBe(1);
      });
    });

    test('401 authentication_error: model_error after exactly one attempt', async () => {
      const session: ScriptedSession = {
        replies: [text('never sent')],
        faults: [fault(0, 1, { kind: 'http', status: 401, errorType: 'authentication_error' })],
      };
      await withJob('http-401', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('model_error');
        expect(terminal.detail).toMatch(/401/);
        expect(terminal.detail).toMatch(/authentication_error/);
        expect(server.requests).toHaveLength(1);
      });
    });

    test('a model error on a later turn keeps the earlier work (usage, text, transcript)', async () => {
      const session: ScriptedSession = {
        replies: [{ ...toolTurn('toolu_1'), usage: { input_tokens: 11, output_tokens: 3 } }, text('never sent')],
        faults: [fault(1, 1, { kind: 'http', status: 403, errorType: 'permission_error' })],
      };
      await withJob('http-403-late', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('model_error');
        expect(terminal.turnCount).toBe(2);
        expect(terminal.finalText).toBe('Reading a.txt.');
        expect(terminal.usage.input_tokens).toBe(11);
        expect(terminal.usage.output_tokens).toBe(3);
        expect(terminal.messageCount).toBe(3);
        expect(attemptsOf(server, 1)).toHaveLength(1);
      });
    });

    const tooLong = (turn: number, attempt: number) =>
      fault(turn, attempt, {
        kind: 'http',
        status: 400,
        errorType: 'invalid_request_error',
        message: 'prompt is too long: 212345 tokens > 200000 maximum',
      });

    test('400 "prompt is too long": compacted once and sent again, and the client never sees the error', async () => {
      const session: ScriptedSession = { replies: [text('Answered after compacting.')], faults: [tooLong(0, 1)] };
      await withJob('prompt-too-long-recovered', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.finalText).toBe('Answered after compacting.');
        expect(terminal.transitions).toMatchObject({ reactive_compact: 1, reactive_compact_retry: 1 });
        expect(server.compactionRequests()).toHaveLength(1);
        // The retry sent the summary in place of the conversation.
        const retry = server.requests.filter((r) => r.kind === 'turn').at(-1);
        expect(JSON.stringify(messagesOf(retry)[0])).toContain('compacted to save context');
        const snapshot = await handle.query(snapshotQuery);
        const notices = snapshot.events.filter((e) => e.kind === 'notice').map((e) => (e as { text: string }).text);
        expect(notices.some((n) => n.startsWith('context compacted (reactive)'))).toBe(true);
        expect(notices.some((n) => /error|too long/i.test(n) && !n.startsWith('context compacted'))).toBe(false);
      });
    });

    test('still too long after compacting: prompt_too_long, with a detail that says what to change', async () => {
      const session: ScriptedSession = { replies: [text('never sent')], faults: [tooLong(0, 1), tooLong(0, 2)] };
      await withJob('prompt-too-long', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('prompt_too_long');
        expect(terminal.detail).toContain('prompt is too long');
        expect(terminal.detail).toContain('compacting it once already did not help');
        expect(terminal.detail).toMatch(/about 212345 tokens.*context window \(1000000 tokens, built-in table/);
        expect(terminal.detail).toContain('--model');
        expect(server.requests.filter((r) => r.kind === 'turn')).toHaveLength(2);
        expect(server.compactionRequests()).toHaveLength(1);
      });
    });
  });

  describe('errors that are retried', () => {
    test('429 with retry-after 1 waits about a second, then the job completes', async () => {
      const session: ScriptedSession = {
        replies: [text('Done after the rate limit.')],
        faults: [fault(0, 1, { kind: 'http', status: 429, errorType: 'rate_limit_error', retryAfterSeconds: 1 })],
      };
      await withJob('http-429', { session }, async ({ server, handle, arrivals }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.finalText).toBe('Done after the rate limit.');
        expect(attemptsOf(server, 0)).toHaveLength(2);
        expect(arrivals).toHaveLength(2);
        // The retry policy's own first interval is 100 ms here; only retry-after explains a second.
        expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(900);
      });
    });

    test('529 twice, then success: completes with 3 attempts of that turn', async () => {
      const session: ScriptedSession = {
        replies: [toolTurn('toolu_1'), text('Done despite overload.')],
        faults: [overloaded(1, 1), overloaded(1, 2)],
      };
      await withJob('http-529', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.turnCount).toBe(2);
        expect(terminal.finalText).toBe('Done despite overload.');
        expect(attemptsOf(server, 0)).toHaveLength(1);
        expect(attemptsOf(server, 1)).toHaveLength(3);
        // Each retry sends the same conversation: the failed attempts left nothing behind.
        const bodies = attemptsOf(server, 1).map((r) => JSON.stringify(r.body.messages));
        expect(new Set(bodies).size).toBe(1);
        expect(terminal.messageCount).toBe(4);
      });
    });

    test('500 once: retried, then completes', async () => {
      const session: ScriptedSession = {
        replies: [text('Recovered from a server error.')],
        faults: [fault(0, 1, { kind: 'http', status: 500, errorType: 'api_error' })],
      };
      await withJob('http-500', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.finalText).toBe('Recovered from a server error.');
        expect(attemptsOf(server, 0)).toHaveLength(2);
      });
    });

    test('an overloaded_error event in the middle of a 200 stream is retried; the partial reply is dropped', async () => {
      const session: ScriptedSession = {
        replies: [
          {
            content: [
              { type: 'text', text: 'First block of the reply.' },
              { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.txt' } },
            ],
          },
          text('Finished.'),
        ],
        faults: [fault(0, 1, { kind: 'stream_error', afterBlocks: 1, errorType: 'overloaded_error' })],
      };
      await withJob('stream-error', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.turnCount).toBe(2);
        expect(attemptsOf(server, 0)).toHaveLength(2);
        expect(attemptsOf(server, 1)).toHaveLength(1);
        // The second turn's request carries one copy of the reply (the retry's), answered by one result.
        const messages = messagesOf(attemptsOf(server, 1)[0]);
        expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
        expect(JSON.stringify(messages[1]).match(/First block of the reply\./g)).toHaveLength(1);
        const snapshot = await handle.query(snapshotQuery);
        expect(snapshot.events.filter((e) => e.kind === 'assistant_text')).toHaveLength(2);
      });
    });
  });

  describe('slow streams', () => {
    test('a slow reply with no text deltas (tool_use only) is not mistaken for a lost worker', async () => {
      // 3 s model heartbeat timeout (the harness's), and a reply whose frames come 800 ms apart
      // for several seconds, none of them text: only the stream events show the call is alive.
      const session: ScriptedSession = {
        replies: [
          {
            content: [
              {
                type: 'tool_use',
                id: 'toolu_slow',
                name: 'Grep',
                input: { pattern: 'alpha', output_mode: 'content', glob: '*.txt', '-n': true, head_limit: 10 },
              },
            ],
          },
          text('Found it.'),
        ],
        slowTurns: { 0: 800 },
      };
      await withJob('slow-silent', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(attemptsOf(server, 0)).toHaveLength(1);
      });
    });
  });

  describe('fallback model', () => {
    test('529 three times with a fallback model: the next request uses it, a notice says so, job completes', async () => {
      const session: ScriptedSession = {
        replies: [toolTurn('toolu_1'), text('Answered by the fallback.')],
        faults: [overloaded(0, 1), overloaded(0, 2), overloaded(0, 3)],
      };
      const input = { model: 'claude-opus-5-1', fallbackModel: 'claude-sonnet-5-5' };
      await withJob('fallback', { session, input }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.model).toBe('claude-sonnet-5-5');
        expect(terminal.turnCount).toBe(2);
        expect(server.requests.map((r) => r.body.model)).toEqual([
          'claude-opus-5-1',
          'claude-opus-5-1',
          'claude-opus-5-1',
          'claude-sonnet-5-5',
          'claude-sonnet-5-5',
        ]);
        // The system prompt names the model that really answers.
        const systemOf = (i: number) => JSON.stringify(server.requests[i]?.body.system);
        expect(systemOf(0)).toContain('Model: claude-opus-5-1');
        expect(systemOf(3)).toContain('Model: claude-sonnet-5-5');
        expect(systemOf(3)).not.toContain('claude-opus-5-1');
        // The fallback retried the same turn with the same conversation.
        expect(attemptsOf(server, 0)).toHaveLength(4);
        expect(JSON.stringify(server.requests[3]?.body.messages)).toBe(
          JSON.stringify(server.requests[0]?.body.messages),
        );
        const snapshot = await handle.query(snapshotQuery);
        const notices = snapshot.events.filter((e) => e.kind === 'notice').map((e) => (e as { text: string }).text);
        expect(notices.some((n) => /Switched to claude-sonnet-5-5/.test(n) && /claude-opus-5-1/.test(n))).toBe(true);
        expect(snapshot.model).toBe('claude-sonnet-5-5');
      });
    });

    test('a chain of fallbacks: each overloaded model hands over to the next, in order, once', async () => {
      const session: ScriptedSession = {
        replies: [text('Answered by the last of the chain.')],
        // Three overloads per model: the first model, then the first fallback, both give way.
        faults: [1, 2, 3, 4, 5, 6].map((attempt) => overloaded(0, attempt)),
      };
      const input = {
        model: 'claude-opus-5-1',
        fallbackModel: 'claude-sonnet-5-5',
        fallbackModels: ['claude-sonnet-5-5', 'claude-haiku-4-5'],
      };
      await withJob('fallback-chain', { session, input }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.model).toBe('claude-haiku-4-5');
        expect(server.requests.map((r) => r.body.model)).toEqual([
          ...Array(3).fill('claude-opus-5-1'),
          ...Array(3).fill('claude-sonnet-5-5'),
          'claude-haiku-4-5',
        ]);
        expect(terminal.transitions?.fallback_model).toBe(2);
        const snapshot = await handle.query(snapshotQuery);
        const notices = snapshot.events.filter((e) => e.kind === 'notice').map((e) => (e as { text: string }).text);
        expect(notices.filter((n) => /^Switched to/.test(n))).toEqual([
          'Switched to claude-sonnet-5-5 after repeated overload of claude-opus-5-1',
          'Switched to claude-haiku-4-5 after repeated overload of claude-sonnet-5-5',
        ]);
      });
    });

    test('the last model of the chain is retried, never swapped back', async () => {
      const session: ScriptedSession = {
        replies: [text('The fallback kept going.')],
        faults: [1, 2, 3, 4, 5, 6, 7].map((attempt) => overloaded(0, attempt)),
      };
      const input = { model: 'claude-opus-5-1', fallbackModel: 'claude-sonnet-5-5' };
      await withJob('fallback-end', { session, input }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(server.requests.map((r) => r.body.model)).toEqual([
          ...Array(3).fill('claude-opus-5-1'),
          ...Array(5).fill('claude-sonnet-5-5'),
        ]);
      });
    });

    test('without a fallback model, repeated 529s are simply retried on the same model', async () => {
      const session: ScriptedSession = {
        replies: [text('Same model, eventually.')],
        faults: [overloaded(0, 1), overloaded(0, 2), overloaded(0, 3), overloaded(0, 4)],
      };
      await withJob('no-fallback', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(terminal.model).toBe('claude-sonnet-5-5');
        expect(server.requests.map((r) => r.body.model)).toEqual(Array(5).fill('claude-sonnet-5-5'));
      });
    });
  });

  describe('max_tokens recovery', () => {
    const cut = (value: string): ScriptedReply => ({
      content: [{ type: 'text', text: value }],
      stop_reason: 'max_tokens',
    });

    test('cut again after escalating: the recovery prompt is appended, at most 3 times, then the job ends', async () => {
      const session: ScriptedSession = {
        replies: [cut('Part one, '), cut('part two, '), cut('part three, '), cut('part four, '), cut('part five.')],
      };
      await withJob('recover', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        // Still cut after every recovery step: its own ending, never a bare `completed`.
        expect(terminal.reason).toBe('max_output_tokens');
        expect(terminal.detail).toMatch(/still cut at the output limit \(64000 tokens\) after 3 continuation/);
        // 1 original + 1 escalated + 3 recovery requests, and no more.
        expect(server.requests.map((r) => [r.turn, r.attempt])).toEqual([
          [0, 1],
          [0, 2],
          [1, 1],
          [2, 1],
          [3, 1],
        ]);
        expect(server.requests.map((r) => r.body.max_tokens)).toEqual([
          DEFAULT_MAX_TOKENS,
          ESCALATED_MAX_TOKENS,
          ESCALATED_MAX_TOKENS,
          ESCALATED_MAX_TOKENS,
          ESCALATED_MAX_TOKENS,
        ]);
        // Each recovery request ends with the cut reply followed by the recovery prompt.
        for (const request of server.requests.slice(2)) {
          const messages = messagesOf(request);
          expect(messages.at(-2)?.role).toBe('assistant');
          const last = messages.at(-1)!;
          expect(last.role).toBe('user');
          expect(JSON.stringify(last.content)).toContain(MAX_OUTPUT_RECOVERY_PROMPT);
        }
        const last = messagesOf(server.requests.at(-1));
        const prompts = last.filter((m) => JSON.stringify(m.content).includes(MAX_OUTPUT_RECOVERY_PROMPT));
        expect(prompts).toHaveLength(3);
        // Recovery continues the same turn: it is not a new turn for maxTurns.
        expect(terminal.turnCount).toBe(1);
        expect(terminal.finalText).toBe('part four, ');
        const snapshot = await handle.query(snapshotQuery);
        expect(
          snapshot.events.some(
            (e) => e.kind === 'notice' && /^terminal: max_output_tokens \(the reply was still cut/.test(e.text),
          ),
        ).toBe(true);
      });
    });

    test('a reply cut at max_tokens is re-sent unchanged with max_tokens 64000, then continued by a recovery prompt', async () => {
      // The script answers by turn, so the escalated re-send of turn 0 is cut again; the recovery
      // prompt then makes a new turn, which the script answers in full.
      const session: ScriptedSession = {
        replies: [cut('Half of the answer'), text(' and the other half.')],
      };
      await withJob('escalate-recover', { session }, async ({ server, handle }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(server.requests.map((r) => [r.turn, r.attempt, r.body.max_tokens])).toEqual([
          [0, 1, DEFAULT_MAX_TOKENS],
          [0, 2, ESCALATED_MAX_TOKENS],
          [1, 1, ESCALATED_MAX_TOKENS],
        ]);
        // Escalation re-sends the same request: the cut reply was withheld from the conversation.
        expect(JSON.stringify(server.requests[1]?.body.messages)).toBe(
          JSON.stringify(server.requests[0]?.body.messages),
        );
        // Recovery keeps the cut reply and asks the model to go on from it.
        const messages = messagesOf(server.requests[2]);
        expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
        expect(JSON.stringify(messages[1])).toContain('Half of the answer');
        expect(JSON.stringify(messages[2])).toContain(MAX_OUTPUT_RECOVERY_PROMPT);
        expect(terminal.finalText).toBe(' and the other half.');
        expect(terminal.turnCount).toBe(1);
        expect(terminal.messageCount).toBe(4);
      });
    });
  });

  describe('secrets', () => {
    test('the API key never appears in workflow history', async () => {
      const apiKey = `sk-ant-api03-DISTINCTIVE-${process.pid}-${Date.now()}-never-in-history`;
      const session: ScriptedSession = {
        replies: [toolTurn('toolu_1'), text('All done with a secret-free history.')],
        // Failures too: their messages and stack traces land in history.
        faults: [
          fault(0, 1, { kind: 'http', status: 500, errorType: 'api_error' }),
          fault(1, 1, { kind: 'stream_error', afterBlocks: 0, errorType: 'overloaded_error' }),
        ],
      };
      await withJob(
        'secrets',
        {
          session,
          worker: async ({ env, server, taskQueue, storeDir }) => {
            const worker = await createWorker({
              connection: env.nativeConnection,
              taskQueue,
              activities: {
                anthropic: () => new Anthropic({ apiKey, baseURL: server.url, maxRetries: 0 }),
                storeDir,
                streamIdleMs: 5_000,
              },
            });
            return { worker, done: worker.run() };
          },
        },
        async ({ server, handle }) => {
          const terminal = await terminalOf(handle);
          expect(terminal.reason).toBe('completed');
          // The key really was used: the model server saw it on every request.
          expect(server.requests.length).toBe(4);
          // (SDK 1.14 sends it as `authorization: Bearer …`; older ones as `x-api-key`.)
          const sentKeys = server.requests.map((r) =>
            JSON.stringify([r.headers['x-api-key'], r.headers.authorization]),
          );
          expect(sentKeys.every((sent) => sent.includes(apiKey))).toBe(true);

          const history = await handle.fetchHistory();
          // Payload data comes as bytes or base64: decode both, so a key inside a JSON payload
          // (an activity input, a heartbeat, a failure's details) shows up as text.
          const dump = JSON.stringify(history, (_key, value: unknown) => {
            if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
            if (typeof value === 'string' && value.length >= 8 && /^[A-Za-z0-9+/]+={0,2}$/.test(value)) {
              return `${value} ${Buffer.from(value, 'base64').toString('utf8')}`;
            }
            return value;
          });
          // The search works: the prompt and the final text are in the decoded history...
          expect(dump).toContain('Check the login module');
          expect(dump).toContain('All done with a secret-free history.');
          // ... and the key, or any recognisable part of it, is not.
          expect(dump).not.toContain(apiKey);
          expect(dump).not.toContain('DISTINCTIVE');
        },
      );
    });
  });
});
