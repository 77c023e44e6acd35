import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadScriptedSession } from '../src/model-server';
import { findTemporalBinary } from '../src/client/temporal-binary';
import type { SessionSnapshot } from '../src/shared/session';
import { snapshotQuery } from '../src/workflows/definitions';
import { ScriptedModelServer, tempDir, waitFor } from './support/harness';
import { runCli as cli } from './support/cli';
import type { CliResult } from './support/cli';
import { exitedWithOutput, killEmbeddedWorker } from './support/cli';
import { TS_NODE_ARGS } from './support/ts-run';
import { terminalOf } from './support/jobs';

const root = path.join(__dirname, '..');
const cliArgs = [...TS_NODE_ARGS, path.join(root, 'src/client/cli.ts')];

/** `temporal` itself, as an outside client of the embedded server. */
function temporal(args: string[], address: string): string {
  return execFileSync(findTemporalBinary(), [...args, '--address', address], { encoding: 'utf8' });
}

/** The `ls` line of one job. */
function lineOf(stdout: string, id: string): string {
  const line = stdout.split('\n').find((l) => l.startsWith(`${id} `));
  if (!line) throw new Error(`no line for ${id} in:\n${stdout}`);
  return line;
}

const listed = (stdout: string) =>
  stdout
    .split('\n')
    .slice(1)
    .filter((line) => /^\S/.test(line))
    .map((line) => line.split(/\s+/)[0]);

/** Every step is a real CLI process; on a busy machine each takes seconds. */
const SLOW_MS = 600_000;

/** A workflow's status as `temporal workflow describe` shows it (the UI's Status column). */
function statusOf(id: string, address: string): string {
  const described = JSON.parse(
    temporal(['workflow', 'describe', '--workflow-id', id, '--output', 'json'], address),
  ) as { workflowExecutionInfo: { status: string } };
  return described.workflowExecutionInfo.status.replace('WORKFLOW_EXECUTION_STATUS_', '');
}

/** The ids `temporal workflow list --query` finds, sorted. */
function foundBy(query: string, address: string): string[] {
  const found = JSON.parse(temporal(['workflow', 'list', '--query', query, '--output', 'json'], address)) as Array<{
    execution: { workflowId: string };
  }>;
  return found.map((w) => w.execution.workflowId).sort();
}

const decode = (payload: { data?: string }) => JSON.parse(Buffer.from(payload.data ?? '', 'base64').toString('utf8'));

/** Ports free on 127.0.0.1 right now. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve) => {
          const server = net.createServer();
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

describe('true outcomes: ls, search attributes, summaries and details on the embedded server', () => {
  const home = tempDir('outcomes-home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;
  let workspace: string;
  let address: string;
  let connection: Connection;
  let client: Client;

  beforeAll(async () => {
    const recorded = loadScriptedSession(path.join(root, 'examples/recorded/check-login.json'));
    server = await ScriptedModelServer.start({ ...recorded, chunkDelayMs: 0 });
    env = { ...process.env, DURABLE_AGENT_HOME: home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url };
    delete env.TEMPORAL_ADDRESS;
    delete env.CI;
    workspace = tempDir('outcomes-ws');
    fs.cpSync(path.join(root, 'examples/login-demo'), workspace, { recursive: true });
    // Ports of its own, as a server that ran here before would have left them: test files run side
    // by side, and another file's embedded server takes 7233 the moment this one's `stop` frees it.
    const [port, uiPort] = await freePorts(2);
    fs.writeFileSync(path.join(home, 'embedded-ports.json'), JSON.stringify({ port, uiPort }));
  });

  afterAll(async () => {
    await connection?.close();
    await cli(['stop'], env);
    await server?.close();
  }, SLOW_MS);

  const parkedJob = async (id: string) => {
    const started = await cli(
      ['run', 'Check the login module', '--cwd', workspace, '--job-id', id, '--permission-mode', 'default'].concat([
        '--ask',
        'Grep',
        '--detach',
      ]),
      env,
    );
    expect(started.code).toBe(0);
    const handle = client.workflow.getHandle(id);
    return waitFor(
      async () => {
        const snapshot: SessionSnapshot = await handle.query(snapshotQuery, 0);
        return snapshot.pendingApprovals.length > 0 ? snapshot : undefined;
      },
      60_000,
      `${id} to park`,
    );
  };

  test(
    'jobs that end completed, max_turns, aborted and terminated show so in ls, and filter by it',
    async () => {
      const completed = await cli(
        ['run', 'Check the login module', '--cwd', workspace, '--job-id', 'out-completed'],
        env,
      );
      expect(completed.code).toBe(0);
      const record = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as { port: number };
      address = `127.0.0.1:${record.port}`;
      connection = await Connection.connect({ address });
      client = new Client({ connection });

      const max = await cli(
        ['run', 'Check the login module', '--cwd', workspace, '--job-id', 'out-max', '--max-turns', '1'],
        env,
      );
      // As claude -p: any ending but completed exits 1.
      expect(max.code).toBe(1);
      const budget = await cli(
        [
          'run',
          'Check the login module',
          '--cwd',
          workspace,
          '--job-id',
          'out-budget',
          '--max-budget-usd',
          '0.0001',
        ].concat(['--exit-status', 'detailed']),
        env,
      );
      expect(budget.code).toBe(4);
      expect(budget.stderr).toContain('Terminal: budget_exhausted after 1 turn');

      // Temporal's own status (the UI's Status column): only the job that completed is COMPLETED.
      expect(statusOf('out-completed', address)).toBe('COMPLETED');
      expect(statusOf('out-max', address)).toBe('FAILED');
      expect(statusOf('out-budget', address)).toBe('FAILED');
      // `result` reads the Terminal the failure carries, and exits as before.
      const maxResult = await cli(['result', 'out-max', '--exit-status', 'detailed'], env);
      expect(maxResult.code).toBe(2);
      expect(maxResult.stderr).toContain('Terminal: max_turns after 1 turn');
      const budgetResult = await cli(['result', 'out-budget', '--json', '--exit-status', 'detailed'], env);
      expect(budgetResult.code).toBe(4);
      expect(JSON.parse(budgetResult.stdout)).toMatchObject({ terminal: { reason: 'budget_exhausted', turnCount: 1 } });

      // An older client's start carries no search attributes: ls reads the outcome from its Terminal.
      const old = await client.workflow.start('agentSession', {
        workflowId: 'out-old',
        taskQueue: 'durable-agent',
        args: [{ prompt: 'Check the login module', workspace, model: 'claude-sonnet-5-5', maxTurns: 1 }],
      });
      expect(await terminalOf(old)).toMatchObject({ reason: 'max_turns' });

      const parked = await parkedJob('out-parked');
      expect(parked.pendingApprovals[0]).toMatchObject({ toolName: 'Grep' });
      await parkedJob('out-term');

      // The UI's current details of a parked job: its turn, its phase and what it waits for.
      const metadata = (await client.workflow.getHandle('out-parked').query('__temporal_workflow_metadata')) as {
        currentDetails?: string;
      };
      expect(metadata.currentDetails).toBe(
        '**turn 1** · waiting for approval\n- Grep {"pattern":"login|auth","path":"src","output_mode":"files_with_matches"}',
      );

      const live = await cli(['ls'], env);
      expect(live.stderr).toBe('');
      expect(live.stdout.split('\n')[0]).toMatch(/^JOB\s+OUTCOME\s+TURNS\s+COST\s+MODEL\s+AGE$/);
      expect(lineOf(live.stdout, 'out-parked')).toMatch(
        /^out-parked\s+running\s+1\s+\S+\s+claude-sonnet-5-5\s+\d+[smh]\s+waiting_for_approval$/,
      );
      expect(live.stdout).toContain('    waiting for approval: Grep {"pattern":"login|auth"');

      const runningOnly = await cli(['ls', '--outcome', 'running'], env);
      expect(listed(runningOnly.stdout).sort()).toEqual(['out-parked', 'out-term']);
      // Parked, they show as waiting for approval to any client of the visibility (the UI's list too).
      await waitFor(
        async () =>
          foundBy(`DurableAgentOutcome = 'waiting_for_approval'`, address).join() === 'out-parked,out-term'
            ? true
            : undefined,
        30_000,
        'the parked jobs to show as waiting_for_approval',
      );
      const waiting = await cli(['ls', '--outcome', 'waiting_for_approval'], env);
      expect(listed(waiting.stdout).sort()).toEqual(['out-parked', 'out-term']);

      // With no worker answering, ls says so instead of a stack trace.
      killEmbeddedWorker(home);
      const noWorker = await cli(['ls'], { ...env, TEMPORAL_ADDRESS: address });
      expect(noWorker.code).toBe(0);
      expect(noWorker.stderr).toBe('');
      expect(lineOf(noWorker.stdout, 'out-parked')).toContain('running');
      expect(lineOf(noWorker.stdout, 'out-parked')).toContain('(no worker answered; approvals unknown)');

      // Any command without TEMPORAL_ADDRESS brings the embedded worker back.
      expect((await cli(['abort', 'out-parked', '--reason', 'not now'], env)).code).toBe(0);
      expect((await cli(['result', 'out-parked', '--json', '--exit-status', 'detailed'], env)).code).toBe(3);
      temporal(['workflow', 'terminate', '--workflow-id', 'out-term', '--reason', 'test'], address);

      const all = await cli(['ls'], env);
      expect(all.stderr).toBe('');
      expect(lineOf(all.stdout, 'out-completed')).toMatch(
        /^out-completed\s+completed\s+3\s+\S+\s+claude-sonnet-5-5\s+\d+[smh]$/,
      );
      expect(lineOf(all.stdout, 'out-max')).toMatch(/^out-max\s+max_turns\s+1\s/);
      expect(lineOf(all.stdout, 'out-budget')).toMatch(/^out-budget\s+budget_exhausted\s+1\s/);
      expect(lineOf(all.stdout, 'out-old')).toMatch(/^out-old\s+max_turns\s+1\s+\S+\s+claude-sonnet-5-5\s/);
      expect(lineOf(all.stdout, 'out-parked')).toMatch(/^out-parked\s+aborted_tools\s+1\s/);
      expect(lineOf(all.stdout, 'out-term')).toMatch(/^out-term\s+terminated\s/);
      expect(all.stdout).not.toMatch(/COMPLETED|RUNNING|TERMINATED/);

      // Jobs started with the attributes are found by outcome; the old one only by a plain ls.
      expect(listed((await cli(['ls', '--outcome', 'max_turns'], env)).stdout)).toEqual(['out-max']);
      expect(listed((await cli(['ls', '--outcome', 'budget_exhausted'], env)).stdout)).toEqual(['out-budget']);
      // Failed with a Terminal is not failed from outside, the older client's job included.
      expect((await cli(['ls', '--outcome', 'workflow_failed'], env)).stdout).toContain('no workflow_failed jobs');
      expect(listed((await cli(['ls', '--outcome', 'aborted'], env)).stdout)).toEqual(['out-parked']);
      expect(listed((await cli(['ls', '--outcome', 'outside'], env)).stdout)).toEqual(['out-term']);
      expect(listed((await cli(['ls', '--outcome', 'terminated'], env)).stdout)).toEqual(['out-term']);
      expect((await cli(['ls', '--outcome', 'failed'], env)).stdout).toContain('no failed jobs');
      expect(listed((await cli(['ls', '--outcome', 'completed'], env)).stdout)).toEqual(['out-completed']);
      expect((await cli(['ls', '--outcome', 'running'], env)).stdout).toContain('no running jobs');
      expect((await cli(['ls', '--outcome', 'waiting_for_approval'], env)).stdout).toContain(
        'no waiting_for_approval jobs',
      );

      const unknown = await cli(['ls', '--outcome', 'finished'], env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain(
        '"finished" is not an outcome. Use one of: running, waiting_for_approval, completed, max_turns,',
      );
      expect(unknown.stderr).toContain('or a group: failed');
      expect(unknown.stderr).not.toMatch(/\n\s+at /);
    },
    SLOW_MS,
  );

  test(
    'an outside client sees the search attributes, the activity summaries and the final details',
    async () => {
      const found = JSON.parse(
        temporal(['workflow', 'list', '--query', `DurableAgentOutcome = 'max_turns'`, '--output', 'json'], address),
      ) as Array<{ execution: { workflowId: string } }>;
      expect(found.map((w) => w.execution.workflowId)).toEqual(['out-max']);
      // The Status column: every job that did not complete is Failed, the older client's included.
      expect(foundBy(`WorkflowType = 'agentSession' AND ExecutionStatus = 'Failed'`, address)).toEqual([
        'out-budget',
        'out-max',
        'out-old',
        'out-parked',
      ]);
      expect(foundBy(`WorkflowType = 'agentSession' AND ExecutionStatus = 'Completed'`, address)).toEqual([
        'out-completed',
      ]);

      const described = await client.workflow.getHandle('out-completed').describe();
      const attributes = Object.fromEntries(described.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]));
      expect(attributes).toMatchObject({
        DurableAgentOutcome: 'completed',
        DurableAgentTurns: 3,
        DurableAgentModel: 'claude-sonnet-5-5',
        DurableAgentWorkspace: fs.realpathSync(workspace),
      });

      const history = JSON.parse(
        temporal(['workflow', 'show', '--workflow-id', 'out-completed', '--output', 'json'], address),
      ) as { events: Array<{ eventType: string; userMetadata?: { summary?: { data?: string } } }> };
      const summaries = history.events
        .filter((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')
        .map((e) => (e.userMetadata?.summary ? decode(e.userMetadata.summary) : undefined));
      expect(summaries).toEqual(
        expect.arrayContaining([
          'turn 1 · model claude-sonnet-5-5',
          'turn 1 · Grep login|auth in src',
          'turn 2 · Read src/auth/login.ts',
          'turn 3 · model claude-sonnet-5-5',
        ]),
      );
      expect(summaries.every((summary) => typeof summary === 'string' && summary.length > 0)).toBe(true);

      const metadata = (await client.workflow.getHandle('out-completed').query('__temporal_workflow_metadata')) as {
        currentDetails?: string;
      };
      expect(metadata.currentDetails).toBe('**completed** after 3 turns');
    },
    SLOW_MS,
  );

  test(
    'ls in a pipe that closes early prints nothing on stderr',
    async () => {
      const head = await new Promise<CliResult>((resolve) => {
        const child = spawn(
          'sh',
          ['-c', `"${process.execPath}" ${cliArgs.map((a) => `"${a}"`).join(' ')} ls | head -1`],
          {
            cwd: root,
            env,
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        void exitedWithOutput(child).then((code) => resolve({ code, stdout, stderr }));
      });
      expect(head.stderr).toBe('');
      expect(head.stdout).toMatch(/^JOB\s+OUTCOME/);

      // A reader gone before the first line is written: the write fails with EPIPE.
      const gone = await new Promise<CliResult>((resolve) => {
        const child = spawn(process.execPath, [...cliArgs, 'ls'], {
          cwd: root,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.stdout.destroy();
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        void exitedWithOutput(child).then((code) => resolve({ code, stdout: '', stderr }));
      });
      expect(gone.stderr).toBe('');
      expect(gone.code).toBe(0);
    },
    SLOW_MS,
  );

  test(
    'a parked job shows waiting_for_approval to an outside client, and running again once approved',
    async () => {
      await parkedJob('out-approved');
      await waitFor(
        async () =>
          foundBy(`WorkflowId = 'out-approved' AND DurableAgentOutcome = 'waiting_for_approval'`, address).length === 1
            ? true
            : undefined,
        30_000,
        'out-approved to show as waiting_for_approval',
      );
      expect(listed((await cli(['ls', '--outcome', 'waiting_for_approval'], env)).stdout)).toEqual(['out-approved']);
      expect(listed((await cli(['ls', '--outcome', 'running'], env)).stdout)).toEqual(['out-approved']);

      expect((await cli(['approve', 'out-approved'], env)).code).toBe(0);
      const result = await cli(['result', 'out-approved'], env);
      expect(result.code).toBe(0);
      expect(statusOf('out-approved', address)).toBe('COMPLETED');
      // The outcome went back to running once nothing was parked, then to the Terminal's reason.
      const history = JSON.parse(
        temporal(['workflow', 'show', '--workflow-id', 'out-approved', '--output', 'json'], address),
      ) as {
        events: Array<{
          upsertWorkflowSearchAttributesEventAttributes?: {
            searchAttributes?: { indexedFields?: Record<string, { data?: string }> };
          };
        }>;
      };
      const outcomes = history.events.flatMap((e) => {
        const field =
          e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.DurableAgentOutcome;
        return field ? [decode(field) as string] : [];
      });
      expect(outcomes).toEqual(['waiting_for_approval', 'running', 'completed']);
      await waitFor(
        async () =>
          foundBy(`WorkflowId = 'out-approved' AND DurableAgentOutcome = 'completed'`, address).length === 1
            ? true
            : undefined,
        30_000,
        'out-approved to show as completed',
      );
    },
    SLOW_MS,
  );

  test(
    'the embedded server keeps its ports across stop, and registers missing attributes on a server it reuses',
    async () => {
      const before = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as {
        port: number;
        uiPort: number;
      };
      // A server started by an older version: one attribute missing, and no note of them in the record.
      await connection.operatorService.removeSearchAttributes({
        namespace: 'default',
        searchAttributes: ['DurableAgentModel'],
      });
      const { searchAttributes: _, ...older } = JSON.parse(
        fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8'),
      );
      fs.writeFileSync(path.join(home, 'embedded-server.json'), JSON.stringify(older));
      expect((await cli(['ls'], env)).code).toBe(0);
      const listedAttributes = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      expect(Object.keys(listedAttributes.customAttributes ?? {})).toContain('DurableAgentModel');

      expect((await cli(['stop'], env)).code).toBe(0);
      const again = await cli(['ls', '--outcome', 'max_turns'], env);
      expect(again.stderr).toBe('');
      expect(listed(again.stdout)).toEqual(['out-max']);
      const after = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as {
        port: number;
        uiPort: number;
      };
      expect({ port: after.port, uiPort: after.uiPort }).toEqual({ port: before.port, uiPort: before.uiPort });
    },
    SLOW_MS,
  );
});
