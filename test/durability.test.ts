import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedSession } from '../src/model-server';
import type { Terminal } from '../src/shared/terminal';
import { snapshotQuery } from '../src/workflows/definitions';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  tempDir,
  uniqueTaskQueue,
  waitFor,
} from './support/harness';
import { terminalOf } from './support/jobs';

const FINAL_TEXT =
  'Done. config.yml now carries the edited marker after the version line, and the file reads back as expected. ' +
  'Nothing else in the workspace was changed; the Bash check printed the new contents, which confirms the edit.';

function script(slowTurns: Record<number, number> = {}, bashCommand = 'sleep 3 && cat config.yml'): ScriptedSession {
  return {
    name: 'durability',
    slowTurns,
    replies: [
      {
        content: [
          { type: 'text', text: 'Reading the config first.' },
          { type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: 'config.yml' } },
        ],
      },
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_edit_1',
            name: 'Edit',
            input: { file_path: 'config.yml', old_string: 'version: 1', new_string: 'version: 1\nedited: yes' },
          },
        ],
      },
      {
        content: [{ type: 'tool_use', id: 'toolu_bash_1', name: 'Bash', input: { command: bashCommand } }],
      },
      { content: [{ type: 'text', text: FINAL_TEXT }] },
    ],
  };
}

const files = { 'config.yml': 'name: demo\nversion: 1\n' };

/** The conversation as the model last saw it, with the workspace path made comparable. */
function lastConversation(server: ScriptedModelServer, workspace: string): string {
  const last = server.requests.at(-1)?.body as { messages: unknown[] };
  return JSON.stringify(last.messages).split(workspace).join('<workspace>');
}

describe('durability: a worker SIGKILLed mid-turn', () => {
  let env: TestWorkflowEnvironment;
  let address: string;
  let reference: string;

  beforeAll(async () => {
    env = await startTemporal();
    address = env.address;
    // The uninterrupted run every interrupted run must match.
    const server = await ScriptedModelServer.start(script());
    const taskQueue = uniqueTaskQueue('reference');
    const home = tempDir('home');
    const worker = await spawnWorkerProcess({ address, taskQueue, modelUrl: server.url, home });
    try {
      const workspace = makeWorkspace(files);
      const terminal = (await env.client.workflow.execute('agentSession', {
        taskQueue,
        workflowId: `reference-${Date.now()}`,
        args: [sessionInput(workspace)],
      })) as Terminal;
      expect(terminal.reason).toBe('completed');
      reference = lastConversation(server, workspace);
    } finally {
      await worker.kill('SIGTERM');
      await server.close();
    }
  });

  afterAll(async () => {
    await env?.teardown();
  });

  async function interruptedRun(options: {
    slowTurns?: Record<number, number>;
    bashCommand?: string;
    killWhen: (server: ScriptedModelServer, jobId: string) => Promise<void>;
  }) {
    const server = await ScriptedModelServer.start(script(options.slowTurns, options.bashCommand));
    const taskQueue = uniqueTaskQueue('kill');
    const home = tempDir('home');
    const workspace = makeWorkspace(files);
    const jobId = `kill-${Date.now()}`;
    let worker = await spawnWorkerProcess({ address, taskQueue, modelUrl: server.url, home });
    try {
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: jobId,
        args: [sessionInput(workspace)],
      });
      await options.killWhen(server, jobId);
      await worker.kill('SIGKILL');
      worker = await spawnWorkerProcess({ address, taskQueue, modelUrl: server.url, home });
      const terminal = await terminalOf(handle);
      const logs = worker.logs();
      return { terminal, server, workspace, conversation: lastConversation(server, workspace), logs };
    } finally {
      await worker.kill('SIGTERM');
      await server.close();
    }
  }

  test('killed while the model is streaming: the turn is redone, the transcript is unchanged', async () => {
    const run = await interruptedRun({
      slowTurns: { 3: 250 },
      killWhen: async (server) => {
        await server.waitForStreamStarted(3, 60_000);
      },
    });
    expect(run.terminal.reason).toBe('completed');
    expect(run.terminal.turnCount).toBe(4);
    expect(run.terminal.finalText).toBe(FINAL_TEXT);
    expect(run.conversation).toBe(reference);
    // The stream really was cut: turn 3 was asked for twice.
    expect(run.server.requests.filter((r) => r.turn === 3).length).toBeGreaterThanOrEqual(2);
    // The Edit that completed before the kill was applied once.
    expect(fs.readFileSync(path.join(run.workspace, 'config.yml'), 'utf8')).toBe(
      'name: demo\nversion: 1\nedited: yes\n',
    );
  });

  test('killed while a Bash tool runs: the job completes with the same transcript', async () => {
    const run = await interruptedRun({
      killWhen: async (_server, jobId) => {
        await waitFor(
          async () => {
            const snapshot = await env.client.workflow.getHandle(jobId).query(snapshotQuery);
            return snapshot.runningTools.some((tool) => tool.name === 'Bash') ? true : undefined;
          },
          60_000,
          'the Bash tool to start',
        );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      },
    });
    expect(run.terminal.reason).toBe('completed');
    expect(run.conversation).toBe(reference);
    expect(fs.readFileSync(path.join(run.workspace, 'config.yml'), 'utf8')).toBe(
      'name: demo\nversion: 1\nedited: yes\n',
    );
  });

  test('killed while a side-effecting Bash runs: the retry adopts its still-running command, which ran once, and answers with its real result', async () => {
    const waitForBash = async (_server: ScriptedModelServer, jobId: string) => {
      await waitFor(
        async () => {
          const snapshot = await env.client.workflow.getHandle(jobId).query(snapshotQuery);
          return snapshot.runningTools.some((tool) => tool.name === 'Bash') ? true : undefined;
        },
        60_000,
        'the Bash tool to start',
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    };
    const run = await interruptedRun({ bashCommand: 'echo run >> runs.log; sleep 3', killWhen: waitForBash });
    expect(run.terminal.reason).toBe('completed');
    // Ran once, started by the killed worker; the retry waited for it instead of running it again.
    expect(fs.readFileSync(path.join(run.workspace, 'runs.log'), 'utf8')).toBe('run\n');
    const last = run.server.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    const bashResult = JSON.stringify(last.messages.at(-1)?.content);
    // What the uninterrupted command answers; before adoption it was "interrupted ... may have partly run".
    // (Seen once in about 25 runs on Node 22: the group gone without an exit status by the time the
    // retry looked. The new worker's log says what it did to the dead worker's groups.)
    if (!bashResult.includes('"content":"(Bash completed with no output)"')) {
      throw new Error(`the retry did not adopt the command: ${bashResult}\nthe new worker's log:\n${run.logs}`);
    }
    expect(bashResult).toContain('"content":"(Bash completed with no output)"');
    expect(bashResult).not.toContain('is_error');
  });
});
