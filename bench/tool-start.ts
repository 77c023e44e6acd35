/**
 * What starting a tool's process costs the worker, started from the worker itself and from its
 * command helper (`startLeader` for Bash, `spawnPiped` for ripgrep and hooks), with the worker as large as
 * one that holds many jobs: `TOOL_START_MIB` (default 1024) of touched memory is held while 40
 * calls of each tool run one after the other in each mode: an unsandboxed Bash `true`, a Grep
 * over a one-file workspace, and an unsandboxed hook `true`. Per call: the wall time, the worker's own CPU (`process.cpuUsage`),
 * and the longest stall of its event loop (a 1 ms timer's worst lateness, which every model stream
 * and heartbeat of the worker's other jobs waits out).
 *
 *   npx ts-node -T bench/tool-start.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runHookProcess } from '../src/activities/hooks/hook-process';
import { SandboxEngine } from '../src/activities/sandbox/engine';
import { executeTool, type ToolContext } from '../src/activities/tools/index';
import { stopSpawner, useSpawnerHelper } from '../src/worker/spawner';
import { median } from './median';

const CALLS = 40;
const MIB = Number(process.env.TOOL_START_MIB ?? 1024);

/** One call of each measured kind; each throws when the call failed. */
function callsOf(ctx: ToolContext, engine: SandboxEngine): Record<string, () => Promise<void>> {
  const tool = (name: string, input: Record<string, unknown>) => async () => {
    const result = await executeTool(name, input, ctx);
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  };
  return {
    Bash: tool('Bash', { command: 'true' }),
    Grep: tool('Grep', { pattern: 'needle' }),
    hook: async () => {
      const run = await runHookProcess({
        command: 'true',
        timeoutSec: 60,
        workspace: ctx.workspace,
        sessionKey: 'bench',
        policy: { enabled: false, source: 'bench' },
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        stdin: '{"hook_event_name":"PreToolUse"}',
        engine,
        signal: ctx.signal,
      });
      if ('refused' in run || run.exitCode !== 0) throw new Error(`hook failed: ${JSON.stringify(run)}`);
    },
  };
}

interface Measured {
  wall: number;
  cpu: number;
  stall: number;
}

async function measure(call: () => Promise<void>): Promise<Measured> {
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
    await call();
    walls.push(performance.now() - started);
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / 1000);
    clearInterval(ticker);
    stalls.push(Math.max(worst, performance.now() - last - 1));
  }
  return { wall: median(walls), cpu: median(cpus), stall: median(stalls) };
}

async function main(): Promise<void> {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tool-start-')));
  fs.writeFileSync(path.join(workspace, 'a.txt'), 'a needle in a haystack\n');
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
    const rows: Array<[string, Measured, Measured]> = [];
    for (const [tool, call] of Object.entries(callsOf(ctx, new SandboxEngine()))) {
      const byMode: Measured[] = [];
      for (const helper of [false, true]) {
        useSpawnerHelper(helper);
        await call(); // warm-up (and the helper's start)
        byMode.push(await measure(call));
      }
      rows.push([tool, byMode[0]!, byMode[1]!]);
    }
    const rss = Math.round(process.memoryUsage().rss / 2 ** 20);
    console.log(
      `tool-start: ${CALLS} calls per tool and mode (Bash \`true\` unsandboxed, Grep over one file, a \`true\` hook unsandboxed), worker RSS ${rss} MiB; node ${process.version}, ${os.cpus().length} cpus`,
    );
    console.log('| tool | started         | wall p50  | worker CPU p50 | event-loop stall p50 |');
    console.log('| ---- | --------------- | --------- | -------------- | -------------------- |');
    const cell = (m: Measured) =>
      `${m.wall.toFixed(1).padStart(6)} ms | ${m.cpu.toFixed(1).padStart(11)} ms | ${m.stall.toFixed(1).padStart(17)} ms |`;
    for (const [tool, direct, helped] of rows) {
      console.log(`| ${tool} | from the worker | ${cell(direct)}`);
      console.log(`| ${tool} | from the helper | ${cell(helped)}`);
    }
    for (const [tool, direct, helped] of rows) {
      console.log(
        `${tool}, helper / worker: wall ${(helped.wall / direct.wall).toFixed(2)}x, worker CPU ${(helped.cpu / direct.cpu).toFixed(2)}x, stall ${(helped.stall / direct.stall).toFixed(2)}x`,
      );
    }
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
