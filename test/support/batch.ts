/**
 * Batches of scripted tasks for the batch tests: one scripted model server per task behind the
 * chaos harness's router (a task's prompt carries its `[chaos:<key>]` tag), each task appending
 * one unique line to a shared effects file with Bash, so a repeated side effect shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BatchTaskSpec } from '../../src/shared/batch';
import type { ScriptedReply, ScriptedSession } from '../../src/model-server';
import { ScriptedModelServer, sessionInput } from './harness';
import { ModelRouter } from './chaos/router';
import { textReply, toolUse } from './jobs';

export interface ScriptedBatch {
  router: ModelRouter;
  servers: Map<string, ScriptedModelServer>;
  tasks: BatchTaskSpec[];
  effects: string;
  close(): Promise<void>;
}

/** Each reply costs $1 at these prices (100,000 input tokens at $10 per million). */
export const DOLLAR_USAGE = {
  input_tokens: 100_000,
  output_tokens: 5,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};
export const DOLLAR_PRICES = [{ prefix: 'claude-sonnet-5-5', input: 10, output: 0, cacheWrite: 0, cacheRead: 0 }];

/**
 * `count` tasks `t1..tN`, each: `turns` Bash calls appending `<task> <turn>` to the shared
 * effects file, then an answer. `chunkDelayMs` slows every stream (a reply takes about 20 chunks).
 */
export async function scriptedBatch(
  workspace: string,
  count: number,
  options: {
    turns?: number;
    chunkDelayMs?: number;
    /** Each Bash call sleeps this long before it appends its line, as real tools take a while. */
    toolSeconds?: number;
    dollars?: boolean;
    input?: Partial<BatchTaskSpec['input']>;
    prefix?: string;
    /** Route through this router (another batch's) instead of a new one; closing leaves it open. */
    router?: ModelRouter;
  } = {},
): Promise<ScriptedBatch> {
  const router = options.router ?? (await ModelRouter.start());
  const servers = new Map<string, ScriptedModelServer>();
  const tasks: BatchTaskSpec[] = [];
  const effects = path.join(workspace, 'effects.log');
  const turns = options.turns ?? 1;
  const sleep = options.toolSeconds !== undefined ? `sleep ${options.toolSeconds} && ` : '';
  for (let i = 1; i <= count; i++) {
    const id = `t${i}`;
    const key = `${options.prefix ?? 'batch'}-${id}`;
    const usage = options.dollars ? { usage: DOLLAR_USAGE } : {};
    const replies: ScriptedReply[] = [
      ...Array.from({ length: turns }, (_, turn): ScriptedReply => ({
        content: [toolUse(`toolu_${id}_${turn}`, 'Bash', { command: `${sleep}echo "${id} ${turn}" >> effects.log` })],
        ...usage,
      })),
      { ...textReply(`done ${id}`), ...usage },
    ];
    const session: ScriptedSession = {
      replies,
      ...(options.chunkDelayMs !== undefined ? { chunkDelayMs: options.chunkDelayMs } : {}),
    };
    const server = await ScriptedModelServer.start(session);
    servers.set(id, server);
    router.add(key, server.url);
    tasks.push({
      id,
      input: sessionInput(workspace, {
        prompt: `[chaos:${key}] Append your line to effects.log.`,
        ...(options.dollars ? { modelPrices: DOLLAR_PRICES } : {}),
        ...options.input,
      }),
    });
  }
  return {
    router,
    servers,
    tasks,
    effects,
    close: async () => {
      if (!options.router) await router.close();
      await Promise.all([...servers.values()].map((server) => server.close()));
    },
  };
}

/** The effects file's lines, sorted. */
export function effectLines(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).sort() : [];
}

/** The most tasks whose model calls overlapped at any moment, from the router's record. */
export function peakConcurrentTasks(router: ModelRouter): number {
  const spans = new Map<string, { from: number; to: number }>();
  for (const call of router.calls) {
    const span = spans.get(call.job) ?? { from: call.arrivedAt, to: call.endedAt ?? Date.now() };
    span.from = Math.min(span.from, call.arrivedAt);
    span.to = Math.max(span.to, call.endedAt ?? Date.now());
    spans.set(call.job, span);
  }
  const edges = [...spans.values()].flatMap((span) => [
    { at: span.from, delta: 1 },
    { at: span.to, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let peak = 0;
  for (const edge of edges) {
    now += edge.delta;
    peak = Math.max(peak, now);
  }
  return peak;
}
