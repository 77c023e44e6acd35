import { createHash } from 'node:crypto';
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ToolRunResult } from '../shared/activity-types';
import type { ToolResultBlock } from '../shared/messages';
import { commandFiles, type CommandFiles, type CommandGroup, type HostIdentity } from './tools/command-run';
import { ensureDirDurably, writeFileDurably } from './store/durable-file';
import { workspaceHome } from './store/workspace-home';
import { WORKSPACE_DATA_DIR } from './tools/workspace-data';

/**
 * What a Write or Edit is about to do to a file, recorded before the file is replaced, so a retry
 * can tell from the file alone whether the replacement happened.
 */
export interface FileChange {
  /** The file replaced (absolute, symlinks resolved). */
  path: string;
  /** SHA-256 (hex) of the file before; null when it did not exist. */
  before: string | null;
  /** SHA-256 (hex) of the content being written. */
  after: string;
  /** The call's answer once the file holds `after`. */
  content: string;
  /** The session's read-state key of the file, and whether the session knows only part of it. */
  stateKey: string;
  partial: boolean;
}

/** A Bash call's process group, recorded before its command is let start. */
export interface CommandRecord extends CommandGroup, HostIdentity {
  /** The attempt and the worker process that started it. */
  attempt: number;
  workerPid: number;
  /** Whether it runs in the sandbox (a failed sandboxed command's answer says where the walls are). */
  sandboxed: boolean;
}

/** Who answers for a call now: an attempt that adopted the group, or one that fenced it off. */
export interface CallOwner extends HostIdentity {
  attempt: number;
  workerPid: number;
  since: string;
  /** adopted: it supervises the group; fenced: it could not (another host) and answered without it. */
  how: 'adopted' | 'fenced';
}

export type JournalEntry =
  | {
      status: 'started';
      toolUseId: string;
      name: string;
      startedAt: string;
      /** The attempt that wrote the entry (absent in entries of older workers). */
      attempt?: number;
      /**
       * Write and Edit only: null until the call is about to replace its file, then what it
       * replaces it with. Absent in entries of older workers, which wrote files in place.
       */
      fileChange?: FileChange | null;
      /**
       * Set when the entry on disk could not be read (torn by a crash of a system that never
       * synced it, or unreadable): all that is known is that the call was started.
       */
      unreadable?: string;
      /**
       * Bash only: null until the process group exists, then the group; the command starts only
       * once this is on disk. Absent in entries of older workers, whose commands ran unrecorded.
       */
      command?: CommandRecord | null;
      /** Set when a later attempt took the call over from the one that started it. */
      owner?: CallOwner;
    }
  | { status: 'completed'; toolUseId: string; name: string; result: ToolRunResult; block: ToolResultBlock };

/**
 * A record of each side-effecting tool call by `tool_use_id`, so a retry on any worker that shares
 * the data directory finds what an earlier attempt did. "started" without "completed" means an
 * attempt died part-way. Entries live under the data directory, keyed by workspace and job
 * (`<store>/workspaces/<workspace key>/journal/<job>/`); each is written atomically and fsynced
 * with its folder, so an entry that was reported written survives a power loss. Entries that
 * workers before this layout wrote in the workspace (`.durable-agent/journal/<job>/`) are still
 * honoured.
 */
export class ToolJournal {
  /** The folder exists: a call writes "started" then "completed", and checks once. */
  private prepared = false;

  private constructor(
    private readonly dir: string,
    private readonly legacyDir: string,
  ) {}

  /** The journal of job `sessionKey` in `workspace`, kept in the store at `storeRoot`. */
  static async open(storeRoot: string, workspace: string, sessionKey: string): Promise<ToolJournal> {
    const folder = journalFolderName(sessionKey);
    return new ToolJournal(
      path.join(await workspaceHome(storeRoot, workspace), 'journal', folder),
      path.join(workspace, WORKSPACE_DATA_DIR, 'journal', folder),
    );
  }

  /** The entry of `toolUseId`; a torn or unreadable one reads as "started" (with `unreadable` set). */
  async read(toolUseId: string): Promise<JournalEntry | undefined> {
    return (
      (await readEntry(this.fileFor(this.dir, toolUseId), toolUseId)) ??
      // A job in flight across an upgrade wrote its entries in the workspace.
      (await readEntry(this.fileFor(this.legacyDir, toolUseId), toolUseId))
    );
  }

  async write(entry: JournalEntry): Promise<void> {
    await this.prepare();
    await writeFileDurably(this.fileFor(this.dir, entry.toolUseId), JSON.stringify(entry));
  }

  /** The file of `toolUseId`'s entry (in the data directory). */
  entryFile(toolUseId: string): string {
    return this.fileFor(this.dir, toolUseId);
  }

  /** Where a Bash call's command writes its output and exit status: beside the call's entry. */
  commandFiles(toolUseId: string): CommandFiles {
    return commandFiles(this.fileFor(this.dir, toolUseId).replace(/\.json$/, ''));
  }

  /** The folder exists, so a command can create its files there before its entry is written. */
  async prepare(): Promise<void> {
    if (this.prepared) return;
    await ensureDirDurably(this.dir);
    this.prepared = true;
  }

  /** Drop a finished call's command files: its entry now holds the result. */
  async removeCommandFiles(toolUseId: string): Promise<void> {
    const files = this.commandFiles(toolUseId);
    await Promise.all([files.output, files.more, files.rest, files.exit].map((file) => rm(file, { force: true })));
  }

  private fileFor(dir: string, toolUseId: string): string {
    return path.join(dir, `${toolUseId.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
  }
}

/** The attempt that answers for a started call now: a later one that took it over, or its starter. */
export function ownerAttempt(entry: JournalEntry & { status: 'started' }): number | undefined {
  return entry.owner?.attempt ?? entry.attempt;
}

/** The folder of one job's journal: a hash of its session key (`<workflowId>/<firstExecutionRunId>`). */
export function journalFolderName(sessionKey: string): string {
  return createHash('sha256').update(sessionKey).digest('hex').slice(0, 32);
}

async function readEntry(file: string, toolUseId: string): Promise<JournalEntry | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    return unreadable(file, toolUseId, `it cannot be read: ${code ?? String(error)}`);
  }
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch {
    return unreadable(file, toolUseId, `it is not valid JSON (${text.length} bytes)`);
  }
  if (!isEntry(entry, toolUseId)) return unreadable(file, toolUseId, 'it is not a journal entry of this call');
  return entry;
}

async function unreadable(file: string, toolUseId: string, reason: string): Promise<JournalEntry> {
  const info = await stat(file).catch(() => undefined);
  return {
    status: 'started',
    toolUseId,
    name: '',
    startedAt: info ? info.mtime.toISOString() : 'at an unknown time',
    unreadable: reason,
  };
}

function isEntry(value: unknown, toolUseId: string): value is JournalEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  if (entry.toolUseId !== toolUseId || typeof entry.name !== 'string') return false;
  if (entry.status === 'started') return typeof entry.startedAt === 'string';
  if (entry.status !== 'completed') return false;
  const result = entry.result as Record<string, unknown> | undefined;
  const block = entry.block as Record<string, unknown> | undefined;
  return (
    typeof result?.ref === 'string' &&
    block?.type === 'tool_result' &&
    (typeof block.content === 'string' || Array.isArray(block.content))
  );
}
