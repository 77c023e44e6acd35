import { execFileSync } from 'node:child_process';
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
import { terminalOf } from './support/jobs';

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
      const terminal = await terminalOf(handle);
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

  test('the system prompt describes the environment, includes CLAUDE.md and the appended text', async () => {
    const server = await ScriptedModelServer.start({ replies: [{ content: [{ type: 'text', text: 'Noted.' }] }] });
    const taskQueue = uniqueTaskQueue('system-prompt');
    const { worker, done } = await startWorker(env, server, { taskQueue, storeDir: tempDir('store') });
    try {
      const workspace = makeWorkspace({ 'CLAUDE.md': 'Always run npm test before finishing.\n', 'a.txt': 'a\n' });
      execFileSync('git', ['init', '-q', '-b', 'feature/login'], { cwd: workspace });
      const terminal = (await env.client.workflow.execute('agentSession', {
        taskQueue,
        workflowId: `system-prompt-${Date.now()}`,
        args: [sessionInput(workspace, { appendSystemPrompt: 'Answer in one sentence.' })],
      })) as Terminal;
      expect(terminal.reason).toBe('completed');
      const body = server.requests[0]?.body as {
        system: Array<{ text: string; cache_control?: unknown }>;
        tools: Array<{ cache_control?: unknown }>;
      };
      const system = body.system.map((block) => block.text).join('\n');
      expect(system).toContain(`Workspace: ${workspace}`);
      expect(system).toContain(`Platform: ${process.platform}`);
      expect(system).toMatch(/Date: \d{4}-\d{2}-\d{2}/);
      expect(system).toContain('Git branch: feature/login');
      expect(system).toContain('?? CLAUDE.md');
      expect(system).toContain('Always run npm test before finishing.');
      expect(system.trimEnd().endsWith('Answer in one sentence.')).toBe(true);
      // Prompt-caching breakpoints on the system prompt and the tools.
      expect(body.system.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
      expect(body.tools.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    } finally {
      worker.shutdown();
      await done;
      await server.close();
    }
  });
});
