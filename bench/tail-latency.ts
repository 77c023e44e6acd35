/**
 * How soon streamed text shows in `durable-agent tail`: the delay from a text delta leaving the
 * model server to its text appearing on the stdout of a real `tail` process.
 *
 * One job on a local Temporal dev server, its worker a separate process as in production
 * (`src/worker/main.ts`, production heartbeat throttle and session timeouts). The job first parks
 * on an approval, so `tail` is up before the reply starts; then the scripted model streams a reply
 * of DELTAS deltas, one every INTERVAL ms, each marked with its number. The model server stamps
 * each delta as it is handed to the socket; the bench stamps each marker as it first appears on
 * tail's stdout. Both clocks are this process's.
 *
 *   npm run bench:tail                 # setup, then this
 *   npx ts-node bench/tail-latency.ts  # without setup
 *
 * Knobs: BENCH_DELTAS (default 200), BENCH_INTERVAL_MS (default 75).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import { DEFAULT_SESSION_TIMEOUTS } from '../src/shared/session';
import { HEARTBEAT_THROTTLE_MS } from '../src/worker/create-worker';
import { approvalSignal } from '../src/workflows/definitions';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from '../test/support/harness';

const root = path.join(__dirname, '..');
const DELTAS = Number(process.env.BENCH_DELTAS ?? 200);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 75);
/** The scripted server streams a long text in 64-character deltas: one marked segment each. */
const SEGMENT_CHARS = 64;

const marker = (i: number) => `<d${String(i).padStart(4, '0')}>`;

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
}

async function main(): Promise<void> {
  const text = Array.from({ length: DELTAS }, (_, i) => `${marker(i)} `.padEnd(SEGMENT_CHARS - 1, '.') + ' ').join('');
  const gateId = 'toolu_gate';
  const session: ScriptedSession = {
    name: 'tail-latency',
    replies: [
      { content: [{ type: 'tool_use', id: gateId, name: 'Write', input: { file_path: 'gate.txt', content: 'go\n' } }] },
      { content: [{ type: 'text', text }] },
    ],
    chunkDelayMs: INTERVAL_MS,
  };
  const sent = new Map<string, number>();
  const server = await ScriptedModelServer.start(session, {
    onStreamFrame: (frame) => {
      const found = /<d\d{4}>/.exec(frame);
      if (found && frame.includes('text_delta') && !sent.has(found[0])) sent.set(found[0], Date.now());
    },
  });
  const env = await startTemporal();
  const home = tempDir('bench-home');
  const taskQueue = uniqueTaskQueue('tail-latency');
  const worker = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home });
  let tail: ReturnType<typeof spawn> | undefined;
  try {
    const jobId = `tail-latency-${Date.now()}`;
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: jobId,
      args: [
        sessionInput(makeWorkspace({}), {
          timeouts: DEFAULT_SESSION_TIMEOUTS,
          permissions: { mode: 'default' },
        }),
      ],
    });
    const seen = new Map<string, number>();
    let stdout = '';
    let scanFrom = 0;
    tail = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', path.join(root, 'src/client/cli.ts'), 'tail', jobId],
      {
        cwd: root,
        env: { ...process.env, TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: 'default', DURABLE_AGENT_HOME: home },
      },
    );
    const exited = new Promise<number | null>((resolve) => tail?.on('exit', (code) => resolve(code)));
    tail.stdout?.on('data', (chunk: Buffer) => {
      const now = Date.now();
      stdout += chunk.toString();
      // A marker may straddle two chunks: rescan from a little before the new text.
      for (const found of stdout.slice(scanFrom).matchAll(/<d\d{4}>/g)) {
        if (!seen.has(found[0])) seen.set(found[0], now);
      }
      scanFrom = Math.max(0, stdout.length - 8);
    });
    await waitFor(async () => (stdout.includes('needs approval') ? true : undefined), 120_000, 'tail to show the job');
    await handle.signal(approvalSignal, { toolUseId: gateId, decision: 'allow' });
    const code = await exited;
    if (code !== 0) throw new Error(`tail exited with ${code}:\n${stdout.slice(-2000)}`);

    const streamEnd = Math.max(...sent.values());
    const delays: number[] = [];
    let missing = 0;
    let afterEnd = 0;
    for (let i = 0; i < DELTAS; i++) {
      const leftServer = sent.get(marker(i));
      const shown = seen.get(marker(i));
      if (leftServer === undefined || shown === undefined) {
        missing++;
        continue;
      }
      delays.push(shown - leftServer);
      if (shown > streamEnd) afterEnd++;
    }
    delays.sort((a, b) => a - b);
    const duplicates = Array.from({ length: DELTAS }, (_, i) => stdout.split(marker(i)).length - 1).filter(
      (n) => n > 1,
    );
    console.log(
      `tail latency: ${DELTAS} deltas of ${SEGMENT_CHARS} characters, one every ${INTERVAL_MS} ms; ` +
        `worker heartbeat throttle ${HEARTBEAT_THROTTLE_MS} ms, follow poll 250 ms`,
    );
    console.log(`  median ${percentile(delays, 50)} ms, p95 ${percentile(delays, 95)} ms, max ${delays.at(-1)} ms`);
    console.log(
      `  ${delays.length} shown, ${missing} missing, ${duplicates.length} shown twice, ` +
        `${afterEnd} shown only after the stream ended`,
    );
  } finally {
    if (tail && tail.exitCode === null) tail.kill('SIGINT');
    await worker.kill('SIGTERM');
    await server.close();
    await env.teardown();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
