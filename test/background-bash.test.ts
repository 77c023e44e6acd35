/**
 * Background commands as a user meets them: the real CLI and worker processes on a dev server of
 * the test's own, the scripted model running Bash with `run_in_background`. The command survives a
 * SIGKILL of its worker (the next one adopts it), its line is written once, its ending reaches the
 * model as a notification, and nothing of it runs on after the job.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedReply } from '../src/model-server';
import { backgroundTaskId } from '../src/workflows/background-tasks';
import { DevServer } from './support/chaos';
import { lastUserText, processesWith } from './support/job-observation';
import { runCli } from './support/cli';
import { makeWorkspace, ScriptedModelServer, spawnWorkerProcess, tempDir, waitFor } from './support/harness';
import type { WorkerProcess } from './support/harness';

const say = (text: string): ScriptedReply => ({ content: [{ type: 'text', text }] });
const bash = (id: string, command: string, background = true): ScriptedReply['content'][number] => ({
  type: 'tool_use',
  id,
  name: 'Bash',
  input: { command, ...(background ? { run_in_background: true } : {}) },
});

describe('Bash run_in_background', () => {
  const dir = tempDir('background');
  const home = tempDir('background-home');
  const tag = `bgtest${process.pid}`;
  let server: DevServer;
  let worker: WorkerProcess | undefined;
  const models: ScriptedModelServer[] = [];
  const env = (model: ScriptedModelServer): NodeJS.ProcessEnv => {
    const vars: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      TEMPORAL_ADDRESS: server.address,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: model.url,
    };
    delete vars.ANTHROPIC_MODEL;
    return vars;
  };
  const startWorker = async (model: ScriptedModelServer) => {
    worker = await spawnWorkerProcess({
      address: server.address,
      taskQueue: 'durable-agent',
      modelUrl: model.url,
      home,
    });
  };
  const model = async (replies: ScriptedReply[]) => {
    const started = await ScriptedModelServer.start({ replies, chunkDelayMs: 0 });
    models.push(started);
    return started;
  };
  /** The last user message of each request the model got. */
  const userTexts = (llm: ScriptedModelServer) => llm.requests.map((request) => lastUserText(request));
  const status = async (id: string, llm: ScriptedModelServer) =>
    JSON.parse((await runCli(['status', id, '--json'], env(llm))).stdout);

  beforeAll(async () => {
    server = await DevServer.start(dir, { namespaces: ['other'] });
  }, 90_000);
  afterEach(async () => {
    await worker?.kill('SIGKILL');
    worker = undefined;
  });
  afterAll(async () => {
    await server?.kill();
    for (const each of models) await each.close();
  });

  test('a background command survives its worker SIGKILLed, writes once, and its ending reaches the model', async () => {
    // It runs until the test lets it end (a file `go`): no window of seconds for a slow machine to miss.
    const command = `echo started; until [ -f go ]; do sleep 0.2; done; echo done >> marks; echo finished # ${tag}-a`;
    const llm = await model([{ content: [bash('toolu_bg1', command)] }, say('Started it.'), say('It is done.')]);
    await startWorker(llm);
    const workspace = makeWorkspace({ 'README.md': 'hello\n' });
    const run = await runCli(
      [
        'run',
        'Run the slow job in the background',
        '--cwd',
        workspace,
        '--job-id',
        'bg-kill',
        '--detach',
        '--permission-mode',
        'bypassPermissions',
      ],
      env(llm),
    );
    expect(run.code).toBe(0);
    await waitFor(
      async () => ((await status('bg-kill', llm)).phase === 'waiting_for_background' ? true : undefined),
      60_000,
      'waiting',
    );
    // Found by what it says, not by its place: a model call retried on a loaded machine comes twice.
    const answer = userTexts(llm).find((text) => text.startsWith('Command running in background')) ?? '';
    const match =
      /^Command running in background with ID: (b[0-9a-z]{8})\. Output is being written to: (\S+)\. You will be notified when it completes\./.exec(
        answer,
      );
    expect(match).not.toBeNull();
    const [, taskId, outputFile] = match!;
    expect(outputFile).toBe(path.join(workspace, `.durable-agent/tool-results/bash-${taskId}.output`));
    // Readable while it runs.
    await waitFor(
      async () => (fs.readFileSync(outputFile!, 'utf8').includes('started') ? true : undefined),
      15_000,
      'output',
    );
    expect((await status('bg-kill', llm)).backgroundTasks).toEqual([
      expect.objectContaining({ taskId, status: 'running', outputFile }),
    ]);

    await worker!.kill('SIGKILL');
    worker = undefined;
    expect(processesWith(`${tag}-a`).length).toBeGreaterThan(0);
    // A worker of another namespace on this host, with the same store, looks after the groups dead
    // workers left: it must not take this job, which is not in its namespace, for an ended one.
    const neighbour = await spawnWorkerProcess({
      address: server.address,
      taskQueue: 'durable-agent',
      modelUrl: llm.url,
      home,
      extraEnv: { TEMPORAL_NAMESPACE: 'other' },
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 7_000)); // its first look, and one more
      expect(neighbour.logs()).not.toContain('killed process group');
      expect(processesWith(`${tag}-a`).length).toBeGreaterThan(0);
    } finally {
      await neighbour.kill('SIGKILL');
    }
    await startWorker(llm);
    fs.writeFileSync(path.join(workspace, 'go'), '');

    const result = await runCli(['result', 'bg-kill'], env(llm));
    expect(result.stdout).toContain('It is done.');
    expect(fs.readFileSync(path.join(workspace, 'marks'), 'utf8')).toBe('done\n');
    const notice = userTexts(llm).find((text) => text.includes(`<task-id>${taskId}</task-id>`)) ?? '';
    expect(notice).toContain(`<task-id>${taskId}</task-id>`);
    expect(notice).toContain('<tool-use-id>toolu_bg1</tool-use-id>');
    expect(notice).toContain('<status>completed</status>');
    expect(notice).toContain(`<summary>Background command "${command}" completed (exit code 0)</summary>`);
    expect(fs.readFileSync(outputFile!, 'utf8')).toBe('started\nfinished\n');
    expect(processesWith(`${tag}-a`)).toEqual([]);
  }, 180_000);

  test('TaskStop stops one; abort stops the rest before the job ends', async () => {
    const llm = await model([
      { content: [bash('toolu_s1', `sleep 300 # ${tag}-b`), bash('toolu_s2', `sleep 300 # ${tag}-c`)] },
      {
        content: [
          { type: 'tool_use', id: 'toolu_nostop', name: 'TaskStop', input: { task_id: 'bnosuchid' } },
          { type: 'tool_use', id: 'toolu_stop', name: 'TaskStop', input: { task_id: backgroundTaskId('toolu_s1') } },
        ],
      },
      say('One left.'),
    ]);
    await startWorker(llm);
    const workspace = makeWorkspace({ 'README.md': 'hello\n' });
    expect(
      (
        await runCli(
          [
            'run',
            'Start two',
            '--cwd',
            workspace,
            '--job-id',
            'bg-stop',
            '--detach',
            '--permission-mode',
            'bypassPermissions',
          ],
          env(llm),
        )
      ).code,
    ).toBe(0);
    await waitFor(
      async () => ((await status('bg-stop', llm)).phase === 'waiting_for_background' ? true : undefined),
      60_000,
      'waiting',
    );
    const answers = userTexts(llm).find((text) => text.includes('No task found')) ?? '';
    expect(answers).toContain('<tool_use_error>No task found with ID: bnosuchid</tool_use_error>');
    expect(answers).toContain(`Successfully stopped task: ${backgroundTaskId('toolu_s1')} (sleep 300 # ${tag}-b)`);
    expect(processesWith(`${tag}-b`)).toEqual([]);
    expect(processesWith(`${tag}-c`).length).toBeGreaterThan(0);
    const during = await status('bg-stop', llm);
    expect(during.backgroundTasks.map((task: { status: string }) => task.status)).toEqual(['stopped', 'running']);

    expect((await runCli(['abort', 'bg-stop'], env(llm))).code).toBe(0);
    await runCli(['result', 'bg-stop'], env(llm));
    const ended = await status('bg-stop', llm);
    expect(ended.terminal.reason).toBe('aborted_tools');
    expect(ended.terminal.detail).toContain('while waiting for background tasks');
    expect(ended.backgroundTasks.map((task: { status: string }) => task.status)).toEqual(['stopped', 'stopped']);
    expect(processesWith(`${tag}-b`)).toEqual([]);
    expect(processesWith(`${tag}-c`)).toEqual([]);
  }, 180_000);
});
