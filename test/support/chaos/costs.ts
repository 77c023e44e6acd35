/**
 * What the crashes of a chaos run cost: model calls paid again, the calls worker kills cut and how
 * soon each was retried, how long a kill held up jobs that were between model calls, and
 * percentiles of those delays.
 */
import type { Usage } from '../../../src/shared/messages';
import { callCostUsd, modelPricesFor } from '../../../src/shared/pricing';
import { CHAOS_MODEL } from './jobs';
import type { PhaseResult } from './phase';
import type { RoutedCall } from './router';

export interface CrashCosts {
  /** Model calls made again: every attempt at a turn but the one whose reply the job used. */
  calls: number;
  /** Those the server had begun to answer (sent `message_start`), so they were billed. */
  billedCalls: number;
  inputTokens: number;
  outputTokens: number;
  usd: number;
}

/**
 * Model calls paid again because of crashes. Each turn's answered attempt is its last one; every
 * earlier attempt was paid for nothing: its whole prompt (as `message_start` reported it, cache
 * split included) and the output it had streamed when it was cut (from `message_delta` when it got
 * that far, else estimated at four characters per token, as the scripted server counts).
 */
export function crashCosts(phase: PhaseResult): CrashCosts {
  const costs: CrashCosts = { calls: 0, billedCalls: 0, inputTokens: 0, outputTokens: 0, usd: 0 };
  const prices = modelPricesFor(CHAOS_MODEL);
  const byTurn = new Map<string, RoutedCall[]>();
  for (const c of phase.calls) {
    const k = `${c.job}/${c.turn}`;
    byTurn.set(k, [...(byTurn.get(k) ?? []), c]);
  }
  for (const attempts of byTurn.values()) {
    for (const wasted of attempts.slice(0, -1)) {
      costs.calls++;
      if (!wasted.usage) continue; // cut before the server answered: nothing was billed
      costs.billedCalls++;
      const usage: Usage = {
        ...wasted.usage,
        output_tokens: wasted.completed ? wasted.usage.output_tokens : Math.ceil(wasted.streamedChars / 4),
      };
      costs.inputTokens += usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
      costs.outputTokens += usage.output_tokens;
      if (prices) costs.usd += callCostUsd(prices, usage);
    }
  }
  return costs;
}

/** A model call a worker kill cut, and how soon its retry reached the model server. */
export interface CutCall {
  job: string;
  turn: number;
  /** Which attempt at the turn was cut (1: the first). */
  attempt: number;
  /** From the kill to the retry's first request; undefined when no retry came. */
  retryMs?: number;
}

/**
 * The model calls worker kills cut: in flight at the kill, ended without their reply. Each one's
 * retry is the same job's next request for the same turn. The delay includes the retry policy's
 * backoff, which doubles with each attempt of the call (2 s, 4 s, 8 s, ... at most 60 s).
 */
export function cutCalls(phase: PhaseResult): CutCall[] {
  const cuts: CutCall[] = [];
  for (const kill of phase.kills.filter((k) => k.kind === 'worker')) {
    for (const cut of kill.openCalls) {
      if (cut.completed) continue;
      const sameTurn = phase.calls.filter((c) => c.job === cut.job && c.turn === cut.turn);
      const attempt = sameTurn.findIndex((c) => c.arrivedAt === cut.arrivedAt) + 1;
      const retry = sameTurn.find((c) => c.arrivedAt > kill.at);
      cuts.push({ job: cut.job, turn: cut.turn, attempt, retryMs: retry ? retry.arrivedAt - kill.at : undefined });
    }
  }
  return cuts;
}

/** The kill-to-retry delays of `cuts`, sorted. */
export function retryDelays(cuts: CutCall[]): number[] {
  return cuts.flatMap((c) => (c.retryMs === undefined ? [] : [c.retryMs])).sort((a, b) => a - b);
}

/**
 * From each worker kill to the next model request of each job that had no model call in flight
 * (it was running tools, or between activities): how long a kill held such a job up.
 */
export function killToNextCallMs(phase: PhaseResult): number[] {
  const delays: number[] = [];
  for (const kill of phase.kills.filter((k) => k.kind === 'worker')) {
    const inModel = new Set(kill.openCalls.map((c) => c.job));
    for (const job of kill.running.filter((j) => !inModel.has(j))) {
      const next = phase.calls.find((c) => c.job === job && c.arrivedAt > kill.at);
      if (next) delays.push(next.arrivedAt - kill.at);
    }
  }
  return delays.sort((a, b) => a - b);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}
