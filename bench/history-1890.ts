/**
 * temporalio/sdk-python#1890 (`npm run bench:1890`): a durable agent whose history was terminated at
 * 50.48 MB after 53 of 100 model calls, on a ~209k-token conversation with 5 KB tool outputs,
 * because every model call's activity input carried the whole conversation (99.8% of the history).
 * The issue's numbers fit its own formula N·B + G·N(N−1)/2 with B the conversation at the start
 * of the 100 calls: 53 × ~836 KB + 5 KB × 53·52/2 ≈ 51 MB.
 *
 * The same shape here: a few seeding calls read large files until the conversation holds about
 * 200k tokens (B), then 100 model calls, 99 of them reading a distinct 5 KB file, the last one
 * answering. Two variants, one job each, side by side in one run:
 *   - a 1,000,000-token window (job modelLimits and server contextWindow): nothing is compacted,
 *     the conversation really reaches B + 100 × 5 KB;
 *   - a 200,000-token window: the conversation does not fit, and Phase 1 compacts.
 * Reported for each: the job's history bytes across runs, against the sum of the model request
 * bodies the server received (what the history holds when each call's input carries the
 * transcript, as in that integration), and the ratio; also at call 53, where the issue's job died.
 *
 * Knobs: BENCH_1890_CALLS (default 100), BENCH_1890_TOOL_BYTES (default 5000), BENCH_TEMPORAL_ARGS.
 */
import os from 'node:os';
import Anthropic from '@anthropic-ai/sdk';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { terminalOf } from '../src/client/job-terminal';
import type { RecordedRequest, ScriptedBlock, ScriptedReply, ScriptedSession } from '../src/model-server';
import { ScriptedModelServer } from '../src/model-server';
import type { SessionInput } from '../src/shared/session';
import type { Terminal } from '../src/shared/terminal';
import { bundleWorkflows } from '../src/worker/create-worker';
import {
  MODEL,
  SERVER_ARGS,
  int,
  kb,
  mb,
  modelLimits,
  positiveInt,
  progress,
  startDevServer,
  startInProcessWorker,
  withTimeout,
} from './context-harness';
import { fetchJobHistory, historyBreakdown, historyByModelCall, largestPayloads } from './context-history';
import { RequestLog } from './context-requests';
import type { RequestSize } from './context-requests';
import { filePath, readCall, textFiles, textReply, workspaceWith } from './context-jobs';
import { removeTempDirs, tempDir } from './scenario';

const CALLS = positiveInt('BENCH_1890_CALLS', 100);
const TOOL_BYTES = positiveInt('BENCH_1890_TOOL_BYTES', 5_000);
/** The issue's job died here. */
const ISSUE_CALLS = 53;
const ISSUE_HISTORY_BYTES = 50_480_000;
const GOAL_BYTES = 5_000_000;
const RUN_TIMEOUT_MS = 15 * 60_000;

/**
 * The seeding: four turns of four parallel Reads. Each file's numbered text stays under the
 * 50,000-character rule and each turn under the 200,000-character budget, so all of it goes into
 * the conversation. The first three turns stop short of the 200k window's microcompact threshold
 * (~150k) and the fourth jumps past its autocompact threshold (~171k), so on that window the
 * conversation is summarised (not merely cleared) before the 100 calls; on the 1M window nothing
 * happens and they start from ~200k tokens.
 */
const SEED_TURNS: number[][] = [
  [43_000, 43_000, 43_000, 43_000],
  [43_000, 43_000, 43_000, 43_000],
  [43_000, 43_000, 43_000, 43_000],
  [46_500, 46_500, 46_500, 46_500],
];
const SEED_CALLS = SEED_TURNS.length;

function files(): Record<string, string> {
  const all: Record<string, string> = textFiles('docs', CALLS - 1, TOOL_BYTES);
  SEED_TURNS.forEach((sizes, turn) =>
    sizes.forEach((bytes, k) => Object.assign(all, renamed(textFiles(`history/t${turn}-${k}`, 1, bytes)))),
  );
  return all;
}

/** `history/t0-1/file-000.txt` as `history/t0-1.txt`. */
function renamed(one: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(one).map(([name, text]) => [name.replace(/\/file-000\.txt$/, '.txt'), text]),
  );
}

function script(contextWindow: number): ScriptedSession {
  const replies: ScriptedReply[] = SEED_TURNS.map((sizes, turn) => ({
    content: [
      { type: 'text', text: `Catching up on the earlier conversation, part ${turn + 1}.` },
      ...sizes.map((_, k): ScriptedBlock => readCall(`toolu_seed_${turn}_${k}`, `history/t${turn}-${k}.txt`)),
    ],
  }));
  for (let i = 0; i < CALLS - 1; i++) {
    replies.push({
      content: [
        { type: 'text', text: `Tool call ${i + 1} of this turn.` },
        readCall(`toolu_1890_${String(i).padStart(3, '0')}`, filePath('docs', i)),
      ],
    });
  }
  replies.push(textReply(`Answer written after ${CALLS - 1} tool calls.`));
  return { name: `history-1890-${contextWindow}`, replies, contextWindow, chunkDelayMs: 0 };
}

interface VariantResult {
  label: string;
  window: number;
  terminal: Terminal;
  ms: number;
  historyBytes: number;
  runs: number;
  historyAtIssueCall: number;
  requests: RequestSize[];
  requestBytesAtIssueCall: number;
  firstCallTokens: number;
  lastCallTokens: number;
  toolResultChars: number[];
  largestPayload: { where: string; bytes: number };
  breakdown: Array<{ what: string; bytes: number }>;
}

async function runVariant(
  env: TestWorkflowEnvironment,
  bundle: WorkflowBundleWithSourceMap,
  label: string,
  window: number,
): Promise<VariantResult> {
  progress(`${label}: ${SEED_CALLS} seeding calls, then ${CALLS}...`);
  const server = await ScriptedModelServer.start(script(window));
  const toolResultChars: number[] = [];
  const measured = (request: RecordedRequest) => request.kind === 'turn' && request.turn > SEED_CALLS;
  const log = new RequestLog(server, (request) => {
    if (!measured(request) || request.attempt !== 1) return;
    const last = (request.body as { messages?: Array<{ content?: unknown }> }).messages?.at(-1)?.content;
    for (const block of Array.isArray(last) ? last : []) {
      if (block?.type === 'tool_result' && typeof block.content === 'string')
        toolResultChars.push(block.content.length);
    }
  });
  const taskQueue = `bench-1890-${window}-${process.pid}`;
  const { worker, done } = await startInProcessWorker({
    env,
    taskQueue,
    storeDir: tempDir('store-1890'),
    bundle,
    anthropic: new Anthropic({ apiKey: 'bench-key', baseURL: server.url, maxRetries: 0 }),
  });
  try {
    const input: SessionInput = {
      prompt: 'Go on with the conversation: look through the docs folder and answer.',
      workspace: workspaceWith(files()),
      model: MODEL,
      modelLimits: modelLimits(window),
      permissions: { mode: 'bypassPermissions' },
    };
    const start = performance.now();
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `bench-1890-${window}-${Date.now()}`,
      args: [input],
    });
    const terminal = await withTimeout(terminalOf(handle), RUN_TIMEOUT_MS, `workflow ${handle.workflowId}`);
    const ms = performance.now() - start;
    const expectedTurns = SEED_CALLS + CALLS;
    if (terminal.reason !== 'completed' || terminal.turnCount !== expectedTurns) {
      throw new Error(
        `bench: ${label} did not do the scripted job: ${terminal.reason} after ${terminal.turnCount} of ${expectedTurns} turns` +
          (terminal.detail ? ` (${terminal.detail})` : ''),
      );
    }
    const job = await fetchJobHistory(env.client, handle.workflowId, handle.firstExecutionRunId);
    const requests = log.stop();
    // Call n of the 100 is on turn SEED_CALLS + n - 1; everything up to its request counts.
    const issueCall = Math.min(ISSUE_CALLS, CALLS);
    const issueIndex = requests.findIndex((r) => r.kind === 'turn' && r.turn === SEED_CALLS + issueCall - 1);
    const turnTokens = (turn: number) => requests.find((r) => r.kind === 'turn' && r.turn === turn)?.tokens ?? 0;
    return {
      label,
      window,
      terminal,
      ms,
      historyBytes: job.bytes,
      runs: job.runs.length,
      historyAtIssueCall: historyByModelCall(job).at(SEED_CALLS + issueCall),
      requests,
      requestBytesAtIssueCall: requests.slice(0, issueIndex + 1).reduce((sum, r) => sum + r.bytes, 0),
      firstCallTokens: turnTokens(SEED_CALLS),
      lastCallTokens: turnTokens(SEED_CALLS + CALLS - 1),
      toolResultChars,
      largestPayload: largestPayloads(job, 1)[0] ?? { where: 'none', bytes: 0 },
      breakdown: historyBreakdown(job),
    };
  } finally {
    worker.shutdown();
    await done;
    await server.close();
  }
}

function report(results: VariantResult[]): void {
  const lines = [
    `history-1890: ${CALLS} model calls with ~${kb(TOOL_BYTES)} tool outputs on a large conversation (temporalio/sdk-python#1890)`,
    `the issue: history terminated at ${mb(ISSUE_HISTORY_BYTES)} after ${ISSUE_CALLS} of 100 calls on a ~209k-token conversation; goal here: under ${mb(GOAL_BYTES)}`,
    `here: ${SEED_CALLS} seeding calls (${SEED_TURNS.flat().length} Reads of 43-47 KB files) build the conversation, then the ${CALLS} calls`,
    `node ${process.version}, ${os.cpus().length} cpus; temporal dev server: ${SERVER_ARGS.length > 0 ? `extra args ${SERVER_ARGS.join(' ')}` : 'default configuration'}`,
  ];
  for (const r of results) {
    const requestBytes = r.requests.reduce((sum, size) => sum + size.bytes, 0);
    const compactions = r.requests.filter((size) => size.kind === 'compaction').length;
    const t = r.terminal.transitions ?? {};
    const meanResult = r.toolResultChars.reduce((sum, n) => sum + n, 0) / Math.max(1, r.toolResultChars.length);
    lines.push(
      '',
      `${r.label} (window ${int(r.window)} tokens, ${(r.ms / 1000).toFixed(1)} s)`,
      `  conversation: ~${int(r.firstCallTokens)} tokens at the first of the ${CALLS} calls, ~${int(r.lastCallTokens)} at the last; tool results sent ${int(meanResult)} chars on average`,
      `  context actions: autocompact ${t.autocompact ?? 0}, microcompact ${t.microcompact ?? 0}, reactive_compact ${t.reactive_compact ?? 0}; ${r.requests.length} model requests (${compactions} compactions)`,
      `  history, all ${r.runs} run(s):          ${mb(r.historyBytes).padStart(10)}  (${int(r.historyBytes)} B; largest payload ${int(r.largestPayload.bytes)} B, ${r.largestPayload.where})`,
      `  model request bodies, summed:    ${mb(requestBytes).padStart(10)}  (${int(requestBytes)} B: a history carrying the transcript in every call)`,
      `  ratio:                           ${(requestBytes / r.historyBytes).toFixed(1).padStart(9)}x  history is ${((100 * r.historyBytes) / requestBytes).toFixed(2)}% of the requests; ${r.historyBytes < GOAL_BYTES ? 'under' : 'OVER'} the ${mb(GOAL_BYTES)} goal`,
      `  at call ${Math.min(ISSUE_CALLS, CALLS)}: history ${mb(r.historyAtIssueCall)}, requests summed ${mb(r.requestBytesAtIssueCall)} (the issue: ${mb(ISSUE_HISTORY_BYTES)}, terminated)`,
      `  history by event: ${r.breakdown
        .slice(0, 4)
        .map((part) => `${part.what} ${mb(part.bytes)}`)
        .join(', ')}`,
    );
  }
  console.log(lines.join('\n'));
}

async function main(): Promise<void> {
  progress('bundling workflow code...');
  const bundle = await bundleWorkflows();
  progress('starting the Temporal dev server...');
  const env = await startDevServer();
  try {
    const results = [
      await runVariant(env, bundle, 'no compaction', 1_000_000),
      await runVariant(env, bundle, 'compacting', 200_000),
    ];
    report(results);
  } finally {
    await env.teardown();
    removeTempDirs();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
