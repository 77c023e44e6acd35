import { explainCliError } from '../src/client/cli-errors';
import { resultMessage, resultSubtype, StreamJsonPrinter } from '../src/client/output-format';
import { exitCodeFor } from '../src/client/render';
import { splitToolRules, withoutDeniedTools } from '../src/client/session-options';
import { TOOL_DEFINITIONS } from '../src/shared/tools';
import type { Terminal } from '../src/shared/terminal';
import { denialInput } from '../src/shared/terminal';

const terminal = (overrides: Partial<Terminal>): Terminal => ({
  reason: 'completed',
  turnCount: 2,
  finalText: 'done',
  usage: { input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 3, cache_read_input_tokens: 4 },
  model: 'claude-sonnet-5-5',
  transcriptHead: 'sha256:abc',
  messageCount: 4,
  denials: [],
  todos: [],
  ...overrides,
});

describe('the json result', () => {
  test("each ending has claude -p's subtype", () => {
    expect(resultSubtype('completed')).toBe('success');
    expect(resultSubtype('max_turns')).toBe('error_max_turns');
    expect(resultSubtype('budget_exhausted')).toBe('error_max_budget_usd');
    for (const reason of ['model_error', 'aborted_tools', 'prompt_too_long', 'terminated'] as const) {
      expect(resultSubtype(reason)).toBe('error_during_execution');
    }
  });

  test('an older Terminal without accounting gives nulls, not made-up numbers', () => {
    const message = resultMessage(
      'job-1',
      terminal({ reason: 'max_turns', transitions: { next_turn: 2, autocompact: 1 } }),
    );
    expect(message).toMatchObject({
      subtype: 'error_max_turns',
      is_error: true,
      total_cost_usd: null,
      duration_ms: null,
      retries: null,
      modelUsage: {},
      recoveries: { autocompact: 1 },
      session_id: 'job-1',
    });
  });

  test("a model API error reads as claude -p's: success subtype, is_error, the API's words as the result", () => {
    const message = resultMessage(
      'job-1',
      terminal({
        reason: 'model_error',
        turnCount: 2,
        finalText: 'Reading.',
        stopReason: 'tool_use',
        detail: 'Model API error 400 invalid_request_error: messages.2.content: bad thing',
      }),
    );
    expect(message).toMatchObject({
      subtype: 'success',
      is_error: true,
      result: 'API Error: 400 messages.2.content: bad thing',
      terminal_reason: 'api_error',
      api_error_status: 400,
      api_error_type: 'invalid_request_error',
      num_turns: 2,
      stop_reason: null,
    });
    expect(message).not.toHaveProperty('errors');
    // A model error that is no answer of the API's (it could not be reached) stays an error subtype.
    const unreachable = resultMessage(
      'job-1',
      terminal({ reason: 'model_error', detail: 'Model call failed: cannot reach the model API' }),
    );
    expect(unreachable).toMatchObject({
      subtype: 'error_during_execution',
      terminal_reason: 'model_error',
      errors: ['Model call failed: cannot reach the model API'],
    });
    expect(unreachable).not.toHaveProperty('result');
  });

  test('the limits end as claude -p ends them: errors, no result, the refused turn counted', () => {
    const max = resultMessage(
      'job-1',
      terminal({ reason: 'max_turns', turnCount: 1, finalText: 'Reading.', detail: 'reached maxTurns 1' }),
    );
    expect(max).toMatchObject({
      subtype: 'error_max_turns',
      is_error: true,
      num_turns: 2,
      errors: ['Reached maximum number of turns (1)'],
    });
    expect(max).not.toHaveProperty('result');
    expect(max).not.toHaveProperty('api_error_status');
    const budget = resultMessage(
      'job-1',
      terminal({
        reason: 'budget_exhausted',
        turnCount: 1,
        maxBudgetUsd: 0.0001,
        detail: "the job has cost $0.0610 of its $0.0001 budget, so turn 2's model call was not started",
      }),
    );
    expect(budget).toMatchObject({
      subtype: 'error_max_budget_usd',
      num_turns: 2,
      errors: ['Reached maximum budget ($0.0001)'],
    });
    const first = resultMessage(
      'job-1',
      terminal({ reason: 'budget_exhausted', turnCount: 1, maxBudgetUsd: 1, detail: "so turn 1's model call was not" }),
    );
    expect(first.num_turns).toBe(1);
  });

  test('a completed job: the answer, api_error_status null, a uuid; turns as they ran', () => {
    const message = resultMessage('job-1', terminal({ turnCount: 3, stopReason: 'end_turn' }));
    expect(message).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'done',
      api_error_status: null,
      stop_reason: 'end_turn',
    });
    expect(resultMessage('job-1', terminal({})).stop_reason).toBeNull();
    expect(message.num_turns).toBe(3);
    expect(message.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(message).not.toHaveProperty('errors');
  });

  test('exit status: 0 or 1 as claude -p by default; the endings apart with detailed', () => {
    const reasons = ['completed', 'max_turns', 'aborted_tools', 'budget_exhausted', 'model_error'] as const;
    expect(reasons.map((reason) => exitCodeFor({ reason }, 'simple'))).toEqual([0, 1, 1, 1, 1]);
    expect(reasons.map((reason) => exitCodeFor({ reason }, 'detailed'))).toEqual([0, 2, 3, 4, 1]);
  });

  test('a denied Write keeps its path and a cut content', () => {
    const input = denialInput({ file_path: 'a.txt', content: 'x'.repeat(10_000) });
    expect(input.file_path).toBe('a.txt');
    expect(String(input.content)).toHaveLength(2_000 + '… [8000 more characters]'.length);
    expect(denialInput('not an object')).toEqual({});
  });
});

describe('stream-json lines', () => {
  test('a retry is a system api_retry line, a parked call an approval_needed line', () => {
    const lines: string[] = [];
    const printer = new StreamJsonPrinter({ write: (line) => lines.push(line) }, 'job-2');
    printer.onEvent({
      kind: 'retry',
      turn: 3,
      what: 'model call',
      activityType: 'callModel',
      activityId: '7',
      failedAttempt: 1,
      nextAttempt: 2,
      unseenFailures: 0,
      maximumAttempts: 20,
      cause: 'Model API error 529 overloaded_error: Overloaded',
      nextAttemptAt: Date.now() + 2_000,
      started: false,
    } as Parameters<StreamJsonPrinter['onEvent']>[0]);
    const retry = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(retry).toMatchObject({
      type: 'system',
      subtype: 'api_retry',
      attempt: 2,
      max_retries: 19,
      error: 'Model API error 529 overloaded_error: Overloaded',
      session_id: 'job-2',
    });
    expect(retry.retry_delay_ms).toBeGreaterThan(1_000);
    printer.onEvent({ kind: 'tool_call', seq: 5, turn: 3, toolUseId: 't1', name: 'Read', input: '{"file_path":"a' });
    expect(JSON.parse(lines[1] ?? '{}')).toMatchObject({
      type: 'assistant',
      message: {
        content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { truncated_input: '{"file_path":"a' } }],
      },
    });
    // An event seen twice (a poll that overlaps the last) is printed once.
    printer.onEvent({ kind: 'tool_call', seq: 5, turn: 3, toolUseId: 't1', name: 'Read', input: '{}' });
    expect(lines).toHaveLength(2);
  });
});

describe('stream-json tool results', () => {
  test('a result is sent whole from the store, in its place; a refused call has a permission_denied line first', async () => {
    const lines: string[] = [];
    const whole = 'line\n'.repeat(1_000);
    let release: () => void = () => undefined;
    const stored = new Promise<void>((resolve) => (release = resolve));
    const printer = new StreamJsonPrinter({ write: (line) => lines.push(line) }, 'job-3', async (ref) => {
      await stored;
      return ref === 'sha256:whole' ? whole : undefined;
    });
    printer.print([
      {
        seq: 1,
        turn: 1,
        kind: 'tool_result',
        toolUseId: 't1',
        name: 'Bash',
        isError: false,
        preview: 'line…',
        ref: 'sha256:whole',
      },
      {
        seq: 2,
        turn: 1,
        kind: 'notice',
        text: 'microcompact: tool results older than the last 5 are sent as a short marker',
      },
      {
        seq: 3,
        turn: 1,
        kind: 'tool_result',
        toolUseId: 't2',
        name: 'Write',
        isError: true,
        preview: 'Permission to use Write was denied. dontAsk mode',
        denied: true,
      },
    ]);
    // The second result waits for the first, which waits for the store.
    expect(lines).toHaveLength(0);
    release();
    await printer.drain();
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.map((line) => `${String(line.type)}/${String(line.subtype ?? '')}`)).toEqual([
      'user/',
      'system/permission_denied',
      'user/',
    ]);
    expect(parsed[0]).toMatchObject({
      message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: whole, is_error: false }] },
      tool_use_result: whole,
    });
    expect(parsed[1]).toMatchObject({
      tool_name: 'Write',
      tool_use_id: 't2',
      message: 'Permission to use Write was denied. dontAsk mode',
      session_id: 'job-3',
    });
    expect(parsed[2]).toMatchObject({ tool_use_result: 'Error: Permission to use Write was denied. dontAsk mode' });
  });

  test('a store that cannot be read leaves the kept preview', async () => {
    const lines: string[] = [];
    const printer = new StreamJsonPrinter({ write: (line) => lines.push(line) }, 'job-4', () =>
      Promise.reject(new Error('no such store')),
    );
    printer.print([
      {
        seq: 1,
        turn: 1,
        kind: 'tool_result',
        toolUseId: 't1',
        name: 'Read',
        isError: false,
        preview: 'abc…',
        ref: 'sha256:x',
      },
    ]);
    await printer.drain();
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ message: { content: [{ content: 'abc…' }] } });
  });
});

describe('--disallowedTools as claude -p takes it', () => {
  test('a bare tool name takes the tool out of the offered list; a rule with a specifier does not', () => {
    const all = TOOL_DEFINITIONS.map((tool) => tool.name);
    expect(withoutDeniedTools(undefined, ['Bash'])).toEqual(all.filter((name) => name !== 'Bash'));
    expect(withoutDeniedTools(undefined, ['Bash(rm:*)', 'Read(./secrets/**)'])).toBeUndefined();
    expect(withoutDeniedTools(['Read', 'Bash', 'Grep'], ['Grep', 'Bash(rm:*)'])).toEqual(['Read', 'Bash']);
  });
});

describe('--allowedTools as claude -p takes it', () => {
  test('commas and spaces separate rules, except inside a rule', () => {
    expect(splitToolRules('Read Bash(git log:*),Edit')).toEqual(['Read', 'Bash(git log:*)', 'Edit']);
    expect(splitToolRules(' Bash(npm run test, lint) ,, ')).toEqual(['Bash(npm run test, lint)']);
  });
});

describe('expected failures, in one line', () => {
  test("Temporal's own connection error is explained; a message durable-agent wrote is kept", () => {
    const env = { TEMPORAL_ADDRESS: '127.0.0.1:1' };
    expect(explainCliError(new Error('Failed to connect before the deadline'), env)).toBe(
      'no Temporal server answers at 127.0.0.1:1 (TEMPORAL_ADDRESS): start it, check the address, or unset TEMPORAL_ADDRESS to use the embedded server.',
    );
    class Refused extends Error {}
    const own =
      'prune refused, nothing was deleted: Temporal at 127.0.0.1:1 cannot be reached (Failed to connect before the deadline)';
    expect(explainCliError(new Refused(own), env)).toBe(own);
  });
});
