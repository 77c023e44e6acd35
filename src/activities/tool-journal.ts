import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolRunResult } from '../shared/activity-types';

export type JournalEntry =
  | { status: 'started'; toolUseId: string; name: string; startedAt: string }
  | { status: 'completed'; toolUseId: string; name: string; result: ToolRunResult };

/**
 * A record of each tool call by `tool_use_id`, kept beside the content store so a retry on any
 * worker that shares it finds what an earlier attempt did. "started" without "completed" means an
 * attempt died part-way, and the call may have partly run.
 */
export class ToolJournal {
  constructor(readonly root: string) {}

  async read(sessionKey: string, toolUseId: string): Promise<JournalEntry | undefined> {
    try {
      return JSON.parse(await readFile(this.fileFor(sessionKey, toolUseId), 'utf8')) as JournalEntry;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async write(sessionKey: string, entry: JournalEntry): Promise<void> {
    const file = this.fileFor(sessionKey, entry.toolUseId);
    await mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, JSON.stringify(entry));
    await rename(temp, file);
  }

  private fileFor(sessionKey: string, toolUseId: string): string {
    const session = createHash('sha256').update(sessionKey).digest('hex').slice(0, 32);
    const id = toolUseId.replace(/[^A-Za-z0-9_-]/g, '_');
    return path.join(this.root, 'journal', session, `${id}.json`);
  }
}
