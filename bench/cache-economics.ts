/**
 * Prompt-cache economics (`npm run bench:cache`): what the scripted server's prompt-cache
 * simulation says a session pays, from the `usage` of every answer.
 *
 *   - warm: a 300-turn session on a window small enough that it compacts a few times. Reports the
 *     cache-read share of input tokens and the cost against an uncached run, overall, for the
 *     turns right after a compaction, after a microcompact, and for the compaction calls.
 *   - cold: a shorter job whose one Bash call runs past the cache's 5-minute lifetime (a real
 *     sleep: the workflow judges "cold" by workflow time, so it cannot be faked), against its twin
 *     whose Bash returns at once. Same code, same cache breakpoints; the cold job's next call
 *     microcompacts because the cache is cold anyway. The counterfactual, a cold call that sends
 *     the twin's prompt unchanged, is priced from the twin's numbers.
 * The three jobs run concurrently (each on its own model server and worker): only token counts
 * are reported, no timings, and the cold job's pause leaves the CPU idle.
 *
 * Prices, in units of one uncached input token: input 1, cache write 1.25, cache read 0.1,
 * output BENCH_CACHE_OUTPUT_PRICE (default 5; the same on both sides of every ratio).
 *
 * Knobs: BENCH_CACHE_TURNS (300), BENCH_CACHE_WINDOW (100000), BENCH_CACHE_RESULT_BYTES (8000),
 * BENCH_CACHE_NARRATION_CHARS (1500), BENCH_CACHE_COLD (1; 0 skips the cold pair),
 * BENCH_CACHE_COLD_TURNS (40), BENCH_CACHE_COLD_PAUSE_S (305), BENCH_TEMPORAL_ARGS; BENCH_CACHE_DUMP=<file>
 * writes every call's usage as JSON.
 *
 * BENCH_CACHE_THINKING=<chars> (0: off) runs, instead, the warm job twice side by side, without
 * thinking and with a thinking block of that many characters opening every reply (the job's
 * calls ask for adaptive thinking; the blocks go back signed in every later request), and reports
 * both (`npm run bench:thinking`: 50 turns, 2,000 characters of thought).
 */
import fs from 'node:fs';
import os from 'node:os';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { terminalOf } from '../src/client/job-terminal';
import type { ScriptedBlock, ScriptedReply, ScriptedSession } from '../src/model-server';
import { ScriptedModelServer } from '../src/model-server';
import { contextThresholds, modelLimitsFor } from '../src/shared/context/model-limits';
import { DEFAULT_CACHE_TTL_MS } from '../src/shared/context/context-state';
import type { Usage } from '../src/shared/messages';
import { DEFAULT_MAX_TOKENS } from '../src/shared/recovery';
import type { SessionInput } from '../src/shared/session';
import type { Terminal } from '../src/shared/terminal';
import { bundleWorkflows } from '../src/worker/create-worker';
import {
  MODEL,
  SERVER_ARGS,
  int,
  modelLimits,
  nonNegativeInt,
  positiveInt,
  progress,
  startDevServer,
  startInProcessWorker,
  withTimeout,
} from './context-harness';
import { RequestLog } from './context-requests';
import type { CallRecord, RequestSize } from './context-requests';
import { recordingClient } from './context-requests';
import { filePath, narration, readCall, textFiles, textReply, toolUse, workspaceWith } from './context-jobs';
import { removeTempDirs, tempDir } from './scenario';

const TURNS = positiveInt('BENCH_CACHE_TURNS', 300);
const WINDOW = positiveInt('BENCH_CACHE_WINDOW', 100_000);
const RESULT_BYTES = positiveInt('BENCH_CACHE_RESULT_BYTES', 8_000);
const NARRATION_CHARS = nonNegativeInt('BENCH_CACHE_NARRATION_CHARS', 1_500);
const OUTPUT_PRICE = positiveInt('BENCH_CACHE_OUTPUT_PRICE', 5);
const COLD = nonNegativeInt('BENCH_CACHE_COLD', 1) > 0;
const COLD_TURNS = positiveInt('BENCH_CACHE_COLD_TURNS', 40);
const COLD_PAUSE_S = positiveInt('BENCH_CACHE_COLD_PAUSE_S', 305);
/** The cold pair's window: large, so that only a cold cache (no threshold) can trigger microcompact. */
const COLD_WINDOW = 200_000;
const THINKING_CHARS = nonNegativeInt('BENCH_CACHE_THINKING', 0);
const FILES = 12;
const RUN_TIMEOUT_MS = 20 * 60_000;

const PRICE = { input: 1, write: 1.25, read: 0.1 } as const;

/** Every turn narrates, then calls a tool: mostly Reads of 8 KB files, now and then a small Grep. */
function toolTurn(turn: number, tag: string): ScriptedReply {
  const id = `toolu_${tag}_${String(turn).padStart(3, '0')}`;
  const call: ScriptedBlock =
    turn % 4 === 3
      ? toolUse(id, 'Grep', { pattern: `line 0000${turn % 10}:`, path: 'src', output_mode: 'count' })
      : readCall(id, filePath('src', turn % FILES));
  return { content: [{ type: 'text', text: narration(turn + 1, NARRATION_CHARS) }, call] };
}

function warmScript(thinkingChars = 0): ScriptedSession {
  const thought = (turn: number): ScriptedBlock[] =>
    thinkingChars > 0
      ? [
          {
            type: 'thinking',
            thinking: `Step ${turn + 1}: ${'weighing what to read next. '.repeat(thinkingChars / 27 + 1)}`.slice(
              0,
              thinkingChars,
            ),
          },
        ]
      : [];
  const replies = Array.from({ length: TURNS - 1 }, (_, turn) => {
    const reply = toolTurn(turn, 'warm');
    return { ...reply, content: [...thought(turn), ...reply.content] };
  });
  const last = textReply(`All ${TURNS - 1} steps done.`);
  replies.push({ ...last, content: [...thought(TURNS - 1), ...last.content] });
  return { name: 'cache-warm', replies, contextWindow: WINDOW, chunkDelayMs: 0 };
}

/** The turn (reply index) whose Bash call sleeps; the call after it finds the cache cold or warm. */
const PAUSE_TURN = Math.max(1, Math.floor((COLD_TURNS * 3) / 4) - 1);

function coldScript(tag: string, sleepSeconds: number): ScriptedSession {
  const replies = Array.from({ length: COLD_TURNS - 1 }, (_, turn) =>
    turn === PAUSE_TURN
      ? {
          content: [
            { type: 'text' as const, text: 'Running the slow build now.' },
            toolUse(`toolu_${tag}_build`, 'Bash', {
              command: `sleep ${sleepSeconds} && echo build finished`,
              timeout: (sleepSeconds + 120) * 1000,
              description: 'Run the slow build',
            }),
          ],
        }
      : toolTurn(turn, tag),
  );
  replies.push(textReply(`All ${COLD_TURNS - 1} steps done.`));
  return { name: `cache-${tag}`, replies, contextWindow: COLD_WINDOW, chunkDelayMs: 0 };
}

interface JobResult {
  terminal: Terminal;
  calls: Array<CallRecord & { usage: Usage; turn: number; cleared: number }>;
}

async function runJob(
  env: TestWorkflowEnvironment,
  bundle: WorkflowBundleWithSourceMap,
  label: string,
  session: ScriptedSession,
  window: number,
  extra: Partial<SessionInput> = {},
): Promise<JobResult> {
  const server = await ScriptedModelServer.start(session);
  const cleared: number[] = [];
  const log = new RequestLog(server, (request) => {
    cleared.push(JSON.stringify(request.body).split(CLEARED_MARKER).length - 1);
  });
  const { client, calls, settled } = recordingClient(server.url);
  const taskQueue = `bench-cache-${label}-${process.pid}`;
  const { worker, done } = await startInProcessWorker({
    env,
    taskQueue,
    storeDir: tempDir(`store-${label}`),
    bundle,
    anthropic: client,
  });
  try {
    const input: SessionInput = {
      prompt: 'Walk through the src folder step by step, reading and searching as you go.',
      workspace: workspaceWith(textFiles('src', FILES, RESULT_BYTES)),
      model: MODEL,
      modelLimits: modelLimits(window),
      permissions: { mode: 'bypassPermissions' },
      ...extra,
    };
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `bench-cache-${label}-${Date.now()}`,
      args: [input],
    });
    const terminal = await withTimeout(terminalOf(handle), RUN_TIMEOUT_MS, `workflow ${handle.workflowId}`);
    await settled();
    const sizes: RequestSize[] = log.stop();
    const expected = session.replies.length;
    if (terminal.reason !== 'completed' || terminal.turnCount !== expected) {
      throw new Error(
        `bench: ${label} did not do the scripted job: ${terminal.reason} after ${terminal.turnCount} of ${expected} turns` +
          (terminal.detail ? ` (${terminal.detail})` : ''),
      );
    }
    if (sizes.length !== calls.length)
      throw new Error(`bench: ${label}: ${calls.length} calls sent, ${sizes.length} received`);
    return {
      terminal,
      calls: calls.map((call, i) => {
        if (!call.usage) throw new Error(`bench: ${label}: call ${i + 1} (HTTP ${call.status}) reported no usage`);
        if (call.kind !== sizes[i]?.kind)
          throw new Error(`bench: ${label}: call ${i + 1} is a ${call.kind} to the client, not to the server`);
        return { ...call, usage: call.usage, turn: sizes[i]?.turn ?? -1, cleared: cleared[i] ?? 0 };
      }),
    };
  } finally {
    worker.shutdown();
    await done;
    await server.close();
  }
}

const CLEARED_MARKER = 'Old tool result cleared to save context';

/** Token counts and prices of a set of calls. */
interface Totals {
  calls: number;
  input: number;
  write: number;
  read: number;
  output: number;
}

function totals(calls: Array<{ usage: Usage }>): Totals {
  const sum: Totals = { calls: calls.length, input: 0, write: 0, read: 0, output: 0 };
  for (const { usage } of calls) {
    sum.input += usage.input_tokens;
    sum.write += usage.cache_creation_input_tokens;
    sum.read += usage.cache_read_input_tokens;
    sum.output += usage.output_tokens;
  }
  return sum;
}

const allInput = (t: Totals) => t.input + t.write + t.read;
const cost = (t: Totals) =>
  t.input * PRICE.input + t.write * PRICE.write + t.read * PRICE.read + t.output * OUTPUT_PRICE;
const uncached = (t: Totals) => allInput(t) + t.output * OUTPUT_PRICE;

function row(label: string, t: Totals): string {
  if (t.calls === 0) return `  ${label.padEnd(38)} (none)`;
  const share = allInput(t) > 0 ? (100 * t.read) / allInput(t) : 0;
  const inputOnly = t.input * PRICE.input + t.write * PRICE.write + t.read * PRICE.read;
  return (
    `  ${label.padEnd(38)}${String(t.calls).padStart(6)}${int(allInput(t) / t.calls).padStart(10)}` +
    `${share.toFixed(1).padStart(8)}%${(inputOnly / Math.max(1, allInput(t))).toFixed(3).padStart(10)}x` +
    `${(cost(t) / uncached(t)).toFixed(3).padStart(10)}x`
  );
}

const HEADER = `  ${'calls'.padEnd(38)}${'n'.padStart(6)}${'in/call'.padStart(10)}${'read'.padStart(9)}${'input'.padStart(11)}${'all'.padStart(11)}`;

function warmReport(job: JobResult): string[] {
  const thresholds = contextThresholds(modelLimitsFor(MODEL, modelLimits(WINDOW)), DEFAULT_MAX_TOKENS);
  const turns = job.calls.filter((call) => call.kind === 'turn');
  const afterCompaction = new Set<number>();
  const afterMicrocompact = new Set<number>();
  job.calls.forEach((call, i) => {
    const previous = job.calls[i - 1];
    if (call.kind !== 'turn') return;
    if (previous?.kind === 'compaction') afterCompaction.add(i);
    // More results cleared than in the last turn's request, with no compaction between: a microcompact.
    const lastTurn = job.calls
      .slice(0, i)
      .reverse()
      .find((c) => c.kind === 'turn');
    if (previous?.kind === 'turn' && lastTurn && call.cleared > lastTurn.cleared) afterMicrocompact.add(i);
  });
  const pick = (set: Set<number>) => job.calls.filter((_, i) => set.has(i));
  const steady = job.calls.filter(
    (call, i) => call.kind === 'turn' && !afterCompaction.has(i) && !afterMicrocompact.has(i),
  );
  const t = job.terminal.transitions ?? {};
  const compactionCalls = job.calls.filter((call) => call.kind === 'compaction');
  return [
    `warm: ${TURNS} turns (each ~${int(NARRATION_CHARS)} chars of narration + a Read of an ${int(RESULT_BYTES / 1000)} KB file, every 4th a Grep count),`,
    `      window ${int(WINDOW)} tokens: microcompact at ${int(thresholds.microcompactAt)}, autocompact at ${int(thresholds.autocompactAt)};` +
      ` autocompact ${t.autocompact ?? 0}, microcompact ${t.microcompact ?? 0}, reactive_compact ${t.reactive_compact ?? 0}`,
    HEADER,
    row('every call', totals(job.calls)),
    row('turns', totals(turns)),
    row('  first turn after a compaction', totals(pick(afterCompaction))),
    row('  turn that microcompacted', totals(pick(afterMicrocompact))),
    row('  other turns', totals(steady)),
    row('compaction calls (the summaries)', totals(compactionCalls)),
  ];
}

function coldReport(cold: JobResult, twin: JobResult): string[] {
  // The call after the pause: the turn after PAUSE_TURN (no compaction in these jobs).
  const at = PAUSE_TURN + 1;
  const coldCall = cold.calls[at];
  const twinCall = twin.calls[at];
  const previous = cold.calls[at - 1];
  if (!coldCall || !twinCall || !previous) throw new Error('bench: the cold pair made too few calls');
  const gapS = (coldCall.sentAt - previous.sentAt) / 1000;
  const twinTotals = totals(twin.calls);
  const coldTotals = totals(cold.calls);
  const post = (t: Totals) => cost(t);
  const twinPost = totals([twinCall]);
  const coldPost = totals([coldCall]);
  // A cold cache without microcompact: the twin's prompt, all of it written again.
  const whole = allInput(twinPost);
  const counterPost: Totals = { calls: 1, input: 0, write: whole, read: 0, output: twinPost.output };
  const counterJob = cost(twinTotals) - cost(twinPost) + cost(counterPost);
  const rest = (job: JobResult) => totals(job.calls.slice(at + 1));
  const describe = (t: Totals) =>
    `read ${int(t.read).padStart(7)}  write ${int(t.write).padStart(7)}  input ${int(t.input).padStart(5)}  cost ${int(post(t)).padStart(7)}`;
  const coldMicro = cold.terminal.transitions?.microcompact ?? 0;
  const twinMicro = twin.terminal.transitions?.microcompact ?? 0;
  const lines = [
    `cold: ${COLD_TURNS} turns on a ${int(COLD_WINDOW)}-token window (no threshold reached); turn ${PAUSE_TURN + 1}'s Bash sleeps ${COLD_PAUSE_S} s,`,
    `      past the 5-minute cache lifetime (workflow: ${DEFAULT_CACHE_TTL_MS / 60_000} min; server: default); its twin's sleeps 1 s.`,
    `      the next call came ${gapS.toFixed(0)} s after the one before; microcompact: cold job ${coldMicro}, twin ${twinMicro}`,
    `  the call after the pause (tokens; cost in uncached-input-token units):`,
    `    warm twin:                       ${describe(twinPost)}`,
    `    cold, microcompacted:            ${describe(coldPost)}`,
    `    cold, not microcompacted (twin's prompt written whole, counterfactual): ${int(post(counterPost))}`,
    `  rest of the job (${Math.max(0, cold.calls.length - at - 1)} calls): twin ${int(cost(rest(twin)))}, cold ${int(cost(rest(cold)))}` +
      ` (the cold job's prompts are smaller: old results stay cleared)`,
    `  whole job cost: twin ${int(cost(twinTotals))} (${(cost(twinTotals) / uncached(twinTotals)).toFixed(3)}x uncached), cold+microcompact ${int(
      cost(coldTotals),
    )} (${(cost(coldTotals) / uncached(coldTotals)).toFixed(3)}x), cold without microcompact ~${int(counterJob)}`,
  ];
  if (gapS * 1000 <= DEFAULT_CACHE_TTL_MS) {
    lines.push(
      `  note: a pause of ${COLD_PAUSE_S} s does not pass the workflow's ${DEFAULT_CACHE_TTL_MS / 1000} s cache lifetime, so it cannot microcompact on a cold cache`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  progress('bundling workflow code...');
  const bundle = await bundleWorkflows();
  progress('starting the Temporal dev server...');
  const env = await startDevServer();
  try {
    if (THINKING_CHARS > 0) {
      progress(`running warm (${TURNS} turns) without thinking and with ${THINKING_CHARS} characters of it a turn...`);
      const [plain, thinking] = await Promise.all([
        runJob(env, bundle, 'plain', warmScript(), WINDOW),
        runJob(env, bundle, 'thinking', warmScript(THINKING_CHARS), WINDOW, { thinking: { mode: 'adaptive' } }),
      ]);
      const lines = [
        `thinking economics: prices input 1, cache write ${PRICE.write}, cache read ${PRICE.read}, output ${OUTPUT_PRICE} (uncached: every input token at 1)`,
        `node ${process.version}, ${os.cpus().length} cpus`,
        `columns: calls, mean input tokens per call, cache-read share of input, input cost vs uncached, cost with output vs uncached`,
        '',
        '--- without thinking',
        ...warmReport(plain),
        '',
        `--- with thinking (${THINKING_CHARS} characters opening every reply, sent back signed)`,
        ...warmReport(thinking),
        '',
        `whole job, in uncached-input-token units: without ${int(cost(totals(plain.calls)))}, with ${int(
          cost(totals(thinking.calls)),
        )} (${(cost(totals(thinking.calls)) / cost(totals(plain.calls))).toFixed(3)}x); input tokens ${int(
          allInput(totals(plain.calls)),
        )} vs ${int(allInput(totals(thinking.calls)))}, output ${int(totals(plain.calls).output)} vs ${int(
          totals(thinking.calls).output,
        )}`,
      ];
      console.log(lines.join('\n'));
      return;
    }
    progress(
      COLD
        ? `running warm (${TURNS} turns), cold and twin (${COLD_TURNS} turns; the cold one pauses ${COLD_PAUSE_S} s) concurrently...`
        : `running warm (${TURNS} turns)...`,
    );
    const [warm, cold, twin] = await Promise.all([
      runJob(env, bundle, 'warm', warmScript(), WINDOW).then((job) => {
        progress('warm job done');
        return job;
      }),
      COLD ? runJob(env, bundle, 'cold', coldScript('cold', COLD_PAUSE_S), COLD_WINDOW) : undefined,
      COLD ? runJob(env, bundle, 'twin', coldScript('twin', 1), COLD_WINDOW) : undefined,
    ]);
    if (process.env.BENCH_CACHE_DUMP) {
      fs.writeFileSync(
        process.env.BENCH_CACHE_DUMP,
        JSON.stringify({ warm: warm.calls, cold: cold?.calls, twin: twin?.calls }),
      );
    }
    const lines = [
      `cache economics: prices input 1, cache write ${PRICE.write}, cache read ${PRICE.read}, output ${OUTPUT_PRICE} (uncached: every input token at 1)`,
      `node ${process.version}, ${os.cpus().length} cpus; temporal dev server: ${SERVER_ARGS.length > 0 ? `extra args ${SERVER_ARGS.join(' ')}` : 'default configuration'}`,
      `columns: calls, mean input tokens per call, cache-read share of input, input cost vs uncached, cost with output vs uncached`,
      '',
      ...warmReport(warm),
    ];
    if (cold && twin) lines.push('', ...coldReport(cold, twin));
    console.log(lines.join('\n'));
  } finally {
    await env.teardown();
    removeTempDirs();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
