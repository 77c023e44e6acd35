/**
 * One job against the scripted model server, for the workflow tests: a model server, an
 * in-process worker on its own task queue, a workspace and one `agentSession` run, all cleaned up
 * afterwards; and helpers to read what the model server received and what the `snapshot` query
 * says.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { RecordedRequest, ScriptedBlock, ScriptedReply, ScriptedSession } from '../../src/model-server';
import type { SessionInput, SessionSnapshot } from '../../src/shared/session';
import type { AgentWorker } from '../../src/worker/agent-worker';
import { snapshotQuery } from '../../src/workflows/definitions';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './harness';

// ---------------------------------------------------------------------------------------------
// One job

export interface ScriptedJob {
  server: ScriptedModelServer;
  handle: WorkflowHandle;
  workspace: string;
  /** The worker's content store (the default worker's; a custom `worker` is handed it too). */
  storeDir: string;
  /** When each request reached the server (ms since epoch), in arrival order; empty unless `recordArrivals`. */
  arrivals: number[];
}

export interface RunningWorker {
  worker: AgentWorker;
  done: Promise<void>;
}

export interface ScriptedJobOptions {
  session: ScriptedSession;
  /** The workspace's files (none by default). */
  files?: Record<string, string>;
  /** Named pipes to create in the workspace before the job starts. */
  fifos?: string[];
  input?: Partial<SessionInput>;
  /** Build the worker yourself (e.g. with another API key); the default is the harness's `startWorker`. */
  worker?: (on: {
    env: TestWorkflowEnvironment;
    server: ScriptedModelServer;
    taskQueue: string;
    storeDir: string;
  }) => Promise<RunningWorker>;
  /** Timestamp every request as it arrives, into `arrivals`. */
  recordArrivals?: boolean;
}

let jobCounter = 0;

/**
 * Start a scripted model server, a worker and one job, and hand them to `body`; always shut the
 * worker and the server down. Returns what `body` returns.
 */
export async function withScriptedJob<T>(
  env: TestWorkflowEnvironment,
  name: string,
  options: ScriptedJobOptions,
  body: (job: ScriptedJob) => Promise<T>,
): Promise<T> {
  const server = await ScriptedModelServer.start({ name, ...options.session });
  const taskQueue = uniqueTaskQueue(name);
  const storeDir = tempDir('store');
  // The server records a request before answering it, so polling its list dates each arrival.
  const arrivals: number[] = [];
  const watch = options.recordArrivals
    ? setInterval(() => {
        while (arrivals.length < server.requests.length) arrivals.push(Date.now());
      }, 5)
    : undefined;
  let running: RunningWorker | undefined;
  try {
    running = options.worker
      ? await options.worker({ env, server, taskQueue, storeDir })
      : await startWorker(env, server, { taskQueue, storeDir });
    const workspace = makeWorkspace(options.files ?? {});
    for (const fifo of options.fifos ?? []) execFileSync('mkfifo', [path.join(workspace, fifo)]);
    const handle = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `${name}-${process.pid}-${Date.now()}-${++jobCounter}`,
      args: [sessionInput(workspace, options.input)],
    });
    return await body({ server, handle, workspace, storeDir, arrivals });
  } finally {
    clearInterval(watch);
    running?.worker.shutdown();
    await Promise.all([running?.done, server.close()]);
  }
}

export interface ScriptedJobSuite {
  /** `withScriptedJob` on the suite's server, with the suite's defaults under `options`. */
  withJob<T>(name: string, options: ScriptedJobOptions, body: (job: ScriptedJob) => Promise<T>): Promise<T>;
}

/**
 * A Temporal dev server for the enclosing `describe` block (started in `beforeAll`, torn down in
 * `afterAll`), and jobs on it. `defaults` are options every job gets unless it sets them itself.
 */
export function scriptedJobSuite(defaults: Partial<ScriptedJobOptions> = {}): ScriptedJobSuite {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });
  return {
    withJob: (name, options, body) => {
      if (!env) throw new Error("the Temporal dev server is not running (run jobs inside the suite's tests)");
      return withScriptedJob(env, name, { ...defaults, ...options }, body);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Scripts

export function toolUse(id: string, name: string, input: Record<string, unknown>): ScriptedBlock {
  return { type: 'tool_use', id, name, input };
}

/** A reply made of one text block. */
/** A Read of `file`, as the scripted model asks for it. */
export const readCall = (id: string, file: string): ScriptedBlock => toolUse(id, 'Read', { file_path: file });

/** An Edit of `file` replacing `from` with `to`. */
export const editCall = (id: string, file: string, from: string, to: string): ScriptedBlock =>
  toolUse(id, 'Edit', { file_path: file, old_string: from, new_string: to });

export const textReply = (value: string): ScriptedReply => ({ content: [{ type: 'text', text: value }] });

// ---------------------------------------------------------------------------------------------
// What the model server received

export type RequestMessage = { role: string; content: string | Array<Record<string, unknown>> };

export type ToolResultJson = { type: 'tool_result'; tool_use_id: string; content: unknown; is_error?: boolean };

/** The messages of a recorded request. */
export function messagesOf(request: RecordedRequest | undefined): RequestMessage[] {
  const messages = (request?.body as { messages?: RequestMessage[] } | undefined)?.messages;
  if (!messages) throw new Error('request has no messages');
  return messages;
}

/** The messages of the `index`-th request the model server received. */
export function requestMessages(server: ScriptedModelServer, index: number): RequestMessage[] {
  const request = server.requests[index];
  if (!request) throw new Error(`no request ${index} (received ${server.requests.length})`);
  return messagesOf(request);
}

/** The tool_result blocks of a message, in order. */
export function toolResultBlocks(message: RequestMessage | undefined): ToolResultJson[] {
  const content = Array.isArray(message?.content) ? message.content : [];
  return content.filter((block) => block.type === 'tool_result') as unknown as ToolResultJson[];
}

/** The tool_result blocks of the last user message of the `index`-th request, in order. */
export function toolResultsOf(server: ScriptedModelServer, index: number): ToolResultJson[] {
  const last = requestMessages(server, index).at(-1);
  expect(last?.role).toBe('user');
  return toolResultBlocks(last);
}

/** The first tool_result for `toolUseId` in any request the server received, as JSON ('' if none). */
export function toolResultFor(server: ScriptedModelServer, toolUseId: string): string {
  for (const request of server.requests) {
    for (const message of messagesOf(request)) {
      const found = toolResultBlocks(message).find((block) => block.tool_use_id === toolUseId);
      if (found) return JSON.stringify(found);
    }
  }
  return '';
}

/** A tool_result's content as text. */
export function resultText(block: ToolResultJson | undefined): string {
  if (!block) return '';
  return typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
}

// ---------------------------------------------------------------------------------------------
// The snapshot query

export function snapshot(handle: WorkflowHandle, sinceSeq?: number): Promise<SessionSnapshot> {
  return handle.query(snapshotQuery, sinceSeq);
}

/** Poll the snapshot until `check` holds. */
export async function waitForSnapshot(
  handle: WorkflowHandle,
  check: (s: SessionSnapshot) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<SessionSnapshot> {
  return waitFor(
    async () => {
      const s = await snapshot(handle);
      return check(s) ? s : undefined;
    },
    timeoutMs,
    what,
  );
}

// ---------------------------------------------------------------------------------------------
// Processes a job's tools start

/** True while `pid` is a live process (a zombie counts as gone: it runs nothing). */
export function isAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Live (not zombie) processes, other than this one, whose command line contains `marker`. */
export function liveProcesses(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue; // the process ended while we looked
    }
    if (cmdline.includes(marker) && isAlive(Number(entry))) pids.push(Number(entry));
  }
  return pids;
}

/**
 * A job's (or batch's) Terminal: what its workflow returned when it completed, or what its failure
 * carries when it did not (any reason but `completed` ends the workflow failed, with its Terminal).
 */
export { terminalOf } from '../../src/client/job-terminal';
