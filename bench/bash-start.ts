/**
 * What a Bash call's start costs the worker, started from the worker itself and from its command
 * helper (`startLeader`), with the worker as large as one that holds many jobs: `BASH_START_MIB`
 * (default 1024) of touched memory is held while 40 unsandboxed `true` commands run through the
 * Bash tool, one after the other, in each mode. Per call: the wall time, the worker's own CPU
 * (`process.cpuUsage`), and the longest stall of its event loop (a 1 ms timer's worst lateness,
 * which every model stream and heartbeat of the worker's other jobs waits out).
 *
 *   npx ts-node -T bench/bash-start.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { executeTool, type ToolContext } from '../src/activities/tools/index';
import { stopSpawner, useSpawnerHelper } from '../src/worker/spawner';

const CALLS = 40;
const MIB = Number(process.env.BASH_START_MIB ?? 1024);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

interface Measured {
  wall: number;
  cpu: number;
  stall: number;
}

async function measure(ctx: ToolContext): Promise<Measured> {
  const walls: number[] = [];
  const cpus: number[] = [];
  const stalls: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    let worst = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last - 1);
      last = now;
    }, 1);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = await executeTool('Bash', { command: 'true' }, ctx);
    walls.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / 1000);
    clearInterval(ticker);
    stalls.push(Math.max(worst, performance.now() - last - 1));
    if (result.isError) throw new Error(`Bash failed: ${result.content}`);
  }
  return { wall: median(walls), cpu: median(cpus), stall: median(stalls) };
}

async function main(): Promise<void> {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bash-start-')));
  // Memory a worker holding many jobs has: touched, so its pages are mapped.
  const ballast: Buffer[] = [];
  for (let i = 0; i < MIB; i++) ballast.push(Buffer.alloc(1 << 20, i & 0xff));
  const ctx: ToolContext = {
    workspace,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    readState: {},
    readDenyRules: [],
    sessionKey: 'bench',
  };
  try {
    const rows: Array<[string, Measured]> = [];
    for (const [name, helper] of [
      ['from the worker', false],
      ['from the helper', true],
    ] as const) {
      useSpawnerHelper(helper);
      await executeTool('Bash', { command: 'true' }, ctx); // warm-up (and the helper's start)
      rows.push([name, await measure(ctx)]);
    }
    const rss = Math.round(process.memoryUsage().rss / 2 ** 20);
    console.log(
      `bash-start: ${CALLS} unsandboxed Bash \`true\` calls per mode, worker RSS ${rss} MiB; node ${process.version}, ${os.cpus().length} cpus`,
    );
    console.log('| started         | wall p50  | worker CPU p50 | event-loop stall p50 |');
    console.log('| --------------- | --------- | -------------- | -------------------- |');
    for (const [name, m] of rows) {
      console.log(
        `| ${name} | ${m.wall.toFixed(1).padStart(6)} ms | ${m.cpu.toFixed(1).padStart(11)} ms | ${m.stall.toFixed(1).padStart(17)} ms |`,
      );
    }
    const [direct, helped] = [rows[0]![1], rows[1]![1]];
    console.log(
      `helper / worker: wall ${(helped.wall / direct.wall).toFixed(2)}x, worker CPU ${(helped.cpu / direct.cpu).toFixed(2)}x, stall ${(helped.stall / direct.stall).toFixed(2)}x`,
    );
    if (ballast.length !== MIB) throw new Error('ballast lost');
  } finally {
    stopSpawner();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
