import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { follow } from '../src/client/jobs';
import type { Approver, JobHandle } from '../src/client/jobs';
import type { ScriptedSession } from '../src/model-server';
import type { PendingApproval } from '../src/shared/session';
import { approvalSignal } from '../src/workflows/definitions';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';
import { editCall } from './support/jobs';

const edit = (id: string, from: string, to: string) => editCall(id, 'app.txt', from, to);
const session: ScriptedSession = {
  replies: [
    { content: [{ type: 'tool_use', id: 'r1', name: 'Read', input: { file_path: 'app.txt' } }] },
    { content: [edit('e1', 'one', 'uno')] },
    { content: [edit('e2', 'two', 'dos')] },
    { content: [{ type: 'text', text: 'Both edits done.' }] },
  ],
};

describe('following a job that parks for approval', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  async function followJob(approver: Approver, alongside?: (handle: JobHandle) => Promise<void>) {
    const server = await ScriptedModelServer.start(session);
    const taskQueue = uniqueTaskQueue('follow');
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    try {
      const handle = (await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `follow-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`,
        args: [sessionInput(workspace, { permissions: { mode: 'default' } })],
      })) as unknown as JobHandle;
      const lines: string[] = [];
      const [terminal] = await Promise.all([
        follow(handle, { write: (line) => lines.push(line) }, { approver, pollMs: 100 }),
        alongside?.(handle),
      ]);
      return { terminal, lines, workspace };
    } finally {
      worker.shutdown();
      await done;
      await server.close();
    }
  }

  test('the terminal question answers the call; "always" covers the next one', async () => {
    const asked: PendingApproval[] = [];
    const run = await followJob(async (pending) => {
      asked.push(pending);
      return 'always';
    });
    expect(run.terminal.reason).toBe('completed');
    expect(asked.map((p) => p.toolUseId)).toEqual(['e1']);
    expect(fs.readFileSync(path.join(run.workspace, 'app.txt'), 'utf8')).toBe('uno dos\n');
    expect(run.lines.join('\n')).toContain('Edit needs approval');
  });

  test('a question is withdrawn when another shell answers first', async () => {
    const asked = new Set<string>();
    const withdrawn: string[] = [];
    const unanswered: Approver = (pending, signal) => {
      asked.add(pending.toolUseId);
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          withdrawn.push(pending.toolUseId);
          resolve('skip');
        }),
      );
    };
    // Another shell answers each call once the terminal has asked about it.
    const approveElsewhere = async (handle: JobHandle) => {
      for (const id of ['e1', 'e2']) {
        while (!asked.has(id)) await new Promise((resolve) => setTimeout(resolve, 50));
        await handle.signal(approvalSignal, { toolUseId: id, decision: 'allow' });
      }
    };
    const run = await followJob(unanswered, approveElsewhere);
    expect(run.terminal.reason).toBe('completed');
    expect(withdrawn).toEqual(['e1', 'e2']);
    expect(fs.readFileSync(path.join(run.workspace, 'app.txt'), 'utf8')).toBe('uno dos\n');
  });
});
