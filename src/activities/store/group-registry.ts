import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CommandGroup, HostIdentity } from '../tools/command-run';

/** A command's process group, on record while a worker supervises it. */
export interface GroupRecord extends CommandGroup, HostIdentity {
  /** The worker process supervising it (the one that started it, or one that adopted it). */
  workerPid: number;
  /** The call's journal entry, when it is journaled: a retry may adopt the group. */
  journalEntry?: string;
  /** The activity the group belongs to, to ask the server whether a retry will still come. */
  /** Its job's namespace: workers of other namespaces may share the host and its store. */
  namespace?: string;
  workflowId?: string;
  runId?: string;
  activityId?: string;
  attempt?: number;
}

/**
 * The process groups the workers of this data directory supervise, a file each under
 * `<store>/groups/`, so the next worker on a host finds the groups a dead one left behind and
 * sees that none runs on unsupervised (`src/worker/orphan-groups.ts`). Not a durability record:
 * a lost file only delays a clean-up, so the files are renamed into place but not fsynced.
 */
export class GroupRegistry {
  private readonly dir: string;

  constructor(storeRoot: string) {
    this.dir = path.join(storeRoot, 'groups');
  }

  /** Put `record` on file; resolves to what takes it off again. */
  async add(record: GroupRecord): Promise<() => Promise<void>> {
    await mkdir(this.dir, { recursive: true });
    const file = path.join(this.dir, `${record.host}-${record.pgid}-${record.leaderStart ?? 'x'}.json`);
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify(record));
    await rename(temp, file);
    return async () => {
      // An adopter may have taken the file over: only the supervisor on record removes it.
      const current = await readRecord(file);
      if (current === undefined || current.workerPid === process.pid) await rm(file, { force: true });
    };
  }

  async list(): Promise<Array<{ file: string; record: GroupRecord }>> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const found: Array<{ file: string; record: GroupRecord }> = [];
    for (const name of names.filter((entry) => entry.endsWith('.json'))) {
      const file = path.join(this.dir, name);
      const record = await readRecord(file);
      if (record) found.push({ file, record });
    }
    return found;
  }
}

async function readRecord(file: string): Promise<GroupRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(file, 'utf8')) as GroupRecord;
    return typeof record.pgid === 'number' && typeof record.workerPid === 'number' ? record : undefined;
  } catch {
    return undefined;
  }
}
