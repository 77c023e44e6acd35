import fs from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { ContentStore } from '../activities/store/content-store';
import { markReachable, sweepObjects } from '../activities/store/gc';
import type { Marked, ObjectReader, SweepOptions, SweepReport, Tally } from '../activities/store/gc';
import { FileContentStore } from '../activities/store/content-store';
import { s3ObjectReader, sweepS3Objects } from '../activities/store/s3-gc';
import { sweepDataHomes, sweepWorkspaceData } from '../activities/workspace-gc';
import type { WorkspaceSweepReport } from '../activities/workspace-gc';
import { AGE_FORM, ConfigurationError, formatAge, parseAge, storeDir, temporalTargetFromEnv } from './config';
import { connect } from './connect';
import type { Connected } from './connect';
import { jobReferences, PruneRefusedError } from './prune-jobs';
import type { Output } from './render';
import { openContentStore } from './store-config';

/**
 * The shortest `--older-than`: a model call holds the transcript segment it wrote first for as
 * long as the call runs (15 minutes at most by default) before its job learns of it, and only the
 * age protects it meanwhile.
 */
export const MIN_PRUNE_AGE_MS = 30 * 60_000;

/** How long an open job may take to answer `storeRoots` before prune gives up on it. */
const QUERY_TIMEOUT_MS = 10_000;

/** `--older-than`, checked as the option is read. */
export function parseOlderThan(value: string): number {
  const ms = parseAge(value);
  if (ms === undefined) throw new InvalidArgumentError(`Use an age: ${AGE_FORM}.`);
  if (ms < MIN_PRUNE_AGE_MS) {
    throw new InvalidArgumentError(
      `Use 30m or more: a model call still running may have stored content its job does not know of yet.`,
    );
  }
  return ms;
}

export interface PruneOptions {
  olderThanMs: number;
  /** Print what would go; remove nothing. */
  dryRun: boolean;
  /** More workspaces to clean, besides those of the jobs Temporal still holds. */
  workspaces?: string[];
  /** The instant the age counts back from (tests move it forward rather than wait). */
  now?: Date;
  queryTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface PruneReport {
  store: SweepReport;
  journal: WorkspaceSweepReport['journal'];
  toolResults: WorkspaceSweepReport['toolResults'];
  openJobs: number;
  recentlyClosed: number;
  /** Workspaces named by jobs or `--workspace` that are not on this machine: left alone. */
  absentWorkspaces: string[];
}

/**
 * `durable-agent prune`: mark everything open jobs (and jobs closed less than the age ago) still
 * reach, then sweep the content store, the tool journals and saved large results (in the data
 * directory, and those older workers left in workspaces) of what is unmarked and older than the age. Refuses, deleting nothing, when Temporal cannot be reached or
 * an open job cannot say what it needs.
 */
export async function prune(options: PruneOptions, out: Output): Promise<PruneReport> {
  const env = options.env ?? process.env;
  const cutoffMs = (options.now ?? new Date()).getTime() - options.olderThanMs;
  const contentStore = await openContentStore(env);
  const objects = await objectsOf(contentStore);
  const connected = await reach(env);
  try {
    const refs = await jobReferences(connected.client, {
      cutoffMs,
      queryTimeoutMs: options.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
    }).catch((error: unknown) => {
      if (error instanceof PruneRefusedError) throw error;
      throw new PruneRefusedError(
        `prune refused, nothing was deleted: could not list the jobs on ${connected.description} (${messageOf(error)}).`,
        { cause: error },
      );
    });

    const storeRoot = storeDir(env);
    const marked = await markReachable(objects.read, refs.roots);
    const lost = refs.reported.flatMap(({ jobId, refs: needed }) =>
      needed.filter((ref) => marked.missing.has(ref)).map((ref) => `${jobId} needs ${ref}`),
    );
    if (lost.length > 0) {
      throw new PruneRefusedError(
        `prune refused, nothing was deleted: open jobs need content that is not in the store at ${contentStore.location} ` +
          `(${lost.slice(0, 3).join('; ')}${lost.length > 3 ? `; ${lost.length - 3} more` : ''}). Set ` +
          'DURABLE_AGENT_STORE to the store their workers use, or DURABLE_AGENT_HOME to the folder they use; a job ' +
          'that really lost its content cannot go on: abort it, then prune again.',
      );
    }

    const sweep = { cutoffMs, dryRun: options.dryRun };
    const store = await objects.sweep(marked, sweep);
    const report: PruneReport = {
      store,
      journal: { removed: { count: 0, bytes: 0 }, kept: { count: 0, bytes: 0 } },
      toolResults: { removed: { count: 0, bytes: 0 }, kept: { count: 0, bytes: 0 } },
      openJobs: refs.openJobs,
      recentlyClosed: refs.recentlyClosed,
      absentWorkspaces: [],
    };
    // The journals and saved results of every workspace, in the data directory.
    const homes = await sweepDataHomes(storeRoot, {
      ...sweep,
      keepJournals: refs.keepJournals,
      keepResultFiles: marked.resultFiles,
    });
    merge(report.journal, homes.journal);
    merge(report.toolResults, homes.toolResults);
    let workspaceCount = 0;
    for (const workspace of new Set([
      ...refs.workspaces,
      ...(options.workspaces ?? []).map((dir) => path.resolve(dir)),
    ])) {
      if (!fs.statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) {
        report.absentWorkspaces.push(workspace);
        continue;
      }
      workspaceCount += 1;
      const data = await sweepWorkspaceData(workspace, {
        ...sweep,
        keepJournals: refs.keepJournals,
        keepResultFiles: marked.resultFiles,
      });
      merge(report.journal, data.journal);
      merge(report.toolResults, data.toolResults);
    }
    printReport(
      report,
      { ...options, workspaceCount, description: connected.description, storeLocation: contentStore.location },
      out,
    );
    return report;
  } finally {
    await connected.connection.close();
  }
}

/** How the mark reads a store's objects, and how the sweep goes through them. */
async function objectsOf(store: ContentStore): Promise<{
  read: string | ObjectReader;
  sweep: (marked: Marked, options: SweepOptions) => Promise<SweepReport>;
}> {
  if (store instanceof FileContentStore) {
    return { read: store.root, sweep: (marked, options) => sweepObjects(store.root, marked, options) };
  }
  const { S3ContentStore } = await import('../activities/store/s3-content-store');
  if (!(store instanceof S3ContentStore)) throw new Error(`prune cannot sweep the store at ${store.location}`);
  return { read: s3ObjectReader(store), sweep: (marked, options) => sweepS3Objects(store, marked, options) };
}

/** A Temporal connection, or a refusal: without the list of open jobs nothing can be deleted safely. */
async function reach(env: NodeJS.ProcessEnv): Promise<Connected> {
  const where = temporalTargetFromEnv(env)?.address ?? 'the embedded server';
  try {
    return await connect({ withWorker: true, env });
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new PruneRefusedError(
      `prune refused, nothing was deleted: Temporal at ${where} cannot be reached (${messageOf(error)}), and ` +
        'without the list of open jobs prune could delete what a running job still needs. Start the server, or ' +
        'point TEMPORAL_ADDRESS at the one the jobs run on (unset, the embedded server is used), then run prune again.',
      { cause: error },
    );
  }
}

function printReport(
  report: PruneReport,
  context: PruneOptions & { workspaceCount: number; description: string; storeLocation: string },
  out: Output,
): void {
  const age = formatAge(context.olderThanMs);
  const verb = context.dryRun ? 'would remove' : 'removed';
  const { store } = report;
  const kept = { count: store.live.count + store.recent.count, bytes: store.live.bytes + store.recent.bytes };
  if (context.dryRun) out.write('dry run: nothing is deleted.');
  out.write(
    `${context.description}: ${plural(report.openJobs, 'open job', 'open jobs')} and ` +
      `${plural(report.recentlyClosed, 'job run', 'job runs')} closed in the last ${age} keep their content.`,
  );
  out.write(
    `store ${context.storeLocation}: ${verb} ${objects(store.removed)}; kept ${objects(kept)}: ` +
      `${store.live.count} in use, ${store.recent.count} newer than ${age}` +
      (store.abandoned.count > 0 ? `; ${verb} ${store.abandoned.count} unfinished write(s)` : '') +
      '.',
  );
  out.write(
    `journal: ${verb} ${count(report.journal.removed, 'entry', 'entries')} in ` +
      `${plural(context.workspaceCount, 'workspace', 'workspaces')}; ` +
      `kept ${count(report.journal.kept, 'entry', 'entries')}.`,
  );
  out.write(
    `tool results: ${verb} ${count(report.toolResults.removed, 'file', 'files')}; ` +
      `kept ${count(report.toolResults.kept, 'file', 'files')}.`,
  );
  for (const workspace of report.absentWorkspaces) out.write(`not on this machine, left alone: ${workspace}`);
}

function merge(into: { removed: Tally; kept: Tally }, from: { removed: Tally; kept: Tally }): void {
  for (const key of ['removed', 'kept'] as const) {
    into[key].count += from[key].count;
    into[key].bytes += from[key].bytes;
  }
}

function objects(tally: Tally): string {
  return count(tally, 'object', 'objects');
}

function count(tally: Tally, one: string, many: string): string {
  return `${plural(tally.count, one, many)} (${formatBytes(tally.bytes)})`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
