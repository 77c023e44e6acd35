import fs from 'node:fs';
import {
  DevServer,
  chaosJobs,
  compareRuns,
  crashCosts,
  cutCalls,
  formatProblems,
  percentile,
  removePhaseFiles,
  retryDelays,
  runPhase,
  seededRandom,
  type PhaseResult,
} from './support/chaos';
import { tempDir } from './support/harness';
import { messagesOf, toolResultBlocks } from './support/jobs';

/**
 * A handful of scripted jobs run twice on a dev server of the test's own: once uninterrupted (the
 * control run), once while a loop SIGKILLs their worker at random moments (a new one starts at
 * once; every third kill waits for a side-effecting Bash to be running) and, once, SIGKILLs the
 * dev server and starts it again on the same database and port. With production timeouts. Every
 * job must end as its control run did: the same transcript at every turn and attempt, the same
 * Terminal (but for the fields `IGNORED_TERMINAL_FIELDS` lists), the same files, no side-effect line
 * twice, no Edit twice. `CHAOS_SEED` repeats a run's kill delays.
 */
// The smallest run that still shows each kind of kill (stream, side-effecting Bash, server) landing
// on jobs under way; `npm run bench:chaos` runs the same at scale (50 jobs, 100 kills).
const JOBS = 3;
const WORKER_KILLS = 10;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000_007);
const log = (line: string) => process.stdout.write(`${line}\n`);

describe('chaos: workers SIGKILLed at random moments, the dev server once', () => {
  const tag = `chaos${process.pid}t${Date.now().toString(36)}`;
  // Two rounds of side effects each, so the jobs outlast the kills.
  const jobs = chaosJobs(JOBS, tag, 2);
  let dir: string;
  let server: DevServer | undefined;
  let control: PhaseResult | undefined;
  const phases: PhaseResult[] = [];

  beforeAll(async () => {
    dir = tempDir('chaos-server');
    server = await DevServer.start(dir);
    control = await runPhase({ name: 'control', server, jobs, tag, timeoutMs: 120_000 });
    phases.push(control);
    log(`chaos test: control run took ${control.endedAt - control.startedAt} ms`);
  }, 180_000);
  afterAll(async () => {
    await server?.kill();
    for (const phase of phases) removePhaseFiles(phase);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the comparison names the job, turn and message that differ, and counts repeated effects', () => {
    // The control run against a copy of itself with what a cut-off Bash used to leave: an
    // "interrupted" answer, and its line written twice by a retry; and an Edit applied twice.
    const reference = control!;
    const tampered: PhaseResult = structuredClone(reference);
    const run = tampered.runs[0]!;
    const job = run.job;
    const sleeper = job.session.replies
      .flatMap((reply) => reply.content)
      .find((block) => block.type === 'tool_use' && JSON.stringify(block.input).includes('sleep 3'));
    if (sleeper?.type !== 'tool_use') throw new Error(`${job.key} has no sleeping Bash`);
    for (const request of run.requests) {
      for (const message of messagesOf(request)) {
        for (const block of toolResultBlocks(message)) {
          if (block.tool_use_id !== sleeper.id) continue;
          block.content = 'The Bash call was interrupted by a worker failure and may have partly run.';
          block.is_error = true;
        }
      }
    }
    const effect = job.effects[1]!;
    run.files['effects.log'] += `${effect}\n`;
    const edit = job.edits[0]!;
    run.files[edit.file] += `${edit.line}\n`;

    const [comparison] = compareRuns(reference, tampered).filter((c) => c.job === job.key);
    const report = formatProblems(compareRuns(reference, tampered));
    expect(comparison).toMatchObject({ transcriptIdentical: false, filesIdentical: false });
    expect(report).toContain(`${job.key}:`);
    expect(report).toMatch(/different transcript on turn \d+ \(attempt 1\)/);
    expect(report).toContain('expected "(Bash completed with no output)"');
    expect(report).toContain('got      "The Bash call was interrupted by a worker failure');
    expect(report).toContain(`side effect ${effect} is in effects.log 2 times`);
    expect(report).toContain(`edit line "${edit.line}" is in ${edit.file} 2 times`);
    expect(formatProblems(compareRuns(reference, reference))).toBe('');
  });

  test('every job ends with the transcript, Terminal and files of its uninterrupted run', async () => {
    log(`chaos test: seed ${SEED} (CHAOS_SEED=${SEED} repeats these kill delays)`);
    const chaos = await runPhase({
      name: 'chaos',
      server: server!,
      jobs,
      tag,
      // Production timeouts: a call cut twice whose hand-back was lost waits out two 60 s model
      // heartbeats, and CI's second Node pass runs on a loaded machine (two jobs once took longer
      // than 200 s there; the same seed passed in 174 s on its own).
      timeoutMs: 300_000,
      log,
      chaos: {
        workerKills: WORKER_KILLS,
        minDelayMs: 500,
        maxDelayMs: 3_500,
        serverKillAfter: Math.floor(WORKER_KILLS / 2),
        serverDownMs: 1_500,
        // Three kills aimed at a running side-effecting Bash, each at most 300 ms into it (its
        // commands sleep 1 to 4 s): with 1 s and two aimed kills, a run once cut none.
        bashKillEvery: 3,
        bashJitterMs: 300,
        // And two at a model call in flight: on a loaded machine ten random kills once cut none.
        modelKillEvery: 4,
        random: seededRandom(SEED),
      },
    });
    phases.push(chaos);
    const comparisons = compareRuns(control!, chaos);
    const workerKills = chaos.kills.filter((k) => k.kind === 'worker');
    const cuts = cutCalls(chaos);
    const retries = retryDelays(cuts);
    const paid = crashCosts(chaos);
    log(
      `chaos test: ${JOBS} jobs, ${workerKills.length} worker kills (${cuts.length} model calls and ` +
        `${workerKills.reduce((n, k) => n + k.commands.length, 0)} side-effecting Bash cut), 1 server kill, ` +
        `${chaos.endedAt - chaos.startedAt} ms; transcripts identical ` +
        `${comparisons.filter((c) => c.transcriptIdentical).length}/${JOBS}; model calls paid again ${paid.calls}; ` +
        `kill -> retry median ${percentile(retries, 50)} ms, p95 ${percentile(retries, 95)} ms`,
    );

    // One report naming each job, turn and message that differs, expected against got.
    expect(formatProblems(comparisons)).toBe('');
    for (const run of control!.runs) expect(run.terminal.reason).toBe('completed');
    expect(chaos.workerDeaths).toEqual([]);
    // The kill loop really ran while the jobs did: in streams, in side-effecting commands, and once for the server.
    // (The loop stops when the jobs end; under kills they take long enough for nearly all of them.)
    expect(workerKills.length).toBeGreaterThanOrEqual(WORKER_KILLS - 3);
    expect(cuts.length).toBeGreaterThan(0);
    expect(workerKills.filter((k) => k.commands.length > 0).length).toBeGreaterThan(0);
    expect(chaos.kills.filter((k) => k.kind === 'server')).toHaveLength(1);
  }, 360_000);
});
