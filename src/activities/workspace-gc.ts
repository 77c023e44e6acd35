import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { add, tally } from './store/gc';
import type { SweepOptions, Tally } from './store/gc';
import { WORKSPACES_DIR } from './store/workspace-home';
import { TOOL_RESULTS_DIR, WORKSPACE_DATA_DIR } from './tools/workspace-data';

/**
 * The folder of one job's tool journal, `<store>/workspaces/<workspace key>/journal/<this>` (and,
 * from older workers, `<workspace>/.durable-agent/journal/<this>`): named from the job's session
 * key (`<workflowId>/<firstExecutionRunId>`).
 */
export { journalFolderName } from './tool-journal';

export interface WorkspaceSweepOptions extends SweepOptions {
  /** Journal folders to leave whole: those of open jobs and of jobs closed after the cutoff. */
  keepJournals: ReadonlySet<string>;
  /** Tool-results files that content still kept points the model to. */
  keepResultFiles: ReadonlySet<string>;
}

export interface WorkspaceSweepReport {
  journal: { removed: Tally; kept: Tally };
  toolResults: { removed: Tally; kept: Tally };
}

/**
 * The per-call data a job left in its workspace before it moved to the data directory (one journal
 * entry per tool call, with the call's result), and the workspace copies of large results. Entries
 * of jobs that are neither open nor recently closed, and result files nothing kept mentions, go
 * once older than the cutoff. Only real folders and files are touched: a symlink planted in
 * `.durable-agent` leads nowhere.
 */
export async function sweepWorkspaceData(
  workspace: string,
  options: WorkspaceSweepOptions,
): Promise<WorkspaceSweepReport> {
  const report = emptyReport();
  if (!(await isRealDir(path.join(workspace, WORKSPACE_DATA_DIR)))) return report;
  await sweepFolders(
    path.join(workspace, WORKSPACE_DATA_DIR, 'journal'),
    path.join(workspace, TOOL_RESULTS_DIR),
    options,
    report,
  );
  return report;
}

/**
 * The same for the data directory's folder of every workspace (`<store>/workspaces/<key>/`):
 * swept whether or not the workspace is still on this machine, since the journal folders and
 * result files to keep are known by name.
 */
export async function sweepDataHomes(storeRoot: string, options: WorkspaceSweepOptions): Promise<WorkspaceSweepReport> {
  const report = emptyReport();
  const homes = path.join(storeRoot, WORKSPACES_DIR);
  for (const key of await realDirEntries(homes)) {
    const home = path.join(homes, key);
    if (!(await isRealDir(home))) continue;
    await sweepFolders(path.join(home, 'journal'), path.join(home, TOOL_RESULTS_DIR), options, report);
  }
  return report;
}

function emptyReport(): WorkspaceSweepReport {
  return { journal: { removed: tally(), kept: tally() }, toolResults: { removed: tally(), kept: tally() } };
}

async function sweepFolders(
  journalDir: string,
  resultsDir: string,
  options: WorkspaceSweepOptions,
  report: WorkspaceSweepReport,
): Promise<void> {
  for (const folder of await realDirEntries(journalDir)) {
    const dir = path.join(journalDir, folder);
    if (!(await isRealDir(dir))) continue;
    const keep = options.keepJournals.has(folder);
    let left = 0;
    for (const name of await readdir(dir)) {
      const info = await lstat(path.join(dir, name)).catch(() => undefined);
      if (!info?.isFile()) {
        left += 1;
        continue;
      }
      if (keep || info.mtimeMs >= options.cutoffMs) {
        add(report.journal.kept, info.size);
        left += 1;
        continue;
      }
      if (!options.dryRun) await unlink(path.join(dir, name)).catch(() => undefined);
      add(report.journal.removed, info.size);
    }
    // A job that starts writing here again makes the folder anew on its next call.
    if (left === 0 && !options.dryRun) await rmdir(dir).catch(() => undefined);
  }

  for (const name of await realDirEntries(resultsDir)) {
    const info = await lstat(path.join(resultsDir, name)).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (options.keepResultFiles.has(name) || info.mtimeMs >= options.cutoffMs) {
      add(report.toolResults.kept, info.size);
      continue;
    }
    if (!options.dryRun) await unlink(path.join(resultsDir, name)).catch(() => undefined);
    add(report.toolResults.removed, info.size);
  }
}

async function isRealDir(dir: string): Promise<boolean> {
  return (await lstat(dir).catch(() => undefined))?.isDirectory() ?? false;
}

async function realDirEntries(dir: string): Promise<string[]> {
  return (await isRealDir(dir)) ? readdir(dir) : [];
}
