/**
 * The chaos benchmark: `test/chaos.test.ts` at scale. CHAOS_JOBS scripted jobs run once
 * uninterrupted (the control run), then all at once on one worker process that a loop SIGKILLs
 * CHAOS_KILLS times at random moments (the next worker starts at once, on the same host and data
 * directory), with one SIGKILL and restart of the Temporal dev server on the same database and port
 * half-way. Production session timeouts. Prints what survived and what the crashes cost.
 *
 *   npm run bench:chaos                  # setup, then this
 *   npx ts-node --files bench/chaos.ts   # without setup
 *
 * Knobs: CHAOS_JOBS (default 50), CHAOS_KILLS (worker kills, default 100), CHAOS_ROUNDS (rounds of
 * side effects per job, default 4: long enough that the jobs outlast the kills), CHAOS_MIN_DELAY_MS
 * and CHAOS_MAX_DELAY_MS (a worker's life after it is up, default 500 and 6000), CHAOS_SEED (repeat
 * a run's kill timings), CHAOS_BASH_EVERY (every this many kills waits for a side-effecting Bash to
 * run, default 4), CHAOS_DUMP (write the raw results there, as JSON), CHAOS_KEEP (keep the
 * workspaces and data directories).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflows } from '../src/worker/create-worker';
import {
  CHAOS_MODEL,
  DevServer,
  chaosJobs,
  compareRuns,
  crashCosts,
  formatProblems,
  cutCalls,
  killToNextCallMs,
  percentile,
  removePhaseFiles,
  retryDelays,
  runPhase,
  seededRandom,
} from '../test/support/chaos';
import { tempDir } from '../test/support/harness';

const JOBS = Number(process.env.CHAOS_JOBS ?? 50);
const KILLS = Number(process.env.CHAOS_KILLS ?? 100);
const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 4);
const MIN_DELAY_MS = Number(process.env.CHAOS_MIN_DELAY_MS ?? 500);
const MAX_DELAY_MS = Number(process.env.CHAOS_MAX_DELAY_MS ?? 6_000);
const BASH_EVERY = Number(process.env.CHAOS_BASH_EVERY ?? 4);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000_007);

const progress = (line: string) => process.stderr.write(`${line}\n`);
const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)} ms` : 'n/a');

async function main(): Promise<void> {
  // Every worker process loads this one bundle instead of bundling the workflows itself (10 s each).
  const bundle = path.join(os.tmpdir(), `durable-agent-chaos-bundle-${process.pid}.js`);
  fs.writeFileSync(bundle, (await bundleWorkflows()).code);
  process.env.DURABLE_AGENT_WORKFLOW_BUNDLE = bundle;
  const dir = tempDir('chaos-bench');
  const server = await DevServer.start(dir);
  try {
    const tag = `chaosbench${process.pid}t${Date.now().toString(36)}`;
    const jobs = chaosJobs(JOBS, tag, ROUNDS);
    progress(`chaos bench: ${JOBS} jobs, ${KILLS} worker kills, seed ${SEED}`);
    const control = await runPhase({ name: 'control', server, jobs, tag, timeoutMs: 30 * 60_000 });
    progress(`chaos bench: control run ${control.endedAt - control.startedAt} ms`);
    const chaos = await runPhase({
      name: 'chaos',
      server,
      jobs,
      tag,
      timeoutMs: 3 * 60 * 60_000,
      log: progress,
      chaos: {
        workerKills: KILLS,
        minDelayMs: MIN_DELAY_MS,
        maxDelayMs: MAX_DELAY_MS,
        serverKillAfter: Math.floor(KILLS / 2),
        serverDownMs: 2_000,
        bashKillEvery: BASH_EVERY,
        random: seededRandom(SEED),
      },
    });
    if (process.env.CHAOS_DUMP) {
      fs.writeFileSync(process.env.CHAOS_DUMP, JSON.stringify({ control, chaos }, null, 1));
    }

    const comparisons = compareRuns(control, chaos);
    const workerKills = chaos.kills.filter((k) => k.kind === 'worker');
    const serverKills = chaos.kills.length - workerKills.length;
    const cuts = cutCalls(chaos);
    const cutCommands = workerKills.reduce((n, k) => n + k.commands.length, 0);
    const retries = retryDelays(cuts);
    const firstRetries = retryDelays(cuts.filter((c) => c.attempt === 1));
    const nextCalls = killToNextCallMs(chaos);
    const paid = crashCosts(chaos);
    // What the jobs themselves say the crashes cost, beside what the model server saw.
    const reported = { attempts: 0, inputTokens: 0, outputTokens: 0, usd: 0 };
    for (const run of chaos.runs) {
      const own = run.terminal.paidAgain;
      if (!own) continue;
      reported.attempts += own.attempts;
      reported.inputTokens += own.inputTokens + own.cacheCreationInputTokens + own.cacheReadInputTokens;
      reported.outputTokens += own.outputTokens;
      reported.usd += own.costUSD ?? 0;
    }
    const repeatedEffects = comparisons.reduce((n, c) => n + c.repeatedEffects.filter((e) => e.count > 1).length, 0);
    const missingEffects = comparisons.reduce((n, c) => n + c.repeatedEffects.filter((e) => e.count === 0).length, 0);
    const repeatedEdits = comparisons.reduce((n, c) => n + c.repeatedEdits.filter((e) => e.count > 1).length, 0);
    const count = (check: (c: (typeof comparisons)[number]) => boolean) =>
      `${comparisons.filter(check).length}/${comparisons.length}`;
    const effectLines = jobs.reduce((n, j) => n + j.effects.length, 0);
    const editLines = jobs.reduce((n, j) => n + j.edits.length, 0);

    const rows: Array<[string, string]> = [
      ['jobs', `${JOBS} (${ROUNDS} rounds each; ${effectLines} side-effect lines, ${editLines} edited lines)`],
      ['kills', `${workerKills.length} worker SIGKILLs, ${serverKills} dev-server SIGKILL + restart (seed ${SEED})`],
      ['  cut mid-stream', `${cuts.length} model calls`],
      ['  cut mid-command', `${cutCommands} side-effecting Bash processes running at a kill`],
      ['jobs completed', count((c) => chaos.runs.find((r) => r.job.key === c.job)?.terminal.reason === 'completed')],
      ['transcripts identical', count((c) => c.transcriptIdentical)],
      ['Terminals identical', `${count((c) => c.terminalIdentical)} (modulo IGNORED_TERMINAL_FIELDS)`],
      ['workspaces identical', count((c) => c.filesIdentical)],
      ['repeated side effects', `${repeatedEffects} (missing: ${missingEffects})`],
      ['repeated edits', String(repeatedEdits)],
      [
        'model calls paid again',
        `${paid.calls} calls (${paid.billedCalls} billed), ${paid.inputTokens + paid.outputTokens} tokens ` +
          `(${paid.inputTokens} in, ${paid.outputTokens} out), $${paid.usd.toFixed(4)} at ${CHAOS_MODEL} prices`,
      ],
      [
        "  the Terminals' paidAgain",
        `${reported.attempts} attempts, ${reported.inputTokens + reported.outputTokens} tokens ` +
          `(${reported.inputTokens} in, ${reported.outputTokens} out), $${reported.usd.toFixed(4)}`,
      ],
      [
        'kill -> retry request',
        `median ${ms(percentile(retries, 50))}, p95 ${ms(percentile(retries, 95))} (${retries.length} cut model calls)`,
      ],
      [
        '  first cut of a call',
        `median ${ms(percentile(firstRetries, 50))}, p95 ${ms(percentile(firstRetries, 95))} ` +
          `(${firstRetries.length}; later cuts add the retry backoff, 2 s doubling)`,
      ],
      [
        'kill -> next request',
        `median ${ms(percentile(nextCalls, 50))}, p95 ${ms(percentile(nextCalls, 95))} ` +
          `(${nextCalls.length} jobs between model calls at a kill)`,
      ],
      ['wall time', `control ${ms(control.endedAt - control.startedAt)}, chaos ${ms(chaos.endedAt - chaos.startedAt)}`],
      ['workers that died unasked', String(chaos.workerDeaths.length)],
    ];
    if (workerKills.length < KILLS) {
      rows.push(['note', `the jobs ended after ${workerKills.length} of ${KILLS} kills: raise CHAOS_ROUNDS`]);
    }
    const width = Math.max(...rows.map(([label]) => label.length));
    process.stdout.write(`\n${rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n')}\n`);
    const problems = formatProblems(comparisons);
    if (problems) {
      process.stdout.write(`\nDifferences from the control run:\n${problems}\n`);
      process.exitCode = 1;
    }
    // Kept when something differed, to look at (the paths are in the report).
    if (!problems && !process.env.CHAOS_KEEP) for (const phase of [control, chaos]) removePhaseFiles(phase);
  } finally {
    await server.kill();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(bundle, { force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
