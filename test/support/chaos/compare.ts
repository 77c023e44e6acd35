/**
 * The comparison of a chaos run against an uninterrupted control run of the same jobs: transcript,
 * Terminal, workspace, side effects and edits, and the problems found as one report.
 */
import { isDeepStrictEqual } from 'node:util';
import type { RecordedRequest } from '../../../src/model-server';
import type { Terminal } from '../../../src/shared/terminal';
import type { JobRun, PhaseResult } from './phase';

/**
 * Terminal fields that may differ between an uninterrupted run and one under kills, and why:
 *
 * - `durationMs`, `durationApiMs`: wall-clock time; kills and retries take time.
 * - `modelRetries`: counts attempts beyond the first, which is what a crash causes.
 * - `usage`, `modelUsage`, `totalCostUsd`, `context.tokens`: the scripted server's prompt cache
 *   saw the cut attempts too, so a retry reads from the cache what its first attempt wrote: the
 *   input tokens split differently between uncached, cache write and cache read (and so cost
 *   differently) though the prompts are the same. Compared instead: output tokens and the total
 *   of the three input counters, which the same prompts and replies fix.
 * - `paidAgain`: what cut attempts were billed for; there are none without crashes (the benchmark
 *   sets it beside what the model server saw).
 * - `transcriptHead`: a content hash of the stored transcript, whose tool results name the
 *   workspace's absolute path, which differs per run. The transcript itself is compared through
 *   what the model received.
 *
 * Paths of the workspace and of the data directory are replaced by placeholders everywhere.
 */
export const IGNORED_TERMINAL_FIELDS = [
  'durationMs',
  'durationApiMs',
  'modelRetries',
  'usage',
  'modelUsage',
  'totalCostUsd',
  'paidAgain',
  'transcriptHead',
  'context.tokens',
] as const;

function normalise(value: unknown, run: { workspace: string }, home: string): unknown {
  return JSON.parse(JSON.stringify(value).split(run.workspace).join('<workspace>').split(home).join('<home>'));
}

function comparableTerminal(terminal: Terminal, run: JobRun, home: string): Record<string, unknown> {
  const copy = normalise(terminal, run, home) as Record<string, unknown>;
  for (const field of IGNORED_TERMINAL_FIELDS) {
    const [head, leaf] = field.split('.');
    if (leaf === undefined) delete copy[head!];
    else if (typeof copy[head!] === 'object' && copy[head!] !== null)
      delete (copy[head!] as Record<string, unknown>)[leaf];
  }
  const usage = terminal.usage;
  copy.promptTokens = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
  copy.outputTokens = usage.output_tokens;
  return copy;
}

/** What the model saw in one request, comparable across runs. */
function seen(
  request: RecordedRequest,
  run: JobRun,
  home: string,
): { system: unknown; tools: unknown; messages: unknown[] } {
  const body = request.body as { system?: unknown; tools?: unknown; messages?: unknown[] };
  return normalise({ system: body.system, tools: body.tools, messages: body.messages ?? [] }, run, home) as {
    system: unknown;
    tools: unknown;
    messages: unknown[];
  };
}

const show = (value: unknown, max = 700): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more]` : text;
};

/** Every place two JSON values differ, as `path: expected … got …` entries (at most 200). */
export function jsonDiff(expected: unknown, got: unknown, at = ''): string[] {
  if (isDeepStrictEqual(expected, got)) return [];
  const bothObjects = typeof expected === 'object' && expected !== null && typeof got === 'object' && got !== null;
  if (!bothObjects || Array.isArray(expected) !== Array.isArray(got)) {
    return [`${at || '(root)'}:\n      expected ${show(expected)}\n      got      ${show(got)}`];
  }
  const lines: string[] = [];
  const keys = new Set([...Object.keys(expected), ...Object.keys(got)]);
  for (const key of keys) {
    const a = (expected as Record<string, unknown>)[key];
    const b = (got as Record<string, unknown>)[key];
    lines.push(...jsonDiff(a, b, Array.isArray(expected) ? `${at}[${key}]` : at ? `${at}.${key}` : key));
    if (lines.length >= 200) break;
  }
  return lines;
}

/** The first `limit` entries of a diff, one per line, and how many more there were. */
function listDiff(lines: string[], limit = 8): string {
  const shown = lines.slice(0, limit).join('\n    ');
  return lines.length > limit ? `${shown}\n    … and ${lines.length - limit} more` : shown;
}

export interface JobComparison {
  job: string;
  transcriptIdentical: boolean;
  terminalIdentical: boolean;
  filesIdentical: boolean;
  /** Side-effect lines not found exactly once, with their count. */
  repeatedEffects: Array<{ line: string; count: number }>;
  /** Edit lines not found exactly once, with their count. */
  repeatedEdits: Array<{ file: string; line: string; count: number }>;
  problems: string[];
}

const occurrences = (text: string | undefined, line: string) =>
  (text ?? '').split('\n').filter((l) => l === line).length;

/** Compare one job's chaos run against its control run. */
export function compareJob(control: JobRun, controlHome: string, chaos: JobRun, chaosHome: string): JobComparison {
  const problems: string[] = [];
  const key = chaos.job.key;

  // The transcript: what the model saw at every turn, every attempt of it included.
  const expectedTurns = new Map<number, ReturnType<typeof seen>>();
  for (const request of control.requests) {
    if (request.kind !== 'turn') problems.push(`control run made a ${request.kind} request (turn ${request.turn})`);
    else if (request.attempt > 1) problems.push(`control run asked for turn ${request.turn} ${request.attempt} times`);
    else expectedTurns.set(request.turn, seen(request, control, controlHome));
  }
  let transcriptIdentical = true;
  const chaosTurns = new Set<number>();
  for (const request of chaos.requests) {
    chaosTurns.add(request.turn);
    const expected = expectedTurns.get(request.turn);
    if (request.kind !== 'turn' || !expected) {
      transcriptIdentical = false;
      problems.push(
        `${request.kind} request on turn ${request.turn} (attempt ${request.attempt}), which the control run never made`,
      );
      continue;
    }
    const got = seen(request, chaos, chaosHome);
    const diff = jsonDiff(expected, got);
    if (diff.length > 0) {
      transcriptIdentical = false;
      problems.push(
        `the model saw a different transcript on turn ${request.turn} (attempt ${request.attempt}):\n    ${listDiff(diff)}`,
      );
    }
  }
  if (chaosTurns.size !== expectedTurns.size) {
    transcriptIdentical = false;
    problems.push(`${chaosTurns.size} distinct turns, the control run had ${expectedTurns.size}`);
  }

  const terminalDiff = jsonDiff(
    comparableTerminal(control.terminal, control, controlHome),
    comparableTerminal(chaos.terminal, chaos, chaosHome),
  );
  if (terminalDiff.length > 0) problems.push(`the Terminal differs:\n    ${listDiff(terminalDiff)}`);

  const fileDiff = jsonDiff(control.files, chaos.files);
  if (fileDiff.length > 0) problems.push(`the workspace differs:\n    ${listDiff(fileDiff, 20)}`);

  const effectsLog = chaos.files['effects.log'];
  const repeatedEffects = chaos.job.effects
    .map((line) => ({ line, count: occurrences(effectsLog, line) }))
    .filter((e) => e.count !== 1);
  for (const e of repeatedEffects) problems.push(`side effect ${e.line} is in effects.log ${e.count} times`);
  const repeatedEdits = chaos.job.edits
    .map((e) => ({ ...e, count: occurrences(chaos.files[e.file], e.line) }))
    .filter((e) => e.count !== 1);
  for (const e of repeatedEdits) problems.push(`edit line "${e.line}" is in ${e.file} ${e.count} times`);

  return {
    job: key,
    transcriptIdentical,
    terminalIdentical: terminalDiff.length === 0,
    filesIdentical: fileDiff.length === 0,
    repeatedEffects,
    repeatedEdits,
    problems,
  };
}

export function compareRuns(control: PhaseResult, chaos: PhaseResult): JobComparison[] {
  return chaos.runs.map((run) => {
    const reference = control.runs.find((r) => r.job.key === run.job.key);
    if (!reference) throw new Error(`no control run of ${run.job.key}`);
    return compareJob(reference, control.home, run, chaos.home);
  });
}

/** The comparisons' problems as one report: which job, what differs, expected against got. */
export function formatProblems(comparisons: JobComparison[]): string {
  return comparisons
    .filter((c) => c.problems.length > 0)
    .map((c) => `${c.job}:\n  - ${c.problems.join('\n  - ')}`)
    .join('\n');
}
