/**
 * The follower's bookkeeping and the terminal view, without a server: snapshots and pending
 * activities as `follow()` would hand them over, and what reaches the screen.
 */
import type { FollowEvent } from '../src/client/live-events';
import { LiveFollower } from '../src/client/live-follower';
import type { PendingActivity } from '../src/client/live-follower';
import { LivePrinter, terminalStyle } from '../src/client/live-printer';
import type { Output } from '../src/client/render';
import type { SessionEvent, SessionSnapshot } from '../src/shared/session';
import { STREAM_TAIL_CHARS } from '../src/shared/stream-progress';

function snapshot(events: SessionEvent[], overrides: Partial<SessionSnapshot> = {}): SessionSnapshot {
  return {
    phase: 'calling_model',
    turnCount: 1,
    maxTurns: undefined,
    model: 'claude-sonnet-5-5',
    lastAssistantText: '',
    runningTools: [],
    pendingApprovals: [],
    todos: [],
    permissionMode: undefined,
    usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    queuedUserMessages: 0,
    abortRequested: false,
    events,
    terminal: undefined,
    ...overrides,
  } as SessionSnapshot;
}

/** The model call as the server shows it: `text` streamed so far by `attempt` (heartbeat's own attempt `beat`). */
function modelCall(
  text: string,
  attempt = 1,
  extra: Partial<PendingActivity> & { beat?: number } = {},
): PendingActivity {
  const { beat = attempt, ...rest } = extra;
  return {
    activityId: '7',
    activityType: 'callModel',
    state: 'started',
    attempt,
    maximumAttempts: 20,
    details: { chars: text.length, tail: text.slice(-STREAM_TAIL_CHARS), attempt: beat },
    ...rest,
  };
}

function recorder() {
  const events: FollowEvent[] = [];
  const follower = new LiveFollower('job-1', { onEvent: (event) => events.push(event) });
  return { events, follower };
}

/** An Output that records everything written, partial text included, as one string. */
function screen(isTTY = false): Output & { text: () => string } {
  let text = '';
  return {
    write: (line) => (text += `${line}\n`),
    writePartial: (chunk) => (text += chunk),
    isTTY,
    text: () => text,
  };
}

describe('LiveFollower', () => {
  test('streams only the new characters, then the reply without what was streamed', () => {
    const { events, follower } = recorder();
    follower.onSnapshot(snapshot([]));
    follower.onActivities('run', [modelCall('Hello, ')]);
    follower.onActivities('run', [modelCall('Hello, ')]);
    follower.onActivities('run', [modelCall('Hello, wor')]);
    const reply = 'Hello, world.';
    follower.onSnapshot(
      snapshot([{ seq: 1, turn: 1, kind: 'assistant_text', text: reply }], { lastAssistantText: reply }),
    );
    expect(events).toEqual([
      { kind: 'text_delta', turn: 1, text: 'Hello, ', restart: false, skipped: 0 },
      { kind: 'text_delta', turn: 1, text: 'wor', restart: false, skipped: 0 },
      { kind: 'assistant_text', seq: 1, turn: 1, text: reply, streamed: 10 },
    ]);
  });

  test('a retried call: its stale heartbeat is ignored, the retry is told once, the restart is marked', () => {
    const { events, follower } = recorder();
    follower.onSnapshot(snapshot([]));
    follower.onActivities('run', [modelCall('First try')]);
    const backoff = modelCall('First try', 2, {
      beat: 1,
      state: 'scheduled',
      lastFailure: 'Model API error 529 overloaded_error: Overloaded',
      nextAttemptAt: Date.parse('2030-01-01T10:00:05Z'),
    });
    follower.onActivities('run', [backoff]);
    follower.onActivities('run', [{ ...backoff, state: 'started', lastStartedAt: Date.parse('2030-01-01T10:00:05Z') }]);
    follower.onActivities('run', [modelCall('', 2, { lastFailure: 'x' })]);
    follower.onActivities('run', [modelCall('Second', 2, { lastFailure: 'x' })]);
    follower.onActivities('run', [modelCall('Second try', 2, { lastFailure: 'x' })]);
    expect(events).toEqual([
      { kind: 'text_delta', turn: 1, text: 'First try', restart: false, skipped: 0 },
      {
        kind: 'retry',
        turn: 1,
        what: 'model call',
        activityType: 'callModel',
        activityId: '7',
        failedAttempt: 1,
        nextAttempt: 2,
        unseenFailures: 0,
        maximumAttempts: 20,
        cause: 'Model API error 529 overloaded_error: Overloaded',
        nextAttemptAt: Date.parse('2030-01-01T10:00:05Z'),
        started: false,
      },
      { kind: 'text_delta', turn: 1, text: 'Second', restart: true, skipped: 0 },
      { kind: 'text_delta', turn: 1, text: ' try', restart: false, skipped: 0 },
    ]);
  });

  test('a follower that fell behind says how much it skipped; a clipped event gives way to the whole text', () => {
    const { events, follower } = recorder();
    follower.onSnapshot(snapshot([]));
    const long = 'a'.repeat(STREAM_TAIL_CHARS + 100);
    follower.onActivities('run', [modelCall(long)]);
    const whole = `${long}bcd`;
    follower.onSnapshot(
      snapshot([{ seq: 1, turn: 1, kind: 'assistant_text', text: `${'a'.repeat(2000)}…` }], {
        lastAssistantText: whole,
      }),
    );
    expect(events[0]).toMatchObject({ kind: 'text_delta', skipped: 100 });
    expect((events[0] as { text: string }).text).toHaveLength(STREAM_TAIL_CHARS);
    expect(events[1]).toEqual({ kind: 'assistant_text', seq: 1, turn: 1, text: whole, streamed: long.length });
  });

  test('tool retries name the tool; events dropped before the first look are counted', () => {
    const { events, follower } = recorder();
    follower.onSnapshot(
      snapshot([{ seq: 4, turn: 2, kind: 'tool_call', toolUseId: 'toolu_1', name: 'Bash', input: '{}' }], {
        phase: 'running_tools',
        turnCount: 2,
      }),
    );
    const bash: PendingActivity = {
      activityId: 'tool-toolu_1',
      activityType: 'runTool',
      state: 'started',
      attempt: 2,
      maximumAttempts: 5,
      details: undefined,
      lastFailure: 'activity Heartbeat timeout',
    };
    follower.onActivities('run', [bash]);
    follower.onActivities('run', [bash]);
    expect(events.map((event) => event.kind)).toEqual(['earlier_events_dropped', 'tool_call', 'retry']);
    expect(events[0]).toEqual({ kind: 'earlier_events_dropped', count: 3 });
    expect(events[2]).toMatchObject({
      what: 'Bash (toolu_1)',
      cause: 'activity Heartbeat timeout',
      started: true,
      unseenFailures: 0,
    });
    // Attempt 2 failed too, between two looks: the next retry says so.
    follower.onActivities('run', [{ ...bash, attempt: 4 }]);
    expect(events[3]).toMatchObject({ failedAttempt: 3, nextAttempt: 4, unseenFailures: 1 });
  });
});

describe('LivePrinter', () => {
  test('streamed text continues its line and the reply ends it; no colour without a terminal', () => {
    const out = screen();
    const printer = new LivePrinter(out);
    printer.onEvent({ kind: 'text_delta', turn: 1, text: 'Hello, ', restart: false, skipped: 0 });
    printer.onEvent({ kind: 'text_delta', turn: 1, text: 'wor', restart: false, skipped: 0 });
    printer.onEvent({ kind: 'assistant_text', seq: 1, turn: 1, text: 'Hello, world.', streamed: 10 });
    printer.onEvent({ seq: 2, turn: 1, kind: 'tool_call', toolUseId: 't', name: 'Read', input: '{"file_path":"a"}' });
    printer.onStatus({ phase: 'running_tools', turn: 1, runningTools: ['Read'] });
    printer.close();
    expect(out.text()).toBe('\n── turn 1 ──\nHello, world.\n→ Read {"file_path":"a"}\n');
  });

  test('an Output that takes whole lines gets the streamed text line by line', () => {
    const lines: string[] = [];
    const printer = new LivePrinter({ write: (line) => lines.push(line) });
    printer.onEvent({ kind: 'text_delta', turn: 1, text: 'one\ntw', restart: false, skipped: 0 });
    expect(lines).toEqual(['\n── turn 1 ──', 'one']);
    printer.onEvent({ kind: 'assistant_text', seq: 1, turn: 1, text: 'one\ntwo', streamed: 6 });
    expect(lines).toEqual(['\n── turn 1 ──', 'one', 'two']);
  });

  test('a retry line says the cause and when the next attempt starts', () => {
    const out = screen();
    const at = new Date(2030, 0, 1, 10, 0, 5).getTime();
    const printer = new LivePrinter(out, { now: () => at - 3_000 });
    printer.onEvent({
      kind: 'retry',
      turn: 1,
      what: 'model call',
      activityType: 'callModel',
      activityId: '7',
      failedAttempt: 3,
      nextAttempt: 4,
      unseenFailures: 2,
      maximumAttempts: 20,
      cause: 'Model API error 529 overloaded_error: Overloaded',
      nextAttemptAt: at,
      started: false,
    });
    expect(out.text()).toBe(
      '\n── turn 1 ──\n' +
        '↻ model call: attempt 3 failed (after 2 earlier failed attempts): Model API error 529 overloaded_error: ' +
        'Overloaded — attempt 4 of 20 at 10:00:05 (in 3 s)\n',
    );
  });

  test('while the model call is in a thinking block, the status and the spinner say it thinks', () => {
    const statuses: unknown[] = [];
    const follower = new LiveFollower('job-1', { onEvent: () => {}, onStatus: (status) => statuses.push(status) });
    follower.onSnapshot(snapshot([], { phase: 'calling_model' }));
    follower.onActivities('run', [modelCall('', 1, { details: { chars: 0, tail: '', attempt: 1, thinking: 120 } })]);
    follower.status();
    follower.onActivities('run', [modelCall('Done thinking.')]);
    follower.status();
    expect(statuses).toEqual([
      expect.objectContaining({ phase: 'calling_model', modelThinking: 120 }),
      expect.not.objectContaining({ modelThinking: expect.anything() }),
    ]);

    const tty = screen(true);
    const printer = new LivePrinter(tty, { ...terminalStyle(tty, {}), now: () => 0 });
    printer.onStatus({ phase: 'calling_model', turn: 1, runningTools: [], modelThinking: 120 });
    printer.close();
    expect(tty.text()).toContain('the model is thinking');
  });

  test('colour and spinner only at a terminal; NO_COLOR (any non-empty value) turns colour off', () => {
    expect(terminalStyle(screen(false), {})).toMatchObject({ color: false, spinner: false });
    expect(terminalStyle(screen(true), {})).toMatchObject({ color: true, spinner: true });
    expect(terminalStyle(screen(true), { NO_COLOR: '1' })).toMatchObject({ color: false, spinner: true });
    expect(terminalStyle(screen(true), { NO_COLOR: '' })).toMatchObject({ color: true, spinner: true });
    expect(terminalStyle(screen(true), { TERM: 'dumb' })).toMatchObject({ color: false, spinner: false });

    const tty = screen(true);
    const printer = new LivePrinter(tty, { ...terminalStyle(tty, {}), now: () => 0 });
    printer.onStatus({ phase: 'calling_model', turn: 1, runningTools: [] });
    printer.onEvent({ seq: 1, turn: 1, kind: 'notice', text: 'hello' });
    printer.close();
    // The spinner is drawn, then erased before the next line; the notice is dimmed.
    expect(tty.text()).toBe('\r\x1b[2K\x1b[2m⠋ waiting for the model\x1b[0m\r\x1b[2K\x1b[2m· hello\x1b[0m\n');
  });
});
