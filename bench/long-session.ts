/**
 * A long session (`npm run bench:long`): one scripted job of 1,000 turns, each a tool call that
 * returns about 20 KB (a Read of one of eight 20 KB files, or every third turn a Bash printing
 * 20 KB of its own), on a 200k-token window; the worker runs in its own process. Reports history
 * bytes per turn at turns 10, 100 and 1,000, continue-as-new runs, compactions, the largest
 * payload and model request, the store on disk, the worker's peak memory and the wall time.
 *
 * Knobs: BENCH_LONG_TURNS (default 1000), BENCH_LONG_WINDOW (default 200000), BENCH_LONG_RESULT_BYTES
 * (default 20000), BENCH_TEMPORAL_ARGS (see README).
 */
import os from 'node:os';
import path from 'node:path';
import { terminalOf } from '../src/client/job-terminal';
import type { ScriptedReply, ScriptedSession } from '../src/model-server';
import { ScriptedModelServer } from '../src/model-server';
import { contextThresholds, modelLimitsFor } from '../src/shared/context/model-limits';
import { DEFAULT_MAX_TOKENS } from '../src/shared/recovery';
import type { SessionInput } from '../src/shared/session';
import type { Terminal } from '../src/shared/terminal';
import { bundleWorkflows } from '../src/worker/create-worker';
import {
  MODEL,
  SERVER_ARGS,
  directorySize,
  int,
  kb,
  mb,
  modelLimits,
  positiveInt,
  progress,
  spawnWorkerProcess,
  startDevServer,
  withTimeout,
  writeBundle,
} from './context-harness';
import type { WorkerProcess } from './context-harness';
import { fetchJobHistory, historyBreakdown, historyByModelCall, largestPayloads } from './context-history';
import { RequestLog } from './context-requests';
import { filePath, printingBash, readCall, textFiles, textReply, workspaceWith } from './context-jobs';
import { removeTempDirs, tempDir } from './scenario';

const TURNS = positiveInt('BENCH_LONG_TURNS', 1000);
const WINDOW = positiveInt('BENCH_LONG_WINDOW', 200_000);
const RESULT_BYTES = positiveInt('BENCH_LONG_RESULT_BYTES', 20_000);
const FILES = 8;
const FINAL_TEXT = `Done: ${TURNS - 1} steps, every file read and every listing printed.`;
const RUN_TIMEOUT_MS = 30 * 60_000;
const PAYLOAD_LIMIT = 256 * 1024;

function script(): ScriptedSession {
  const replies: ScriptedReply[] = [];
  for (let i = 0; i < TURNS - 1; i++) {
    const id = `toolu_long_${String(i).padStart(4, '0')}`;
    const call =
      i % 3 === 2 ? printingBash(id, `turn ${i + 1}`, RESULT_BYTES) : readCall(id, filePath('data', i % FILES));
    replies.push({ content: [{ type: 'text', text: `Step ${i + 1} of the survey.` }, call] });
  }
  replies.push(textReply(FINAL_TEXT));
  return { name: 'long-session', replies, contextWindow: WINDOW, chunkDelayMs: 0 };
}

async function main(): Promise<void> {
  const workspace = workspaceWith(textFiles('data', FILES, RESULT_BYTES));
  const input: SessionInput = {
    prompt: `Survey the data folder: read each file and print each listing, ${TURNS - 1} steps in all.`,
    workspace,
    model: MODEL,
    modelLimits: modelLimits(WINDOW),
    permissions: { mode: 'bypassPermissions' },
  };
  const thresholds = contextThresholds(modelLimitsFor(MODEL, input.modelLimits), DEFAULT_MAX_TOKENS);

  progress('bundling workflow code...');
  const bundlePath = writeBundle(await bundleWorkflows());
  progress('starting the Temporal dev server...');
  const env = await startDevServer();
  const server = await ScriptedModelServer.start(script());
  const requests = new RequestLog(server);
  const home = tempDir('home');
  let worker: WorkerProcess | undefined;
  try {
    progress('starting the worker process...');
    worker = await spawnWorkerProcess({
      address: env.address,
      taskQueue: `bench-long-${process.pid}`,
      modelUrl: server.url,
      home,
      bundlePath,
    });
    progress(`running ${TURNS} turns...`);
    const start = performance.now();
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue: `bench-long-${process.pid}`,
      workflowId: `bench-long-${process.pid}-${Date.now()}`,
      args: [input],
    });
    const ticker = setInterval(() => {
      const last = server.requests.at(-1);
      progress(`turn ${last?.turn ?? 0}/${TURNS}, ${((performance.now() - start) / 1000).toFixed(0)} s`);
    }, 15_000);
    let terminal: Terminal;
    try {
      terminal = await withTimeout(terminalOf(handle), RUN_TIMEOUT_MS, `workflow ${handle.workflowId}`);
    } finally {
      clearInterval(ticker);
    }
    const ms = performance.now() - start;
    const memory = worker.memory();
    if (terminal.reason !== 'completed' || terminal.turnCount !== TURNS) {
      throw new Error(
        `bench: the job did not do the scripted work: ${terminal.reason} after ${terminal.turnCount} turns` +
          (terminal.detail ? ` (${terminal.detail})` : ''),
      );
    }

    progress('reading the history...');
    const job = await fetchJobHistory(env.client, handle.workflowId, handle.firstExecutionRunId);
    const byCall = historyByModelCall(job);
    const sizes = requests.stop();
    const store = directorySize(path.join(home, 'store'));

    const marks = [...new Set([10, 100, 1000, TURNS].filter((turn) => turn <= TURNS))].sort((a, b) => a - b);
    const turnRequests = sizes.filter((size) => size.kind === 'turn');
    const compactionRequests = sizes.filter((size) => size.kind === 'compaction');
    const largest = [...sizes].sort((a, b) => b.bytes - a.bytes)[0];
    const mostTokens = Math.max(...sizes.map((size) => size.tokens));
    const sent = sizes.reduce((sum, size) => sum + size.bytes, 0);
    const payloads = largestPayloads(job);
    const biggest = payloads[0];
    const transitions = terminal.transitions ?? {};

    const lines = [
      `long session: ${TURNS} turns, each a ~${kb(RESULT_BYTES)} tool result (Read of one of ${FILES} files, or every 3rd turn a Bash listing)`,
      `window ${int(WINDOW)} tokens (job modelLimits and server contextWindow): microcompact at ${int(thresholds.microcompactAt)}, autocompact at ${int(thresholds.autocompactAt)}`,
      `node ${process.version}, ${os.cpus().length} cpus; temporal dev server: ${SERVER_ARGS.length > 0 ? `extra args ${SERVER_ARGS.join(' ')}` : 'default configuration'}`,
      '',
      'history (encoded protobuf, all runs)     turn   cumulative   bytes/turn   marginal bytes/turn',
      ...marks.map((turn, index) => {
        const bytes = byCall.at(turn);
        const previous = index > 0 ? (marks[index - 1] as number) : 0;
        const marginal = (bytes - (index > 0 ? byCall.at(previous) : 0)) / (turn - previous);
        const span = index > 0 ? `(turns ${previous + 1}-${turn})` : `(turns 1-${turn})`;
        return `${' '.repeat(40)}${String(turn).padStart(5)} ${int(bytes).padStart(12)} ${int(bytes / turn).padStart(12)} ${int(marginal).padStart(12)} ${span}`;
      }),
      `continue-as-new: ${job.runs.length} runs (${job.runs.map((run) => mb(run.bytes)).join(', ')}), ${int(job.bytes)} bytes in all`,
      `largest payload in any run: ${int(biggest?.bytes ?? 0)} B (${biggest?.where ?? 'none'}, run ${biggest?.run ?? '-'}); limit ${int(PAYLOAD_LIMIT)}: ${
        (biggest?.bytes ?? 0) < PAYLOAD_LIMIT ? 'under' : 'OVER'
      }`,
      `history by event: ${historyBreakdown(job)
        .slice(0, 5)
        .map((part) => `${part.what} ${mb(part.bytes)}`)
        .join(', ')}`,
      '',
      `transitions: autocompact ${transitions.autocompact ?? 0}, microcompact ${transitions.microcompact ?? 0}, reactive_compact ${transitions.reactive_compact ?? 0}, next_turn ${transitions.next_turn ?? 0}`,
      `context at the end: ~${int(terminal.context?.tokens ?? 0)} tokens of ${int(terminal.context?.contextWindow ?? 0)}, ${terminal.context?.compactions ?? 0} compactions`,
      `model requests: ${turnRequests.length} turns + ${compactionRequests.length} compactions; largest body ${int(largest?.bytes ?? 0)} B (${largest?.kind ?? '-'}, turn ${largest?.turn ?? '-'}), most tokens ~${int(mostTokens)} of ${int(WINDOW)}: ${
        mostTokens <= WINDOW ? 'under the window' : 'OVER THE WINDOW'
      }`,
      `model requests in all: ${mb(sent)} sent; the history is ${((100 * job.bytes) / sent).toFixed(2)}% of that`,
      '',
      `store on disk (${path.join('<home>', 'store')}): ${int(store.files)} objects, ${int(store.bytes)} B (${mb(store.allocatedBytes)} allocated)`,
      `worker process: RSS ${mb(memory.startRss)} when polling, peak RSS sampled ${mb(memory.peakRss)}, VmHWM ${mb(memory.hwm)}`,
      `wall time: ${(ms / 1000).toFixed(1)} s, ${(ms / TURNS).toFixed(1)} ms/turn`,
    ];
    console.log(lines.join('\n'));
  } finally {
    requests.stop();
    await worker?.stop();
    await server.close();
    await env.teardown();
    removeTempDirs();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
