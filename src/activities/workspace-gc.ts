import { createHash } from 'node:crypto';
import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { add, tally } from './store/gc';
import type { SweepOptions, Tally } from './store/gc';
import { TOOL_RESULTS_DIR, WORKSPACE_DATA_DIR } from './tools/workspace-data';

/**
 * The folder of one job's tool journal, `<workspace>/.durable-agent/journal/<this>`: named as
 * `ToolJournal` names it, from the job's session key (`<workflowId>/<firstExecutionRunId>`).
 */
export function journalFolderName(sessionKey: string): string {
  return createHash('sha256').update(sessionKey).digest('hex').slice(0, 32);
}

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
 * The per-call data a job leaves in its workspace: one journal entry per tool call (with the
 * call's result) and the files large results were saved to. Entries of jobs that are neither open
 * nor recently closed, and result files nothing kept mentions, go once older than the cutoff. Only
 * real folders and files are touched: a symlink planted in `.durable-agent` leads nowhere.
 */
export async function sweepWorkspaceData(
  workspace: string,
  options: WorkspaceSweepOptions,
): Promise<WorkspaceSweepReport> {
  const report: WorkspaceSweepReport = {
    journal: { removed: tally(), kept: tally() },
    toolResults: { removed: tally(), kept: tally() },
  };
  if (!(await isRealDir(path.join(workspace, WORKSPACE_DATA_DIR)))) return report;

  const journalDir = path.join(workspace, WORKSPACE_DATA_DIR, 'journal');
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

  const resultsDir = path.join(workspace, TOOL_RESULTS_DIR);
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
  return report;
}

async function isRealDir(dir: string): Promise<boolean> {
  return (await lstat(dir).catch(() => undefined))?.isDirectory() ?? false;
}

async function realDirEntries(dir: string): Promise<string[]> {
  return (await isRealDir(dir)) ? readdir(dir) : [];
}
