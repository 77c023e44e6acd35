/**
 * Records the histories the replay test runs: representative jobs, each exercising a different
 * path of the loop. Run `npm run record-histories` after a deliberate change of workflow behaviour
 * (guarded by `patched()`), never to make a failing replay pass.
 */
import { decideCronCreate } from '../../src/shared/tools/cron';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { WorkflowHandle } from '@temporalio/client';
import type { ScriptedSession } from '../../src/model-server';
import type { SessionInput } from '../../src/shared/session';
import {
  abortSignal,
  approvalSignal,
  closeInputSignal,
  hookCallbackAnswerSignal,
  setMaxTurnsSignal,
  setModelSignal,
  setPermissionModeSignal,
  snapshotQuery,
  userMessageSignal,
  wakeSignal,
} from '../../src/workflows/definitions';
import {
  JOB_SEARCH_ATTRIBUTES,
  OUTCOME_KEY,
  RUNNING_OUTCOME,
  startSearchAttributes,
} from '../../src/workflows/search-attributes';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
} from './harness';
import { terminalOf } from './jobs';
import { backgroundTaskId } from '../../src/workflows/background-tasks';

interface Scenario {
  name: string;
  session: ScriptedSession;
  input?: Partial<SessionInput>;
  /** Runs while the job runs: signals, cancellation. */
  drive?: (handle: WorkflowHandle, server: ScriptedModelServer) => Promise<void>;
  extraArgs?: string[];
  /** Started as the CLI starts a job: with its search attributes, on a server that knows them. */
  searchAttributes?: boolean;
  /** Files besides the usual ones in the job's workspace. */
  files?: Record<string, string>;
}

const files = {
  'src/auth/login.ts': 'export function login(user: string) {\n  return user.length > 0;\n}\n',
  'notes.txt': 'version: 1\n',
};

const read = (id: string, file = 'src/auth/login.ts') => ({
  type: 'tool_use' as const,
  id,
  name: 'Read',
  input: { file_path: file },
});
const wakeup = (id: string, input: Record<string, unknown>) => ({
  type: 'tool_use' as const,
  id,
  name: 'ScheduleWakeup',
  input,
});
const bash = (id: string, command: string) => ({ type: 'tool_use' as const, id, name: 'Bash', input: { command } });
const text = (value: string) => ({ type: 'text' as const, text: value });
/** The ID the cron-tools scenario's schedule gets from its call (see `decideCronCreate`). */
const CRON_ID = decideCronCreate({ cron: '* * * * *', prompt: 'x' }, 'cr1', 0, []).crons[0]!.id;

const edit = (id: string, from: string, to: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'Edit',
  input: { file_path: 'notes.txt', old_string: from, new_string: to },
});

async function approveWhenAsked(
  handle: WorkflowHandle,
  answers: Array<{ decision: 'allow' | 'deny'; always?: boolean }>,
) {
  for (const answer of answers) {
    for (;;) {
      const snapshot = await handle.query(snapshotQuery);
      if (snapshot.pendingApprovals.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await handle.signal(approvalSignal, answer);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

const scenarios: Scenario[] = [
  {
    name: 'approvals-todos-and-rules',
    // With the search attributes: the outcome is waiting_for_approval while the Edit is parked.
    searchAttributes: true,
    input: { permissions: { mode: 'default', deny: ['Bash(rm:*)'] } },
    session: {
      replies: [
        {
          content: [
            {
              type: 'tool_use',
              id: 'td1',
              name: 'TodoWrite',
              input: {
                todos: [{ content: 'Bump the version', status: 'in_progress', activeForm: 'Bumping the version' }],
              },
            },
            read('n1', 'notes.txt'),
          ],
        },
        { content: [edit('n2', 'version: 1', 'version: 2')] },
        { content: [edit('n3', 'version: 2', 'version: 3'), bash('n4', 'rm notes.txt')] },
        { content: [edit('n5', 'version: 3', 'version: 4')] },
        { content: [text('Version bumped.')] },
      ],
    },
    drive: (handle) => approveWhenAsked(handle, [{ decision: 'allow', always: true }]),
  },
  {
    name: 'approval-denied-and-timeout',
    searchAttributes: true,
    input: { permissions: { mode: 'default', approvalTimeoutMs: 1_000 } },
    session: {
      replies: [
        { content: [read('d1', 'notes.txt')] },
        { content: [edit('d2', 'version: 1', 'version: 2')] },
        { content: [edit('d3', 'version: 1', 'version: 3')] },
        { content: [text('Nothing changed.')] },
      ],
    },
    drive: (handle) => approveWhenAsked(handle, [{ decision: 'deny' }]),
  },
  {
    name: 'check-login',
    session: {
      replies: [
        {
          content: [
            text('Searching.'),
            { type: 'tool_use', id: 't1', name: 'Grep', input: { pattern: 'login|auth', path: 'src' } },
          ],
        },
        { content: [read('t2')] },
        { content: [text('The login module only checks that the user name is not empty.')] },
      ],
    },
  },
  {
    name: 'parallel-tools-bash-failure',
    session: {
      replies: [
        {
          content: [
            read('p1'),
            { type: 'tool_use', id: 'p2', name: 'Glob', input: { pattern: '**/*.ts' } },
            {
              type: 'tool_use',
              id: 'p3',
              name: 'Edit',
              input: { file_path: 'notes.txt', old_string: 'version: 1', new_string: 'version: 2' },
            },
            bash('p4', 'exit 3'),
            read('p5', 'notes.txt'),
          ],
        },
        {
          content: [{ type: 'tool_use', id: 'p6', name: 'NoSuchTool', input: {} }, read('p7', 42 as unknown as string)],
        },
        { content: [text('Done despite the errors.')] },
      ],
    },
  },
  {
    name: 'abort-during-tools',
    session: { replies: [{ content: [bash('a1', 'sleep 30')] }] },
    drive: async (handle) => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await handle.signal(abortSignal, 'recording an abort');
    },
  },
  {
    // Recorded after the abort-waits-for-tools patch: the workflow waits for the Bash activity's
    // cancellation before it writes the Terminal (abort-during-tools is the job before it).
    name: 'abort-waits-for-tools',
    session: { replies: [{ content: [bash('w1', 'sleep 30; echo late >> effects.log')] }] },
    drive: async (handle) => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await handle.signal(abortSignal, 'recording an abort that waits for the tools');
    },
  },
  {
    name: 'max-turns-and-user-message',
    input: { maxTurns: 2 },
    session: {
      slowTurns: { 0: 100 },
      replies: [
        { content: [text('First look.'), read('m1')] },
        { content: [read('m2')] },
        { content: [read('m3')] },
        { content: [read('m4')] },
      ],
    },
    drive: async (handle) => {
      await handle.signal(userMessageSignal, 'Also look at notes.txt');
      // Refused: over what a message may carry inline.
      await handle.signal(userMessageSignal, `Too long: ${'x'.repeat(33_000)}`);
      // By reference, to content the store does not hold: the model call reports it lost.
      await handle.signal(userMessageSignal, {
        $contentRef: `sha256:${'a'.repeat(64)}`,
        chars: 5_000,
        preview: 'notes',
      });
      await handle.signal(setMaxTurnsSignal, 3);
    },
  },
  {
    name: 'overload-fallback-and-max-tokens',
    input: { fallbackModel: 'claude-haiku-5-5' },
    session: {
      faults: [
        { turn: 0, attempt: 1, kind: 'http', status: 529, errorType: 'overloaded_error' },
        { turn: 0, attempt: 2, kind: 'http', status: 529, errorType: 'overloaded_error' },
        { turn: 0, attempt: 3, kind: 'http', status: 529, errorType: 'overloaded_error' },
      ],
      replies: [
        { content: [text('Cut off mid-')], stop_reason: 'max_tokens' },
        { content: [text('sentence, and done.')] },
      ],
    },
  },
  {
    // Cut at the output limit every time: escalated, three continuation prompts, then its own Terminal.
    name: 'max-output-exhausted',
    session: {
      replies: Array.from({ length: 5 }, (_, i) => ({
        content: [text(`Part ${i}, `)],
        stop_reason: 'max_tokens' as const,
      })),
    },
  },
  {
    // Cut inside a tool call twice: escalated, then the complete call runs and the cut one never does.
    name: 'cut-tool-use',
    session: {
      replies: [
        {
          content: [
            bash('cut1', 'echo one >> notes.txt'),
            { type: 'tool_use', id: 'cut2', name: 'Bash', input: {}, partial_json: '{"command":"echo tw' },
          ],
          stop_reason: 'max_tokens',
        },
        { content: [text('Split the rest into smaller calls.')] },
      ],
    },
  },
  {
    // A small window: microcompact, then autocompact (a compaction activity and a restarted
    // transcript), then the job goes on from the summary.
    name: 'autocompact',
    input: { modelLimits: [{ prefix: 'claude-sonnet-5-5', contextWindow: 12_000, maxOutputTokens: 2_000 }] },
    session: {
      contextWindow: 12_000,
      replies: [
        ...Array.from({ length: 12 }, (_, i) => ({
          content: [text(`Step ${i}.`), bash(`ac${i}`, `head -c 3000 /dev/zero | tr '\\0' ${'abcdef'[i % 6]}`)],
        })),
        { content: [text('Finished with a compacted context.')] },
      ],
    },
  },
  {
    // The API says the prompt is too long: compacted once, the turn sent again.
    name: 'prompt-too-long-recovered',
    session: {
      replies: [{ content: [text('Reading.'), read('pt1')] }, { content: [text('Answered after compacting.')] }],
      faults: [
        {
          turn: 1,
          attempt: 1,
          kind: 'http',
          status: 400,
          errorType: 'invalid_request_error',
          message: 'prompt is too long: 250000 tokens > 200000 maximum',
        },
      ],
    },
  },
  {
    // A --stop-hook that blocks once (the file is missing), then passes; a fallback chain.
    name: 'stop-hook-blocks-once',
    input: {
      stopHooks: ["test -f done.txt || { echo 'done.txt is missing' >&2; exit 2; }"],
      fallbackModel: 'claude-haiku-4-5',
      fallbackModels: ['claude-haiku-4-5', 'claude-opus-4-7'],
    },
    session: {
      replies: [
        { content: [text('Done, I think.')] },
        { content: [bash('sh1', 'touch done.txt')] },
        { content: [text('Now done.')] },
      ],
    },
  },
  {
    name: 'continue-as-new',
    extraArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=20'],
    session: {
      replies: [
        ...Array.from({ length: 6 }, (_, i) => ({ content: [text(`Step ${i}.`), read(`c${i}`)] })),
        { content: [text('Finished after continuing as new.')] },
      ],
    },
  },
  {
    // Cost counted per call (a compaction's too) and the budget ending the job before a call.
    name: 'budget-exhausted',
    input: {
      modelPrices: [{ prefix: 'claude-sonnet-5-5', input: 10, output: 0, cacheWrite: 0, cacheRead: 0 }],
      maxBudgetUsd: 2.5,
    },
    session: {
      replies: [0, 1, 2].map((i) => ({ content: [read(`b${i}`)], usage: { input_tokens: 100_000 } })),
      faults: [
        {
          turn: 0,
          attempt: 1,
          kind: 'reply',
          reply: {
            content: [text('Part of')],
            stop_reason: 'model_context_window_exceeded',
            usage: { input_tokens: 100_000 },
          },
        },
      ],
    },
  },
  {
    // Started with the job search attributes: the end sets outcome, turns and model (patched('search-attributes')).
    name: 'search-attributes',
    searchAttributes: true,
    input: { maxTurns: 2 },
    session: {
      replies: [
        { content: [text('Searching.'), { type: 'tool_use', id: 's1', name: 'Grep', input: { pattern: 'login' } }] },
        { content: [read('s2')] },
      ],
    },
  },
  {
    // A job that continues a conversation (`run --resume-from`, inline): its unanswered call is
    // answered as not run and the prompt joins that message (patched('resume-from')).
    name: 'resume-from',
    input: {
      prompt: 'Now tell me what it checks',
      resumeFrom: {
        source: 'file recorded.jsonl',
        messages: [
          { role: 'user', content: 'Check the login module' },
          { role: 'assistant', content: [text('Reading it.'), read('old1')] },
        ],
      },
    },
    session: {
      replies: [
        { content: [text('(not asked: the conversation had this turn already)')] },
        { content: [read('n1')] },
        { content: [text('It checks that the user name is not empty.')] },
      ],
    },
  },
  {
    // Bash left out of the offered tools (`--disallowedTools Bash`): a call of it is answered
    // "No such tool available" before hooks and rules (patched('unoffered-tool')); that answer and
    // a bad TodoWrite input's, which the workflow gives itself, in Claude Code's words
    // (patched('tool-use-error-wording')).
    name: 'unoffered-tool',
    input: { tools: ['Read', 'Grep', 'Glob', 'TodoWrite'] },
    session: {
      replies: [
        {
          content: [
            text('Looking.'),
            bash('u1', 'cat src/auth/login.ts'),
            read('u2'),
            { type: 'tool_use' as const, id: 'u3', name: 'TodoWrite', input: { todos: [{ content: 'Read it' }] } },
          ],
        },
        { content: [text('It checks that the user name is not empty.')] },
      ],
    },
  },
  {
    // ScheduleWakeup (patched('schedule-wakeup')): a bad input and a wake-up in one reply; input
    // that comes while the job sleeps takes a turn and the job sleeps on; the timer fires; a second
    // wake-up is fired early by `wake` (sent with an argument it ignores); `stop: true` cancels.
    name: 'schedule-wakeup',
    session: {
      replies: [
        {
          content: [
            text('I will check back in a minute.'),
            wakeup('w1', { reason: 'no delay given' }),
            wakeup('w2', { delaySeconds: 5, reason: 'the build takes a minute', prompt: 'Check the build.' }),
          ],
        },
        { content: [text('Sleeping until the build is done.')] },
        { content: [text('Noted.')] },
        { content: [wakeup('w3', { delaySeconds: 3_600, reason: 'idle', prompt: 'Look again.', noop: true })] },
        { content: [text('Sleeping for an hour.')] },
        { content: [wakeup('w4', { stop: true })] },
        { content: [text('Done watching.')] },
      ],
    },
    drive: async (handle) => {
      const asleep = async (turn: number) => {
        for (;;) {
          const snapshot = await handle.query(snapshotQuery);
          if (snapshot.phase === 'sleeping' && snapshot.turnCount === turn) return;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      };
      await asleep(2);
      await handle.signal(userMessageSignal, 'The build is slow today.');
      // Turn 3 answers the message; the wake-up of turn 1 then fires on its own (clamped to 60 s).
      await asleep(5);
      await handle.signal(wakeSignal, ...(['now'] as unknown as []));
    },
  },
  {
    // Background commands (patched('background-bash')): two start in the background, the model
    // stops one with TaskStop (and names a task that does not exist), the turn ends while the
    // other runs, and its ending comes back as a notification that takes the next turn.
    name: 'background-bash',
    input: { permissions: { mode: 'bypassPermissions' } },
    session: {
      replies: [
        {
          content: [
            text('Starting both.'),
            {
              type: 'tool_use' as const,
              id: 'bg1',
              name: 'Bash',
              input: { command: 'sleep 2; echo built', run_in_background: true },
            },
            {
              type: 'tool_use' as const,
              id: 'bg2',
              name: 'Bash',
              input: { command: 'sleep 300', run_in_background: true },
            },
          ],
        },
        {
          content: [
            { type: 'tool_use' as const, id: 'st1', name: 'TaskStop', input: { task_id: backgroundTaskId('bg2') } },
            { type: 'tool_use' as const, id: 'st2', name: 'TaskStop', input: { task_id: 'bnosuchid' } },
          ],
        },
        { content: [text('Waiting for the build.')] },
        { content: [text('The build is done.')] },
      ],
    },
  },
  {
    // Agent (patched('agent-subagents')): a bad input, an unknown agent type, and one agent in the
    // foreground whose report is the call's result. The agent is a child job on the same scripted
    // server, whose first request (no assistant message) is turn 0: its reply 0 is the parent's, so
    // the child's call of Agent, a tool it is not offered, is answered so and the child ends.
    name: 'agent-subagent',
    input: { permissions: { mode: 'bypassPermissions' } },
    session: {
      replies: [
        {
          content: [
            text('Handing it over.'),
            { type: 'tool_use' as const, id: 'ag1', name: 'Agent', input: { prompt: 'no description' } },
            {
              type: 'tool_use' as const,
              id: 'ag2',
              name: 'Agent',
              input: { description: 'Explore', prompt: 'Look around.', subagent_type: 'Explore' },
            },
            {
              type: 'tool_use' as const,
              id: 'ag3',
              name: 'Agent',
              input: {
                description: 'Read the login',
                prompt: 'Read src/auth/login.ts and report.',
                run_in_background: false,
              },
            },
          ],
        },
        { content: [text('The agent has reported.')] },
      ],
    },
  },
  {
    // `.claude/agents` definitions (patched('agent-definitions')): a type that does not exist is
    // named with the ones that do; a defined type's agent gets its prompt and only its tools.
    // The agent is a child job on the same scripted server (see agent-subagent): its first request
    // is turn 0, whose Agent calls it is not offered, and its turn 1 ends it.
    name: 'agent-definitions',
    input: { permissions: { mode: 'bypassPermissions' } },
    files: {
      '.claude/agents/reader.md':
        '---\nname: reader\ndescription: Reads and reports\ntools: Read, Grep\n---\nYou only read.\n',
    },
    session: {
      replies: [
        {
          content: [
            {
              type: 'tool_use' as const,
              id: 'ad1',
              name: 'Agent',
              input: { description: 'x', prompt: 'x', subagent_type: 'nosuch' },
            },
            {
              type: 'tool_use' as const,
              id: 'ad2',
              name: 'Agent',
              input: {
                description: 'Read',
                prompt: 'Read the notes.',
                subagent_type: 'reader',
                run_in_background: false,
              },
            },
          ],
        },
        { content: [text('Read.')] },
      ],
    },
  },
  {
    // CronCreate, CronList and CronDelete (patched('cron-tools')): a schedule every minute and a bad
    // expression; the job sleeps; `wake` fires the next run early; the model lists and deletes the
    // schedule, and the job ends.
    name: 'cron-tools',
    session: {
      replies: [
        {
          content: [
            {
              type: 'tool_use' as const,
              id: 'cr1',
              name: 'CronCreate',
              input: { cron: '* * * * *', prompt: 'Check the queue.' },
            },
            { type: 'tool_use' as const, id: 'cr2', name: 'CronCreate', input: { cron: 'hourly', prompt: 'x' } },
          ],
        },
        { content: [text('Watching the queue.')] },
        {
          content: [
            { type: 'tool_use' as const, id: 'cr3', name: 'CronList', input: {} },
            { type: 'tool_use' as const, id: 'cr4', name: 'CronDelete', input: { id: CRON_ID } },
          ],
        },
        { content: [text('Stopped watching.')] },
      ],
    },
    drive: async (handle) => {
      for (;;) {
        const snapshot = await handle.query(snapshotQuery);
        if (snapshot.phase === 'sleeping' && snapshot.turnCount === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await handle.signal(wakeSignal);
    },
  },
  {
    // The Agent SDK's streaming input (patched('open-input')): the job answers, waits, answers a
    // second message (with a turn limit of its own), waits again, and ends when told no input comes.
    name: 'open-input',
    input: { inputOpen: { idleMs: 600_000 }, maxTurns: 2 },
    session: {
      replies: [
        { content: [text('Reading.'), read('oi1')] },
        { content: [text('First answer.')] },
        { content: [read('oi2')] },
        { content: [text('Second answer.')] },
      ],
    },
    drive: async (handle) => {
      await answered(handle, 1);
      await handle.signal(userMessageSignal, 'And the other file?');
      await answered(handle, 2);
      await handle.signal(closeInputSignal);
    },
  },
  {
    // An open-input job that no message reaches within its idle time ends on its own.
    name: 'open-input-idle',
    input: { inputOpen: { idleMs: 2_000 } },
    session: { replies: [{ content: [text('Only answer.')] }] },
  },
  {
    // The Agent SDK app's hook callbacks (HookCommand.callback): a PreToolUse callback blocks a
    // Bash call, a PostToolUse one adds context to a Read, a Stop one blocks once and then fails
    // (a non-blocking error); an answer naming no waiting callback is a notice.
    name: 'app-hooks',
    input: {
      permissions: { mode: 'bypassPermissions' },
      appHooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [appHook('hook_0')] }],
        PostToolUse: [{ hooks: [appHook('hook_1')] }],
        Stop: [{ hooks: [appHook('hook_2')] }],
      },
    },
    session: {
      replies: [
        { content: [bash('ah1', 'echo hi')] },
        { content: [read('ah2')] },
        { content: [text('Done.')] },
        { content: [text('Really done.')] },
      ],
    },
    drive: async (handle) => {
      await handle.signal(hookCallbackAnswerSignal, { id: 'nothing-waits', output: {} });
      const answers = [
        { output: { decision: 'block', reason: 'No shell in this job.' } },
        { output: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'Checked by the app.' } } },
        { output: { decision: 'block', reason: 'Run the tests first.' } },
        { error: 'the app could not decide' },
      ];
      for (const answer of answers) {
        let pending: string | undefined;
        while (!pending) {
          pending = (await handle.query(snapshotQuery)).hookCallbacks?.[0]?.id;
          if (!pending) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        await handle.signal(hookCallbackAnswerSignal, { id: pending, ...answer });
      }
    },
  },
  {
    // setPermissionMode and setModel (the Agent SDK's set_permission_mode and set_model) while
    // the first turn runs: the second turn runs in plan mode on the new model.
    name: 'set-mode-and-model',
    input: { permissions: { mode: 'default' }, inputOpen: { idleMs: 600_000 } },
    session: {
      slowTurns: { 0: 200 },
      replies: [{ content: [text('Looking.'), read('sm1')] }, { content: [text('Done.')] }],
    },
    drive: async (handle) => {
      await handle.signal(setPermissionModeSignal, 'plan');
      await handle.signal(setModelSignal, 'claude-haiku-5-5');
      // Not allowed at its start, so refused.
      await handle.signal(setPermissionModeSignal, 'bypassPermissions');
      await answered(handle, 1);
      await handle.signal(closeInputSignal);
    },
  },
];

/** One hook callback of an Agent SDK app. */
function appHook(callback: string) {
  return { command: `the Agent SDK app's hook callback ${callback}`, source: 'the Agent SDK app', callback };
}

/** Waits until an open-input job answered its `query`th message and waits for the next. */
async function answered(handle: WorkflowHandle, query: number): Promise<void> {
  for (;;) {
    const snapshot = await handle.query(snapshotQuery);
    if (snapshot.phase === 'waiting_for_input' && snapshot.turnResult?.query === query) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `start-dev` flags that register the job search attributes. */
const searchAttributeArgs = JOB_SEARCH_ATTRIBUTES.flatMap(({ key, cliType }) => [
  '--search-attribute',
  `${key.name}=${cliType}`,
]);

/** The batch scenario's name: a batch with a budget that stops it, continuing as new on the way. */
const BATCH_SCENARIO = 'batch-budget';
/** Its rerun with more budget (the first run of the rerun). */
const BATCH_RERUN_SCENARIO = 'batch-rerun';

/**
 * A batch of three tasks, two at a time, with a budget their cost reports cross and a history
 * limit that makes it continue as new: its first run (starting children, cost signals, the stop
 * sent), its last run (adopted jobs watched by an activity), and one of its jobs (the cost reports
 * and the batch's budget stop, from the job's side); then the first run of its rerun with more
 * budget (earlier runs counted up front, stopped tasks continued).
 */
async function recordBatch(outDir: string, which: ReadonlySet<string>): Promise<void> {
  const { scriptedBatch } = await import('./batch');
  const env = await startTemporal(searchAttributeArgs);
  const batch = await scriptedBatch(makeWorkspace({}), 3, { prefix: BATCH_SCENARIO, turns: 3, dollars: true });
  const taskQueue = uniqueTaskQueue(BATCH_SCENARIO);
  const { worker, done } = await startWorker(env, batch.router as unknown as ScriptedModelServer, {
    taskQueue,
    storeDir: tempDir('store'),
  });
  try {
    const handle = await env.client.workflow.start('agentBatch', {
      taskQueue,
      workflowId: `history-${BATCH_SCENARIO}`,
      args: [{ tasks: { inline: batch.tasks }, concurrency: 2, maxBudgetUsd: 3.5, historyEventLimit: 40 }],
      typedSearchAttributes: [{ key: OUTCOME_KEY, value: RUNNING_OUTCOME }],
    });
    const terminal = await terminalOf<{ reason: string }>(handle);
    const write = async (name: string, runId?: string) => {
      const history = await env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
      fs.writeFileSync(path.join(outDir, `${name}.json`), `${historyToJSON(history)}\n`);
      console.log(`${name}: ${history.events?.length} events`);
    };
    console.log(`${BATCH_SCENARIO}: ${terminal.reason}`);
    if (which.has(BATCH_SCENARIO)) {
      await write(`${BATCH_SCENARIO}-first-run`, handle.firstExecutionRunId);
      await write(BATCH_SCENARIO);
      const job = await env.client.workflow.getHandle(`history-${BATCH_SCENARIO}/t1`).fetchHistory();
      fs.writeFileSync(path.join(outDir, `${BATCH_SCENARIO}-job.json`), `${historyToJSON(job)}\n`);
    }
    if (which.has(BATCH_RERUN_SCENARIO)) {
      // The same batch again with more budget: it counts its earlier run up front, skips the
      // finished task and continues the stopped ones.
      const rerun = await env.client.workflow.start('agentBatch', {
        taskQueue,
        workflowId: `history-${BATCH_SCENARIO}`,
        args: [
          { tasks: { inline: batch.tasks }, concurrency: 2, maxBudgetUsd: 100, rerun: true, historyEventLimit: 40 },
        ],
        typedSearchAttributes: [{ key: OUTCOME_KEY, value: RUNNING_OUTCOME }],
      });
      console.log(`${BATCH_RERUN_SCENARIO}: ${(await terminalOf<{ reason: string }>(rerun)).reason}`);
      await write(BATCH_RERUN_SCENARIO, rerun.firstExecutionRunId);
    }
  } finally {
    worker.shutdown();
    await done;
    await batch.close();
    await env.teardown();
  }
}

/**
 * Everything the recording makes under `os.tmpdir()` (workspaces, stores, what the dev servers and
 * workers write) goes into one folder of its own, removed at the end, as a test run's does.
 */
async function main(): Promise<void> {
  const runTmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-record-')));
  process.env.TMPDIR = runTmp;
  try {
    await record();
  } finally {
    fs.rmSync(runTmp, { recursive: true, force: true });
  }
}

async function record(): Promise<void> {
  const outDir = path.join(__dirname, '..', 'histories');
  fs.mkdirSync(outDir, { recursive: true });
  // Names on the command line record only those scenarios (a new one, without touching the rest).
  const only = process.argv.slice(2);
  const batchScenarios = [BATCH_SCENARIO, BATCH_RERUN_SCENARIO].filter(
    (name) => only.length === 0 || only.includes(name),
  );
  if (batchScenarios.length > 0) await recordBatch(outDir, new Set(batchScenarios));
  for (const scenario of scenarios.filter((s) => only.length === 0 || only.includes(s.name))) {
    const env = await startTemporal([
      ...(scenario.extraArgs ?? []),
      ...(scenario.searchAttributes ? searchAttributeArgs : []),
    ]);
    const server = await ScriptedModelServer.start({ name: scenario.name, ...scenario.session });
    const taskQueue = uniqueTaskQueue(scenario.name);
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
    try {
      const input = sessionInput(makeWorkspace({ ...files, ...scenario.files }), scenario.input);
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `history-${scenario.name}`,
        args: [input],
        ...(scenario.searchAttributes ? { typedSearchAttributes: startSearchAttributes(input) } : {}),
      });
      await scenario.drive?.(handle, server);
      const terminal = await terminalOf(handle);
      // A continued-as-new job's latest run is what replays the carried-over State.
      const latest = env.client.workflow.getHandle(handle.workflowId);
      const history = await latest.fetchHistory();
      fs.writeFileSync(path.join(outDir, `${scenario.name}.json`), `${historyToJSON(history)}\n`);
      console.log(`${scenario.name}: ${terminal.reason}, ${history.events?.length} events`);
      if (scenario.name === 'continue-as-new') {
        const first = await env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
        fs.writeFileSync(path.join(outDir, `${scenario.name}-first-run.json`), `${historyToJSON(first)}\n`);
      }
    } finally {
      worker.shutdown();
      await done;
      await server.close();
      await env.teardown();
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
