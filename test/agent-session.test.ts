import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadScriptedSession } from '../src/model-server';
import type { Terminal } from '../src/shared/terminal';
import { snapshotQuery } from '../src/workflows/definitions';
import {
  ScriptedModelServer,
  makeWorkspace,
  sessionInput,
  startTemporal,
  startWorker,
  tempDir,
  uniqueTaskQueue,
} from './support/harness';

const demoRepo = {
  'src/auth/login.ts':
    'export async function login(email: string, password: string) {\n  return createSession(email);\n}\n',
  'src/api/routes.ts': 'export const routes = [];\n',
};

describe('agentSession', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  test("runs the seed's example: Grep, Read, answer — 3 turns, completed", async () => {
    const session = loadScriptedSession(path.join(__dirname, '..', 'examples', 'recorded', 'check-login.json'));
    const server = await ScriptedModelServer.start({ ...session, chunkDelayMs: 0 });
    const taskQueue = uniqueTaskQueue('demo');
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
    try {
      const workspace = makeWorkspace(demoRepo);
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `demo-${Date.now()}`,
        args: [sessionInput(workspace)],
      });
      const terminal = (await handle.result()) as Terminal;
      expect(terminal.reason).toBe('completed');
      expect(terminal.turnCount).toBe(3);
      expect(terminal.finalText).toContain('I checked the login module');
      expect(terminal.messageCount).toBe(6);
      expect(terminal.usage.output_tokens).toBe(96 + 71 + 188);

      expect(server.requests).toHaveLength(3);
      const second = server.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
      expect(second.messages).toHaveLength(3);
      const grepResult = JSON.stringify(second.messages[2]);
      expect(grepResult).toContain('toolu_demo_01');
      expect(grepResult).toContain('src/auth/login.ts');
      const third = server.requests[2]?.body as { messages: Array<{ role: string; content: unknown }> };
      expect(JSON.stringify(third.messages[4])).toContain('createSession(email)');

      const snapshot = await handle.query(snapshotQuery);
      expect(snapshot.phase).toBe('finished');
      expect(snapshot.events.filter((e) => e.kind === 'tool_call').map((e) => (e as { name: string }).name)).toEqual([
        'Grep',
        'Read',
      ]);
    } finally {
      worker.shutdown();
      await done;
      await server.close();
    }
  });
});
