/**
 * Cost and `--max-budget-usd` in the loop, against the scripted model server: usage and cost per
 * model (compaction calls included), the budget checked before every model call so a job ends at
 * most one call over, unknown prices, retries and API time, and the budget carried across
 * continue-as-new.
 */
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedReply, ScriptedSession } from '../src/model-server';
import type { ModelPricesEntry } from '../src/shared/pricing';
import type { SessionSnapshot } from '../src/shared/session';
import { snapshotQuery } from '../src/workflows/definitions';
import { startTemporal } from './support/harness';
import { readCall, scriptedJobSuite, textReply, withScriptedJob, terminalOf } from './support/jobs';

const MODEL = 'claude-sonnet-5-5';
/** $10 per million input tokens and nothing else: a call of 100,000 input tokens costs $1.00. */
const PRICES: ModelPricesEntry[] = [{ prefix: MODEL, input: 10, output: 0, cacheWrite: 0, cacheRead: 0 }];
const DOLLAR = { input_tokens: 100_000, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** `turns` replies that each Read a file and cost $1, then an answer. */
function reading(turns: number): ScriptedSession {
  return {
    replies: [
      ...Array.from({ length: turns }, (_, i): ScriptedReply => ({
        content: [readCall(`r${i}`, 'f.txt')],
        usage: DOLLAR,
      })),
      { ...textReply('Done.'), usage: DOLLAR },
    ],
  };
}

const files = { 'f.txt': 'some text\n' };

describe('workflow: cost and budget', () => {
  const { withJob } = scriptedJobSuite({ files });

  test('the budget is checked before each call: the job stops before the first call that would start over it', async () => {
    const input = { modelPrices: PRICES, maxBudgetUsd: 2.5 };
    await withJob('budget', { session: reading(8), input }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('budget_exhausted');
      // $1, $2 (under), $3 (the call that went over), then no fourth call.
      expect(server.requests).toHaveLength(3);
      expect(terminal.totalCostUsd).toBeCloseTo(3, 10);
      // Over by less than one call's cost.
      expect(terminal.totalCostUsd! - 2.5).toBeLessThan(1);
      expect(terminal.maxBudgetUsd).toBe(2.5);
      expect(terminal.modelUsage).toEqual({
        [MODEL]: {
          inputTokens: 300_000,
          outputTokens: 15,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
          costUSD: expect.closeTo(3, 10),
        },
      });
      expect(terminal.detail).toContain(
        "the job has cost $3.00 of its $2.50 budget (--max-budget-usd 2.5), so turn 4's model call was not started",
      );
      expect(terminal.detail).toContain('to go on from here: durable-agent run --resume budget-');
      // Three turns ran; the third turn's tool results are in the transcript, so nothing is lost.
      expect(terminal.turnCount).toBe(3);
      expect(terminal.messageCount).toBe(7);
      expect(terminal.modelRetries).toBe(0);
      expect(terminal.durationApiMs).toBeGreaterThan(0);
      expect(terminal.durationMs).toBeGreaterThanOrEqual(terminal.durationApiMs!);

      const snapshot: SessionSnapshot = await handle.query(snapshotQuery, 0);
      expect(snapshot).toMatchObject({ totalCostUsd: expect.closeTo(3, 10), maxBudgetUsd: 2.5 });
      expect(snapshot.modelUsage?.[MODEL]?.inputTokens).toBe(300_000);
    });
  });

  test("a workspace settings file pricing the model at nothing does not turn the user's budget off", async () => {
    // Issue 25: outside CI, a repository's modelPrices of 0 made --max-budget-usd meaningless.
    const free = { [MODEL]: { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 } };
    const workspaceFiles = { ...files, '.claude/settings.json': JSON.stringify({ modelPrices: free }) };
    // The built-in price: $2 per million input tokens, so each call costs $0.20.
    const input = { maxBudgetUsd: 0.5 };
    await withJob('free-prices', { session: reading(8), input, files: workspaceFiles }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('budget_exhausted');
      expect(server.requests).toHaveLength(3);
      const snapshot: SessionSnapshot = await handle.query(snapshotQuery, 0);
      expect(snapshot.events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            kind: 'notice',
            text: expect.stringMatching(
              /^setting ignored: modelPrices in .*\.claude\/settings\.json \(a workspace file never changes prices or budgets\)$/,
            ),
          }),
        ]),
      );
    });
  });

  test('a budget the job stays within changes nothing; a retried call is counted once, with its retry', async () => {
    const session: ScriptedSession = {
      ...reading(2),
      faults: [{ turn: 1, attempt: 1, kind: 'http', status: 529, errorType: 'overloaded_error' }],
    };
    await withJob('within-budget', { session, input: { modelPrices: PRICES, maxBudgetUsd: 10 } }, async (job) => {
      const terminal = await terminalOf(job.handle);
      expect(terminal.reason).toBe('completed');
      expect(job.server.requests).toHaveLength(4);
      expect(terminal.totalCostUsd).toBeCloseTo(3, 10);
      expect(terminal.modelRetries).toBe(1);
    });
  });

  test('a compaction is a model call: its cost counts, and the budget is checked before it', async () => {
    // The first reply fills the window mid-reply: the job compacts and asks again.
    const cut: ScriptedReply = {
      content: [{ type: 'text', text: 'Part of an answer' }],
      stop_reason: 'model_context_window_exceeded',
      usage: DOLLAR,
    };
    const session = (): ScriptedSession => ({
      replies: [{ ...textReply('The answer.'), usage: DOLLAR }],
      faults: [{ turn: 0, attempt: 1, kind: 'reply', reply: cut }],
    });

    const everyInputAtTen: ModelPricesEntry[] = [
      { prefix: MODEL, input: 10, output: 0, cacheWrite: 10, cacheRead: 10 },
    ];
    await withJob('compaction-cost', { session: session(), input: { modelPrices: everyInputAtTen } }, async (job) => {
      const terminal = await terminalOf(job.handle);
      expect(terminal.reason).toBe('completed');
      expect(job.server.compactionRequests()).toHaveLength(1);
      const used = terminal.modelUsage?.[MODEL];
      // The two turn calls' 200,000 and the compaction's, which the prompt cache may have read or
      // written whole (its request can end at a cache breakpoint): every kind of input token counts.
      const inputOfEveryKind = used!.inputTokens + used!.cacheReadInputTokens + used!.cacheCreationInputTokens;
      expect(inputOfEveryKind).toBeGreaterThan(200_000);
      // Every input token at $10 per million, cached or not: the two turn calls and the compaction.
      expect(used?.costUSD).toBeCloseTo((inputOfEveryKind * 10) / 1_000_000, 10);
      expect(terminal.totalCostUsd).toBe(used?.costUSD);
    });

    const input = { modelPrices: PRICES, maxBudgetUsd: 1 };
    await withJob('budget-before-compaction', { session: session(), input }, async (job) => {
      const terminal = await terminalOf(job.handle);
      expect(terminal.reason).toBe('budget_exhausted');
      expect(terminal.detail).toContain('so the compaction this prompt needs was not started');
      expect(job.server.compactionRequests()).toHaveLength(0);
      expect(job.server.requests).toHaveLength(1);
      expect(terminal.totalCostUsd).toBeCloseTo(1, 10);
    });
  });

  test('a model without a price: its cost is unknown; under a budget no call is made', async () => {
    const model = 'claude-unpriced-model';
    await withJob('unpriced', { session: reading(1), input: { model } }, async (job) => {
      const terminal = await terminalOf(job.handle);
      expect(terminal.reason).toBe('completed');
      expect(terminal.totalCostUsd).toBeNull();
      expect(terminal.modelUsage?.[model]).toMatchObject({ inputTokens: 200_000, costUSD: null });
    });

    await withJob('unpriced-budget', { session: reading(1), input: { model, maxBudgetUsd: 5 } }, async (job) => {
      const terminal = await terminalOf(job.handle);
      expect(job.server.requests).toHaveLength(0);
      expect(terminal.reason).toBe('model_error');
      expect(terminal.detail).toContain(`no price is known for ${model}, so --max-budget-usd cannot be kept`);
      expect(terminal.detail).toContain(`{"modelPrices": {"${model}": {"input": 3, "output": 15}}}`);
    });
  });

  test("a workspace settings file's prices are not used: the job pays what the user's prices say", async () => {
    // (Before issue 25 this file's $20 applied; the user's settings and the job's own prices still do.)
    const settings = JSON.stringify({
      modelPrices: { [MODEL]: { input: 20, output: 0, cacheWrite: 0, cacheRead: 0 } },
    });
    const job = { session: reading(1), files: { ...files, '.claude/settings.json': settings } };
    await withJob('settings-prices', job, async ({ handle }) => {
      const terminal = await terminalOf(handle);
      // Two calls of 100,000 input tokens at the built-in $2 per million.
      expect(terminal.totalCostUsd).toBeCloseTo(0.4, 3);
    });
  });
});

describe('workflow: the budget across continue-as-new', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    // A tiny history budget: Temporal suggests continue-as-new every turn or two.
    env = await startTemporal(['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=20']);
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test('the cost so far is carried over, so the budget holds for the whole job', async () => {
    const input = { modelPrices: PRICES, maxBudgetUsd: 6.5 };
    await withScriptedJob(env, 'budget-can', { session: reading(12), files, input }, async ({ server, handle }) => {
      const terminal = await terminalOf(handle);
      const { firstExecutionRunId } = handle as WorkflowHandleWithFirstExecutionRunId;
      expect((await handle.describe()).runId).not.toBe(firstExecutionRunId);
      expect(terminal.reason).toBe('budget_exhausted');
      expect(server.requests).toHaveLength(7);
      expect(terminal.totalCostUsd).toBeCloseTo(7, 10);
      expect(terminal.modelUsage?.[MODEL]?.inputTokens).toBe(700_000);
      expect(terminal.detail).toContain("so turn 8's model call was not started");
      expect(terminal.turnCount).toBe(7);
    });
  });
});
