/**
 * The chaos harness shared by `test/chaos.test.ts` and `bench/chaos.ts`: scripted jobs (Bash side
 * effects that append unique lines, Edits, parallel Reads, slow streams; `jobs.ts`), a Temporal dev
 * server of our own that can be SIGKILLed and started again on the same database and port
 * (`dev-server.ts`), a router in front of one scripted model server per job (a worker has one
 * `ANTHROPIC_BASE_URL`; `router.ts`), a loop that SIGKILLs the worker at random moments and starts
 * the next one at once (`phase.ts`), and the comparison of a chaos run against an uninterrupted
 * control run of the same jobs (`compare.ts`) with what the crashes cost (`costs.ts`).
 */
export { CHAOS_MODEL, chaosJobs, type ChaosJob } from './jobs';
export { ModelRouter, type RoutedCall } from './router';
export { DevServer } from './dev-server';
export {
  removePhaseFiles,
  runPhase,
  type JobRun,
  type KillPlan,
  type KillRecord,
  type PhaseOptions,
  type PhaseResult,
} from './phase';
export {
  IGNORED_TERMINAL_FIELDS,
  compareJob,
  compareRuns,
  formatProblems,
  jsonDiff,
  type JobComparison,
} from './compare';
export {
  crashCosts,
  cutCalls,
  killToNextCallMs,
  percentile,
  retryDelays,
  type CrashCosts,
  type CutCall,
} from './costs';
export { seededRandom } from './seeded-random';
export { sleep } from './sleep';
