import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { objectPath } from '../src/activities/store/gc';
import { FileContentStore } from '../src/activities/store/content-store';
import { TranscriptStore } from '../src/activities/store/transcript-store';
import { workspaceHome } from '../src/activities/store/workspace-home';
import { freePort } from '../src/client/free-port';
import { prune } from '../src/client/prune';
import type { ContentRef } from '../src/shared/transcript';
import { approvalSignal, storeRootsQuery } from '../src/workflows/definitions';
import { quietBundlerLogger } from '../src/worker/create-worker';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import { runCli } from './support/cli';
import { editCall, readCall, textReply, waitForSnapshot, terminalOf } from './support/jobs';

const root = path.join(__dirname, '..');
const DAY = 24 * 60 * 60_000;

/** The real CLI, from source, as `durable-agent` runs it. */
const cli = runCli;

/** The segments of a transcript, head first, read from the files themselves. */
function chainOf(storeRoot: string, head: ContentRef | null): string[] {
  const chain: string[] = [];
  for (let ref = head; ref !== null;) {
    const hex = ref.slice('sha256:'.length);
    chain.push(hex);
    const prev = (JSON.parse(fs.readFileSync(objectPath(storeRoot, hex), 'utf8')) as { prev?: unknown }).prev;
    ref = typeof prev === 'string' ? prev : null;
  }
  return chain;
}

const stored = (storeRoot: string, hex: string) => fs.existsSync(objectPath(storeRoot, hex));

function objectCount(storeRoot: string): number {
  const objects = path.join(storeRoot, 'objects');
  return fs.readdirSync(objects).reduce((n, dir) => n + fs.readdirSync(path.join(objects, dir)).length, 0);
}

/**
 * Read app.txt, edit it, answer. Both jobs get the same prompt and replies, so their transcripts
 * share their first segments; the open one parks on the Edit (default mode asks for approval).
 */
const script = {
  name: 'prune',
  replies: [
    { content: [readCall('r1', 'app.txt')] },
    { content: [editCall('e1', 'app.txt', 'one', 'uno')] },
    textReply('Edited app.txt.'),
  ],
};

describe('durable-agent prune against a real Temporal server', () => {
  let env: TestWorkflowEnvironment;
  let server: ScriptedModelServer;
  const home = tempDir('prune-home');
  const storeRoot = path.join(home, 'store');
  let cliEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = await startTemporal();
    server = await ScriptedModelServer.start({ ...script, chunkDelayMs: 0 });
    cliEnv = { ...process.env, TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: 'default', DURABLE_AGENT_HOME: home };
  });
  afterAll(async () => {
    await server?.close();
    await env?.teardown();
  });

  test('bad input and an unreachable server are refused with a clear message', async () => {
    const nonsense = await cli(['prune', '--older-than', 'soon'], cliEnv);
    expect(nonsense.code).toBe(1);
    expect(nonsense.stderr).toContain(
      'Use an age: a whole number followed by m (minutes), h (hours) or d (days), e.g. 30m, 12h or 7d.',
    );
    const nobody = await cli(['prune', '--older-than', '7d'], {
      ...cliEnv,
      TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
    });
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('prune refused, nothing was deleted: Temporal at 127.0.0.1:');
    expect(nobody.stderr).toContain('cannot be reached');
    expect(nobody.stderr).not.toMatch(/\n\s+at /);
  });

  test("a closed job's own objects and journal go; the open job sharing its prefix finishes intact", async () => {
    const taskQueue = uniqueTaskQueue('prune');
    let running = await startWorker(env, server, { taskQueue, storeDir: storeRoot });
    const closedWs = makeWorkspace({ 'app.txt': 'one two\n' });
    const openWs = makeWorkspace({ 'app.txt': 'one two\n' });
    try {
      const closed = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `prune-closed-${Date.now()}`,
        args: [sessionInput(closedWs)],
      });
      const closedTerminal = await terminalOf(closed);
      expect(closedTerminal.reason).toBe('completed');
      const open = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `prune-open-${Date.now()}`,
        args: [sessionInput(openWs, { permissions: { mode: 'default' } })],
      });
      await waitForSnapshot(open, (s) => s.pendingApprovals.length === 1, 'the Edit to park');
      // Visibility is eventually consistent: prune lists jobs through it.
      await waitFor(async () => {
        const listed = [];
        for await (const job of env.client.workflow.list({ query: `ExecutionStatus = 'Running'` })) listed.push(job);
        return listed.length === 1 && listed[0]?.workflowId === open.workflowId ? true : undefined;
      });

      const roots = await open.query(storeRootsQuery);
      const openHeads = roots.filter((ref) => chainOf(storeRoot, ref).length > 1);
      const openChain = new Set(openHeads.flatMap((head) => chainOf(storeRoot, head)));
      const closedChain = chainOf(storeRoot, closedTerminal.transcriptHead);
      const shared = closedChain.filter((hex) => openChain.has(hex));
      const closedOnly = closedChain.filter((hex) => !openChain.has(hex));
      expect(shared.length).toBeGreaterThanOrEqual(2);
      expect(closedOnly.length).toBeGreaterThanOrEqual(1);
      // The journals live in the data directory, one folder per workspace.
      const closedJournal = path.join(await workspaceHome(storeRoot, closedWs), 'journal');
      const openJournal = path.join(await workspaceHome(storeRoot, openWs), 'journal');
      expect(fs.readdirSync(closedJournal)).toHaveLength(1);

      // Everything was written moments ago, so a real run of the CLI finds nothing old enough.
      const before = objectCount(storeRoot);
      const dry = await cli(['prune', '--older-than', '1d', '--dry-run'], cliEnv);
      expect(dry.stderr).toBe('');
      expect(dry.stdout).toContain(
        `dry run: nothing is deleted.\n${env.address} (namespace default): 1 open job and 1 job run closed in the last 1d`,
      );
      expect(dry.stdout).toContain('would remove 0 objects (0 B)');
      expect(dry.code).toBe(0);
      expect(objectCount(storeRoot)).toBe(before);

      // Two days from now, the closed job ended more than a day ago.
      const lines: string[] = [];
      const report = await prune(
        { olderThanMs: DAY, dryRun: false, now: new Date(Date.now() + 2 * DAY), env: cliEnv },
        { write: (line) => lines.push(line) },
      );
      expect(lines[0]).toBe(
        `${env.address} (namespace default): 1 open job and 0 job runs closed in the last 1d keep their content.`,
      );
      expect(lines.join('\n')).toContain(`store ${storeRoot}: removed ${report.store.removed.count} objects`);
      expect(report.openJobs).toBe(1);
      expect(report.store.removed.count).toBeGreaterThanOrEqual(closedOnly.length + 1);
      for (const hex of closedOnly) expect(stored(storeRoot, hex)).toBe(false);
      for (const hex of [...shared, ...openChain]) expect(stored(storeRoot, hex)).toBe(true);
      for (const ref of roots) expect(stored(storeRoot, ref.slice('sha256:'.length))).toBe(true);
      expect(fs.existsSync(closedJournal) ? fs.readdirSync(closedJournal) : []).toEqual([]);
      // The open job's only call so far, a Read, was not journaled (test/prune-gc.test.ts checks that
      // an open job's entries stay).
      expect(fs.existsSync(openJournal)).toBe(false);
      // The closed job's Edit.
      expect(report.journal.removed.count).toBeGreaterThanOrEqual(1);

      // A fresh worker has nothing cached: the rest of the open job comes from the files left.
      running.worker.shutdown();
      await running.done;
      running = await startWorker(env, server, { taskQueue, storeDir: storeRoot });
      await open.signal(approvalSignal, { decision: 'allow' });
      const terminal = await terminalOf(open);
      expect(terminal).toMatchObject({ reason: 'completed', turnCount: 3, finalText: 'Edited app.txt.' });
      expect(fs.readFileSync(path.join(openWs, 'app.txt'), 'utf8')).toBe('uno two\n');
      const transcript = await new TranscriptStore(new FileContentStore(storeRoot)).load({
        head: terminal.transcriptHead,
        messageCount: terminal.messageCount,
      });
      expect(transcript).toHaveLength(6);
      expect(JSON.stringify(transcript)).toContain('one two');
      expect(JSON.stringify(transcript.at(-1))).toContain('Edited app.txt.');
    } finally {
      running.worker.shutdown();
      await running.done;
    }
  });

  test('an open job no worker answers for stops prune, which says which job and what to do', async () => {
    const taskQueue = uniqueTaskQueue('prune-unserved');
    const job = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `prune-unserved-${Date.now()}`,
      args: [sessionInput(makeWorkspace({}))],
    });
    try {
      await waitForRunning(job.workflowId);
      const before = fs.existsSync(storeRoot) ? objectCount(storeRoot) : 0;
      await expect(
        prune(
          { olderThanMs: DAY, dryRun: false, now: new Date(Date.now() + 2 * DAY), env: cliEnv, queryTimeoutMs: 1_000 },
          { write: () => undefined },
        ),
      ).rejects.toThrow(
        `prune refused, nothing was deleted: not every open job said what it still needs.\n  - job ${job.workflowId} ` +
          `did not answer within 1 s: no worker seems to poll its task queue ${taskQueue}. Start one ` +
          `(\`durable-agent worker --task-queue ${taskQueue}\`)`,
      );
      expect(fs.existsSync(storeRoot) ? objectCount(storeRoot) : 0).toBe(before);
    } finally {
      await job.terminate('test over');
    }
  });

  test('a job on a worker older than the storeRoots query stops prune', async () => {
    // An agentSession as workers before this query ran it: it answers `snapshot`, nothing else.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-old-workflow-'));
    fs.writeFileSync(
      path.join(dir, 'workflows.js'),
      "const { condition, defineQuery, setHandler } = require('@temporalio/workflow');\n" +
        'exports.agentSession = async function agentSession() {\n' +
        "  setHandler(defineQuery('snapshot'), () => ({ phase: 'calling_model' }));\n" +
        '  await condition(() => false);\n' +
        '};\n',
    );
    const bundle = await bundleWorkflowCode({
      workflowsPath: path.join(dir, 'workflows.js'),
      logger: quietBundlerLogger,
      webpackConfigHook: (config) => ({
        ...config,
        resolve: { ...config.resolve, modules: [path.join(root, 'node_modules'), 'node_modules'] },
      }),
    });
    const taskQueue = uniqueTaskQueue('prune-old');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: bundle,
    });
    const done = worker.run();
    const job = await env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `prune-old-${Date.now()}`,
      args: [sessionInput(makeWorkspace({}))],
    });
    try {
      await waitForRunning(job.workflowId);
      const refused = await cli(['prune', '--older-than', '7d'], cliEnv);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `durable-agent: prune refused, nothing was deleted: not every open job said what it still needs.\n` +
          `  - job ${job.workflowId} runs on a worker older than prune (it does not answer the storeRoots query). ` +
          `Restart the workers of task queue ${taskQueue} on this version`,
      );
      expect(refused.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await job.terminate('test over');
      worker.shutdown();
      await done;
    }
  });

  async function waitForRunning(workflowId: string): Promise<void> {
    await waitFor(async () => {
      for await (const job of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
        if (job.status.name === 'RUNNING') return true;
      }
      return undefined;
    });
  }
});
