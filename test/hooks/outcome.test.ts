import {
  combineHookOutcomes,
  HOOK_TEXT_CHARS,
  interpretHookRun,
  type HookOutcome,
  type HookRun,
  type RunHookEvent,
} from '../../src/shared/hooks';

const run = (over: Partial<HookRun>): HookRun => ({
  command: './h.sh',
  exitCode: 0,
  timedOut: false,
  timeoutSec: 60,
  stdout: '',
  stderr: '',
  ...over,
});
const json = (value: unknown) => run({ stdout: `${JSON.stringify(value)}\n` });
const interpret = (event: RunHookEvent, over: Partial<HookRun>) => interpretHookRun(event, run(over));

describe('interpretHookRun: exit codes', () => {
  it('exit 0 without output decides nothing', () => {
    expect(interpret('PreToolUse', {})).toEqual({ command: './h.sh', userMessages: [] });
  });

  it('exit 0 with plain text shows it to the user only', () => {
    expect(interpret('PostToolUse', { stdout: 'formatted 3 files\n' })).toEqual({
      command: './h.sh',
      userMessages: ['PostToolUse hook "./h.sh": formatted 3 files'],
    });
  });

  it('exit 2 blocks with stderr as the reason and ignores stdout', () => {
    const blocked = { exitCode: 2, stderr: 'tests fail\n', stdout: '{"decision":"approve"}' };
    expect(interpret('Stop', blocked)).toMatchObject({ decision: 'block', reason: 'tests fail' });
    expect(interpret('PreToolUse', blocked)).toMatchObject({ decision: 'deny', reason: 'tests fail' });
    expect(interpret('PostToolUse', blocked)).toMatchObject({ decision: 'block', reason: 'tests fail' });
    expect(interpret('Stop', { exitCode: 2 }).reason).toBe(
      'Stop hook "./h.sh" exited with code 2 and wrote no reason to stderr.',
    );
  });

  it('any other exit is a non-blocking error showing the first line of stderr', () => {
    expect(interpret('PreToolUse', { exitCode: 1, stderr: '\njq: not found\nmore\n' })).toEqual({
      command: './h.sh',
      userMessages: ['PreToolUse hook "./h.sh" failed with exit code 1: jq: not found'],
    });
    expect(interpret('Stop', { exitCode: null, signal: 'SIGSEGV' }).userMessages).toEqual([
      'Stop hook "./h.sh" was ended by signal SIGSEGV',
    ]);
  });

  it('points a sandboxed hook that could not be found at the sandbox', () => {
    const [message] = interpret('Stop', {
      exitCode: 127,
      stderr: 'bash: /home/me/.claude/hooks/x.sh: Permission denied',
      sandboxed: true,
    }).userMessages;
    expect(message).toContain('hooks run in the same OS sandbox as Bash');
  });

  it('a timeout is a non-blocking error', () => {
    expect(interpret('PreToolUse', { timedOut: true, exitCode: null, timeoutSec: 5 })).toEqual({
      command: './h.sh',
      userMessages: [
        expect.stringContaining(
          'PreToolUse hook "./h.sh" timed out after 5 s; it and every process it started were killed',
        ),
      ],
    });
  });
});

describe('interpretHookRun: JSON output', () => {
  it('PreToolUse permissionDecision allow, deny, ask; defer is an ask', () => {
    const decide = (permissionDecision: string) =>
      interpretHookRun(
        'PreToolUse',
        json({
          hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason: 'why' },
        }),
      );
    expect(decide('deny')).toMatchObject({ decision: 'deny', reason: 'why' });
    expect(decide('ask')).toMatchObject({ decision: 'ask', reason: 'why' });
    expect(decide('allow')).toMatchObject({ decision: 'allow', reason: 'why' });
    expect(decide('defer')).toMatchObject({ decision: 'ask', reason: 'why' });
  });

  it('PreToolUse takes the deprecated top-level decision: approve is allow, block is deny', () => {
    expect(interpretHookRun('PreToolUse', json({ decision: 'approve' }))).toMatchObject({ decision: 'allow' });
    expect(interpretHookRun('PreToolUse', json({ decision: 'block', reason: 'no' }))).toMatchObject({
      decision: 'deny',
      reason: 'no',
    });
  });

  it('PreToolUse updatedInput cannot be honoured, so the call is denied', () => {
    const outcome = interpretHookRun(
      'PreToolUse',
      json({ hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: 'ls' } } }),
    );
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain('updatedInput');
    expect(outcome.userMessages).toEqual([
      expect.stringContaining('updatedInput, which durable-agent does not support'),
    ]);
  });

  it('PostToolUse and Stop block with a reason; additionalContext goes to the model', () => {
    expect(
      interpretHookRun(
        'PostToolUse',
        json({
          decision: 'block',
          reason: 'lint failed',
          hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'ctx' },
        }),
      ),
    ).toEqual({
      command: './h.sh',
      decision: 'block',
      reason: 'lint failed',
      additionalContext: 'ctx',
      userMessages: [],
    });
    expect(interpretHookRun('Stop', json({ decision: 'block', reason: 'run the tests' }))).toMatchObject({
      decision: 'block',
      reason: 'run the tests',
    });
  });

  it('a block without a reason still blocks, and the user is told', () => {
    const outcome = interpretHookRun('Stop', json({ decision: 'block' }));
    expect(outcome.decision).toBe('block');
    expect(outcome.reason).toContain('asked you to continue');
    expect(outcome.userMessages).toEqual([expect.stringContaining('without a reason')]);
  });

  it('continue false carries stopReason; systemMessage is for the user', () => {
    expect(
      interpretHookRun('PostToolUse', json({ continue: false, stopReason: 'Build failed', systemMessage: 'careful' })),
    ).toEqual({
      command: './h.sh',
      preventContinuation: { stopReason: 'Build failed' },
      userMessages: ['PostToolUse hook "./h.sh": careful'],
    });
    expect(interpretHookRun('Stop', json({ continue: false })).preventContinuation?.stopReason).toBe(
      'Stop hook "./h.sh" ended the session',
    );
  });

  it('ignores hookSpecificOutput meant for another event', () => {
    const outcome = interpretHookRun(
      'PreToolUse',
      json({ hookSpecificOutput: { hookEventName: 'PostToolUse', permissionDecision: 'deny' } }),
    );
    expect(outcome.decision).toBeUndefined();
    expect(outcome.userMessages).toEqual([
      expect.stringContaining('hookSpecificOutput for PostToolUse, not PreToolUse'),
    ]);
  });

  it('JSON that is not valid hook output is reported and ignored; text that is not JSON is plain text', () => {
    expect(
      interpretHookRun('PreToolUse', json({ hookSpecificOutput: { permissionDecision: 'Deny' } })).userMessages,
    ).toEqual([
      expect.stringContaining('printed JSON that is not valid hook output (hookSpecificOutput.permissionDecision'),
    ]);
    expect(interpret('Stop', { stdout: '{not json' }).userMessages).toEqual(['Stop hook "./h.sh": {not json']);
  });

  it('caps what a chatty hook says, keeping its start and its end (where test runners sum up)', () => {
    const stderr = `FIRST ${'x'.repeat(HOOK_TEXT_CHARS + 500)} 3 tests failed`;
    const outcome = interpret('Stop', { exitCode: 2, stderr });
    expect(outcome.reason?.length).toBeLessThan(HOOK_TEXT_CHARS + 100);
    expect(outcome.reason).toContain(`[hook output cut: ${stderr.length - HOOK_TEXT_CHARS} characters left out]`);
    expect(outcome.reason?.startsWith('FIRST')).toBe(true);
    expect(outcome.reason?.endsWith('3 tests failed')).toBe(true);
  });
});

describe('combineHookOutcomes', () => {
  const outcome = (over: Partial<HookOutcome>): HookOutcome => ({ command: 'c', userMessages: [], ...over });

  it('PreToolUse: deny beats ask beats allow, reasons of the winning decision joined', () => {
    expect(
      combineHookOutcomes('PreToolUse', [
        outcome({ decision: 'allow', reason: 'fine' }),
        outcome({ decision: 'ask', reason: 'hm' }),
        outcome({ decision: 'deny', reason: 'no' }),
        outcome({ decision: 'deny', reason: 'never' }),
      ]),
    ).toEqual({ outcome: 'deny', reason: 'no\n\nnever', userMessages: [] });
    expect(
      combineHookOutcomes('PreToolUse', [
        outcome({ decision: 'allow' }),
        outcome({ decision: 'ask', reason: 'sure?' }),
      ]),
    ).toEqual({ outcome: 'ask', reason: 'sure?', userMessages: [] });
  });

  it("an allow's reason is shown to the user, not the model", () => {
    expect(combineHookOutcomes('PreToolUse', [outcome({ decision: 'allow', reason: 'known safe' })])).toEqual({
      outcome: 'allow',
      userMessages: ['PreToolUse hook allowed the call: known safe'],
    });
  });

  it('any block blocks; context and user messages of every hook are kept', () => {
    expect(
      combineHookOutcomes('PostToolUse', [
        outcome({ additionalContext: 'a', userMessages: ['one'] }),
        outcome({ decision: 'block', reason: 'lint', additionalContext: 'b' }),
        outcome({ userMessages: ['two'] }),
      ]),
    ).toEqual({ outcome: 'block', reason: 'lint', additionalContext: 'a\n\nb', userMessages: ['one', 'two'] });
    expect(combineHookOutcomes('Stop', [outcome({}), outcome({})])).toEqual({ outcome: 'none', userMessages: [] });
  });

  it('continue false wins: Stop stops, PreToolUse denies, and the stop reasons are kept', () => {
    const stop = outcome({ preventContinuation: { stopReason: 'Build failed' } });
    expect(combineHookOutcomes('Stop', [outcome({ decision: 'block', reason: 'go on' }), stop])).toEqual({
      outcome: 'none',
      preventContinuation: { stopReason: 'Build failed' },
      userMessages: [],
    });
    expect(combineHookOutcomes('PreToolUse', [outcome({ decision: 'allow' }), stop])).toMatchObject({
      outcome: 'deny',
      preventContinuation: { stopReason: 'Build failed' },
    });
    expect(
      combineHookOutcomes('PostToolUse', [stop, outcome({ preventContinuation: { stopReason: 'And lint' } })])
        .preventContinuation,
    ).toEqual({ stopReason: 'Build failed\nAnd lint' });
  });
});
