import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolRunResult } from '../shared/activity-types';
import type { ToolResultBlock } from '../shared/messages';
import { ensureWorkspaceDataDir, WORKSPACE_DATA_DIR } from './tools/workspace-data';

export type JournalEntry =
  | { status: 'started'; toolUseId: string; name: string; startedAt: string }
  | { status: 'completed'; toolUseId: string; name: string; result: ToolRunResult; block: ToolResultBlock };

/**
 * A record of each tool call by `tool_use_id`, kept in the workspace the call acted on
 * (`.durable-agent/journal/`), so a retry on any worker that sees the workspace finds what an
 * earlier attempt did. "started" without "completed" means an attempt died part-way and the call
 * may have partly run.
 */
export class ToolJournal {
  private readonly dir: string;
  /** The folders exist: a call writes "started" then "completed", and checks once. */
  private prepared = false;

  constructor(
    private readonly workspace: string,
    sessionKey: string,
  ) {
    const session = createHash('sha256').update(sessionKey).digest('hex').slice(0, 32);
    this.dir = path.join(workspace, WORKSPACE_DATA_DIR, 'journal', session);
  }

  async read(toolUseId: string): Promise<JournalEntry | undefined> {
    try {
      return JSON.parse(await readFile(this.fileFor(toolUseId), 'utf8')) as JournalEntry;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async write(entry: JournalEntry): Promise<void> {
    if (!this.prepared) {
      await ensureWorkspaceDataDir(this.workspace);
      await mkdir(this.dir, { recursive: true });
      this.prepared = true;
    }
    const file = this.fileFor(entry.toolUseId);
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, JSON.stringify(entry));
    await rename(temp, file);
  }

  private fileFor(toolUseId: string): string {
    return path.join(this.dir, `${toolUseId.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
  }
}
