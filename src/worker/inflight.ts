import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptors } from '@temporalio/worker';
import { isProcessAlive } from '../client/free-port';

/**
 * The activities a worker process is running, in a file of its own under the data directory, so
 * the next worker on this host can tell the server at once that they died with it. Without it, a
 * retry waits for the heartbeat timeout (60 s for a model call, 30 s for a tool) although a fresh
 * worker is up.
 *
 * Model calls have no side effect. A tool call's retry is safe at once too: a read-only call runs
 * again, a Write or Edit tells from its file's hash whether it happened, and a Bash call adopts
 * the command its dead predecessor started when it still runs here (`command-resume.ts`).
 */
export const FAST_FAILED_ACTIVITY_TYPES: ReadonlySet<string> = new Set(['callModel', 'compactConversation', 'runTool']);

export interface InflightActivity {
  /** Its job's namespace (absent in records of older workers). */
  namespace?: string;
  workflowId: string;
  runId: string;
  activityId: string;
  activityType: string;
  attempt: number;
  startedAt: string;
}

interface InflightRecord {
  pid: number;
  host: string;
  bootId: string | undefined;
  activities: InflightActivity[];
}

/** The kernel's id for this boot: a record from an earlier boot names processes that are all gone. */
export function bootId(): string | undefined {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

export function inflightDir(home: string): string {
  return path.join(home, 'inflight');
}

/**
 * This process's record; kept current as activities start and end.
 *
 * The file is written off the event loop, and changes that land while one write is under way go
 * out together in the next: with hundreds of calls in flight, a synchronous rewrite of the whole
 * record at every start and end blocked the worker's only JavaScript thread for milliseconds per
 * activity. The record may lag a start by one write; a call started in that window and cut by a
 * crash is retried at its heartbeat timeout instead of at once, as any call was before this record.
 * A call that ended but is still listed is left alone by the sweep (it is no longer at its attempt).
 */
export class InflightRecorder {
  private readonly running = new Map<string, InflightActivity>();
  private readonly file: string;
  private readonly base: Omit<InflightRecord, 'activities'>;
  private readonly writeFile: (file: string, text: string) => Promise<void>;
  private readonly onError: (error: unknown) => void;
  private writing: Promise<void> | undefined;
  private dirty = false;
  private closed = false;
  private failing = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    home: string,
    options: {
      /** Replaces the atomic file write (tests count the writes). */
      writeFile?: (file: string, text: string) => Promise<void>;
      onError?: (error: unknown) => void;
    } = {},
  ) {
    const dir = inflightDir(home);
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${os.hostname()}-${process.pid}.json`);
    this.base = { pid: process.pid, host: os.hostname(), bootId: bootId() };
    this.writeFile = options.writeFile ?? replaceFile;
    this.onError =
      options.onError ??
      ((error) =>
        console.error(
          `durable-agent worker: could not write its in-flight record ${this.file} (${String(error)}); ` +
            'calls cut by a crash of this worker will be retried at their heartbeat timeout',
        ));
    const temp = tempFileOf(this.file);
    fs.writeFileSync(temp, this.recordText());
    fs.renameSync(temp, this.file);
  }

  /** The worker's activity interceptor: records each model call and tool call while it runs. */
  interceptor(): (ctx: Context) => ActivityInterceptors {
    return (ctx) => ({
      inbound: {
        execute: async (input, next) => {
          const { info } = ctx;
          if (!FAST_FAILED_ACTIVITY_TYPES.has(info.activityType) || !info.workflowExecution) return next(input);
          const key = `${info.workflowExecution.workflowId}/${info.workflowExecution.runId}/${info.activityId}`;
          this.running.set(key, {
            namespace: info.workflowNamespace,
            workflowId: info.workflowExecution.workflowId,
            runId: info.workflowExecution.runId,
            activityId: info.activityId,
            activityType: info.activityType,
            attempt: info.attempt,
            startedAt: new Date().toISOString(),
          });
          this.changed();
          try {
            return await next(input);
          } finally {
            this.running.delete(key);
            this.changed();
          }
        },
      },
    });
  }

  /** Resolves once no write is under way or due (tests; and remove). */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** The worker ended normally: nothing of it is left to hand back. */
  async remove(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.settled();
    fs.rmSync(this.file, { force: true });
    fs.rmSync(tempFileOf(this.file), { force: true });
  }

  private changed(): void {
    // A call that outlives the worker's shutdown changes nothing: the record is gone.
    if (this.closed) return;
    this.dirty = true;
    this.writing ??= this.flush();
  }

  private async flush(): Promise<void> {
    // Never done within the call that starts it, so `writing` is set before it is cleared.
    await Promise.resolve();
    try {
      while (this.dirty && !this.closed) {
        this.dirty = false;
        try {
          await this.writeFile(this.file, this.recordText());
          this.failing = false;
        } catch (error) {
          // Said once per spell of failures; tried again at the next change, or in a while.
          if (!this.failing) this.onError(error);
          this.failing = true;
          this.dirty = true;
          this.retry ??= setTimeout(() => {
            this.retry = undefined;
            if (this.dirty) this.changed();
          }, RETRY_AFTER_FAILURE_MS).unref();
          return;
        }
      }
    } finally {
      this.writing = undefined;
    }
  }

  private recordText(): string {
    const record: InflightRecord = { ...this.base, activities: [...this.running.values()] };
    return JSON.stringify(record);
  }
}

/** A record that could not be written is tried again this long after, if nothing changed meanwhile. */
const RETRY_AFTER_FAILURE_MS = 1_000;

function tempFileOf(file: string): string {
  return `${file}.${process.pid}.tmp`;
}

/** Write through a temporary file and rename it over, so a reader never sees half a record. */
async function replaceFile(file: string, text: string): Promise<void> {
  const temp = tempFileOf(file);
  await fs.promises.writeFile(temp, text);
  await fs.promises.rename(temp, file);
}

/** What a sweep did, for the worker's log. */
export interface SweepReport {
  failed: InflightActivity[];
  /** Already retried, finished or gone: left alone. */
  skipped: number;
}

/**
 * Hand back the model and tool calls of workers on this host that died (their process is gone, or the host
 * rebooted since): each still at the attempt the dead worker ran is failed, retryably, so the
 * server starts its retry after the retry policy's first backoff, not at the heartbeat timeout.
 * An activity that moved on (another attempt runs, or it finished) is left alone.
 */
export async function failOrphanedModelCalls(client: Client, home: string): Promise<SweepReport> {
  const dir = inflightDir(home);
  const report: SweepReport = { failed: [], skipped: 0 };
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return report;
  }
  const thisBoot = bootId();
  for (const name of names) {
    const file = path.join(dir, name);
    let record: InflightRecord;
    try {
      record = JSON.parse(fs.readFileSync(file, 'utf8')) as InflightRecord;
    } catch {
      continue;
    }
    if (record.host !== os.hostname() || record.pid === process.pid) continue;
    const dead = record.bootId !== thisBoot || !isProcessAlive(record.pid);
    if (!dead) continue;
    // A worker of another namespace on this host (sharing the store) left it: the job is not in
    // ours, so its calls are left for a worker of theirs, file and all.
    if (record.activities.some((activity) => activity.namespace && activity.namespace !== client.options.namespace))
      continue;
    // Side by side: a worker that died with fifty calls in flight must not hand them back one by one.
    await Promise.all(
      record.activities.map(async (activity) => {
        if (!(await stillAtAttempt(client, activity))) {
          report.skipped += 1;
          return;
        }
        try {
          await client.activity.fail(
            { workflowId: activity.workflowId, runId: activity.runId, activityId: activity.activityId },
            ApplicationFailure.create({
              message: `the worker running this call (pid ${record.pid} on ${record.host}) died; retried at once by the next worker there`,
              type: 'worker_died',
            }),
          );
          report.failed.push(activity);
        } catch {
          report.skipped += 1;
        }
      }),
    );
    fs.rmSync(file, { force: true });
  }
  return report;
}

/** True when the activity is still running the attempt the dead worker had. */
async function stillAtAttempt(client: Client, activity: InflightActivity): Promise<boolean> {
  try {
    const description = await client.workflow.getHandle(activity.workflowId, activity.runId).describe();
    const pending = description.raw.pendingActivities?.find((entry) => entry.activityId === activity.activityId);
    return pending !== undefined && (pending.attempt ?? 1) === activity.attempt;
  } catch {
    return false;
  }
}
