import { formatAgo, outcomeQuery, parseOutcome } from '../src/client/job-list';
import { activitySummary, progressDetails, toolCallLabel } from '../src/workflows/progress-details';

describe('what the Temporal UI shows of a job', () => {
  const ws = '/srv/app';

  test('a tool call is its tool and what it acts on, paths relative to the workspace', () => {
    expect(toolCallLabel({ name: 'Read', input: { file_path: '/srv/app/src/auth/login.ts' } }, ws)).toBe(
      'Read src/auth/login.ts',
    );
    expect(toolCallLabel({ name: 'Edit', input: { file_path: '/etc/hosts', old_string: 'a' } }, ws)).toBe(
      'Edit /etc/hosts',
    );
    expect(toolCallLabel({ name: 'Grep', input: { pattern: 'login|auth', path: '/srv/app/src' } }, ws)).toBe(
      'Grep login|auth in src',
    );
    expect(toolCallLabel({ name: 'Glob', input: { pattern: '**/*.ts' } }, ws)).toBe('Glob **/*.ts');
    expect(toolCallLabel({ name: 'Bash', input: { command: 'npm test\n  -- --watch' } }, ws)).toBe(
      'Bash npm test -- --watch',
    );
    expect(toolCallLabel({ name: 'NoSuchTool', input: {} }, ws)).toBe('NoSuchTool');
    // Whatever the model sent, the label is one short line.
    expect(toolCallLabel({ name: 'Read', input: { file_path: 42 } }, ws)).toBe('Read');
    const long = activitySummary(7, toolCallLabel({ name: 'Bash', input: { command: 'x'.repeat(500) } }, ws));
    expect(long).toHaveLength(120);
    expect(long.startsWith('turn 7 · Bash xxx')).toBe(true);
    expect(long.endsWith('…')).toBe(true);
  });

  test('current details: phase and turn, the parked calls, then the outcome', () => {
    const view = { turn: 3, maxTurns: 10, model: 'claude-sonnet-5-5', waitingFor: [] };
    expect(progressDetails({ ...view, phase: 'calling_model' })).toBe('**turn 3 of 10** · calling claude-sonnet-5-5');
    expect(
      progressDetails({
        ...view,
        maxTurns: undefined,
        phase: 'waiting_for_approval',
        waitingFor: [{ toolName: 'Bash', input: '{"command":"rm -rf build"}' }],
      }),
    ).toBe('**turn 3** · waiting for approval\n- Bash {"command":"rm -rf build"}');
    expect(progressDetails({ ...view, phase: 'finished', outcome: 'max_turns' })).toBe('**max_turns** after 3 turns');
  });
});

describe('ls --outcome', () => {
  const base = `WorkflowType = 'agentSession' AND ExecutionStatus != 'ContinuedAsNew'`;

  test('a Terminal reason, running, a Temporal ending, or a group by exit status', () => {
    expect(outcomeQuery()).toBe(base);
    expect(outcomeQuery(parseOutcome('max_turns'))).toBe(
      `${base} AND (ExecutionStatus IN ('Completed', 'Failed') AND DurableAgentOutcome IN ('max_turns'))`,
    );
    // A job waiting for approval is running: `running` lists it too.
    expect(outcomeQuery(parseOutcome('Running'))).toBe(`${base} AND ExecutionStatus = 'Running'`);
    expect(outcomeQuery(parseOutcome('waiting_for_approval'))).toBe(
      `${base} AND ExecutionStatus = 'Running' AND DurableAgentOutcome = 'waiting_for_approval'`,
    );
    expect(outcomeQuery(parseOutcome('terminated'))).toBe(`${base} AND ExecutionStatus IN ('Terminated')`);
    expect(outcomeQuery(parseOutcome('aborted'))).toBe(
      `${base} AND (ExecutionStatus IN ('Completed', 'Failed') AND DurableAgentOutcome IN ('aborted_streaming', 'aborted_tools'))`,
    );
    const failed = outcomeQuery(parseOutcome('failed'));
    for (const reason of ['model_error', 'prompt_too_long', 'setup_failed', 'refusal', 'stop_hook_prevented'])
      expect(failed).toContain(`'${reason}'`);
    for (const reason of ['completed', 'max_turns', 'aborted_tools', 'budget_exhausted'])
      expect(failed).not.toContain(`'${reason}'`);
    // A failed job with a Terminal has its reason as outcome: only one whose outcome is still open failed without one.
    const failedWithoutTerminal =
      `(ExecutionStatus = 'Failed' AND (DurableAgentOutcome IS NULL OR ` +
      `DurableAgentOutcome IN ('running', 'waiting_for_approval')))`;
    expect(outcomeQuery(parseOutcome('outside'))).toBe(
      `${base} AND (ExecutionStatus IN ('Terminated', 'TimedOut', 'Canceled') OR ${failedWithoutTerminal})`,
    );
    expect(outcomeQuery(parseOutcome('workflow_failed'))).toBe(`${base} AND ${failedWithoutTerminal}`);
  });

  test('anything else is refused with the list of what is accepted', () => {
    expect(() => parseOutcome('COMPLETED ')).not.toThrow();
    expect(() => parseOutcome("completed' OR 1=1")).toThrow(
      /is not an outcome\. Use one of: running, waiting_for_approval, completed, max_turns/,
    );
    expect(() => parseOutcome('done')).toThrow(/or a group: failed \(.*exit status 1\), aborted/);
  });

  test('age in its largest whole unit', () => {
    const now = new Date('2026-12-01T12:00:00Z');
    expect(formatAgo(new Date('2026-12-01T11:59:15Z'), now)).toBe('45s');
    expect(formatAgo(new Date('2026-12-01T11:48:00Z'), now)).toBe('12m');
    expect(formatAgo(new Date('2026-12-01T09:00:00Z'), now)).toBe('3h');
    expect(formatAgo(new Date('2026-11-28T12:00:00Z'), now)).toBe('3d');
  });
});
