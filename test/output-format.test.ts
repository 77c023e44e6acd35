import { explainCliError } from '../src/client/cli-errors';
import { resultMessage, resultSubtype, StreamJsonPrinter } from '../src/client/output-format';
import { splitToolRules } from '../src/client/session-options';
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
