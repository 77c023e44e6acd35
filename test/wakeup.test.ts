/**
 * ScheduleWakeup as a user meets it: the real CLI and a worker process on a dev server of the
 * test's own (a file database, so it can be killed and started again), the scripted model asking
 * for a wake-up. A sleeping job holds no activity; it wakes on time after its worker and the server
 * were both killed meanwhile; `wake`, `send` and `abort` reach it while it sleeps.
 */
import type { ScriptedReply } from '../src/model-server';
import { execFileSync } from 'node:child_process';
import { findTemporalBinary } from '../src/client/temporal-binary';
import { DevServer } from './support/chaos';
import { describeExecution, lastUserText } from './support/job-observation';
import { runCli } from './support/cli';
import { makeWorkspace, ScriptedModelServer, spawnWorkerProcess, tempDir, waitFor } from './support/harness';
import type { WorkerProcess } from './support/harness';

const wakeCall = (delaySeconds: number, prompt: string, id = 'toolu_wake1'): ScriptedReply => ({
  content: [
    {
      type: 'tool_use',
      id,
      name: 'ScheduleWakeup',
      input: { delaySeconds, reason: 'the CI run takes a while', prompt, noop: false },
    },
  ],
});
const say = (text: string): ScriptedReply => ({ content: [{ type: 'text', text }] });

describe('ScheduleWakeup: a job sleeps on a durable timer', () => {
  const dir = tempDir('wakeup');
  const home = tempDir('wakeup-home');
  // The server is the test's own, so the CLI's default queue is too.
  const taskQueue = 'durable-agent';
  let server: DevServer;
  let worker: WorkerProcess | undefined;
  const models: ScriptedModelServer[] = [];

  const env = (model: ScriptedModelServer): NodeJS.ProcessEnv => {
    const vars: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      TEMPORAL_ADDRESS: server.address,
      DURABLE_AGENT_TASK_QUEUE: taskQueue,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: model.url,
    };
    delete vars.ANTHROPIC_MODEL;
    return vars;
  };
  const startWorker = async (model: ScriptedModelServer) => {
    worker = await spawnWorkerProcess({ address: server.address, taskQueue, modelUrl: model.url, home });
  };
  const model = async (replies: ScriptedReply[]) => {
    const started = await ScriptedModelServer.start({ replies, chunkDelayMs: 0 });
    models.push(started);
    return started;
  };
  const status = async (id: string, model: ScriptedModelServer) =>
    JSON.parse((await runCli(['status', id, '--json'], env(model))).stdout);
  const sleeping = (id: string, model: ScriptedModelServer) =>
    waitFor(async () => ((await status(id, model)).phase === 'sleeping' ? true : undefined), 60_000, `${id} asleep`);

  beforeAll(async () => {
    server = await DevServer.start(dir);
  }, 90_000);
  afterEach(async () => {
    await worker?.kill('SIGKILL');
    worker = undefined;
  });
  afterAll(async () => {
    await worker?.kill('SIGKILL');
    await server?.kill();
    for (const each of models) await each.close();
  });

  test('it holds no activity while asleep, and wakes on time after the worker and the server were killed', async () => {
    const llm = await model([
      wakeCall(60, 'check the CI run'),
      say('Sleeping until the CI run is done.'),
      say('CI is green.'),
    ]);
    await startWorker(llm);
    const workspace = makeWorkspace({ 'README.md': 'hello\n' });
    const startedAt = Date.now();
    const run = await runCli(
      ['run', 'Watch the CI run', '--cwd', workspace, '--job-id', 'wake-timer', '--detach'],
      env(llm),
    );
    expect(run.code).toBe(0);
    await sleeping('wake-timer', llm).catch(async (error) => {
      const seen = await runCli(['status', 'wake-timer'], env(llm));
      throw new Error(
        `${error.message}\n${seen.stdout}${seen.stderr}\nworker: ${worker?.logs().slice(-3000)}\nrun: ${run.stdout}${run.stderr}`,
      );
    });
    const asleep = await status('wake-timer', llm);
    expect(asleep.wakeup).toMatchObject({ reason: 'the CI run takes a while', prompt: 'check the CI run' });
    const wakeAt = Date.parse(asleep.wakeup.at);
    expect(wakeAt - startedAt).toBeGreaterThanOrEqual(59_000);
    const text = (await runCli(['status', 'wake-timer'], env(llm))).stdout;
    expect(text).toMatch(/sleeping until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in \d+ s\): the CI run takes a while/);
    expect(text).toContain('durable-agent wake wake-timer');
    // The tool result the model got, in Claude Code's words.
    expect(lastUserText(llm.requests[1]!)).toMatch(/^Next wakeup scheduled for \d\d:\d\d:\d\d UTC \(in 60s\)\./);

    // Nothing is scheduled on any worker while it sleeps: no activity, only a timer.
    const described = await describeExecution(server.address, 'wake-timer');
    expect(described.pendingActivities ?? []).toHaveLength(0);

    await worker!.kill('SIGKILL');
    worker = undefined;
    await server.kill();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await server.launch();
    await startWorker(llm);

    // When the wake-up's model call arrives, to within a tenth of a second.
    let thirdAt = 0;
    const watch = setInterval(() => {
      if (!thirdAt && llm.requests.length >= 3) thirdAt = Date.now();
    }, 100);
    const result = await runCli(['result', 'wake-timer'], env(llm));
    clearInterval(watch);
    expect(result.stdout + result.stderr).toContain('CI is green.');
    expect(llm.requests).toHaveLength(3);
    expect(lastUserText(llm.requests[2]!)).toBe('check the CI run');
    // On time: not before the wake-up, and not long after it.
    expect(thirdAt).toBeGreaterThanOrEqual(wakeAt);
    expect(thirdAt - wakeAt).toBeLessThan(15_000);
    const done = await status('wake-timer', llm);
    expect(done.terminal).toMatchObject({ reason: 'completed', turnCount: 3 });
    expect(done.transitions).toMatchObject({ scheduled_wakeup: 1 });
  }, 240_000);

  test('input wakes it for a turn and it sleeps on; a wake signal, even a garbled one, fires the wake-up now', async () => {
    const llm = await model([
      wakeCall(3_600, 'check the deploy again'),
      say('Sleeping for an hour.'),
      say('Noted: the deploy is slow today.'),
      say('The deploy is done.'),
    ]);
    await startWorker(llm);
    const workspace = makeWorkspace({ 'README.md': 'hello\n' });
    expect(
      (await runCli(['run', 'Watch the deploy', '--cwd', workspace, '--job-id', 'wake-early', '--detach'], env(llm)))
        .code,
    ).toBe(0);
    await sleeping('wake-early', llm);
    const first = await status('wake-early', llm);
    expect(Date.parse(first.wakeup.at) - Date.now()).toBeGreaterThan(3_000_000);
    expect((await runCli(['status', 'wake-early'], env(llm))).stdout).toMatch(/sleeping until .* \(in 59 min \d+ s\)/);

    // A message takes a turn of its own; the wake-up stays as it was, and the job sleeps again.
    expect((await runCli(['send', 'wake-early', 'The deploy is slow today.'], env(llm))).code).toBe(0);
    await waitFor(async () => (llm.requests.length >= 3 ? true : undefined), 30_000, 'the turn of the message');
    expect(lastUserText(llm.requests[2]!)).toBe('The deploy is slow today.');
    await sleeping('wake-early', llm);
    const again = await status('wake-early', llm);
    expect(again.wakeup.at).toBe(first.wakeup.at);
    expect(again.turnCount).toBe(3);

    // From outside, with an argument the signal does not take: it still wakes, and says what it ignored.
    execFileSync(findTemporalBinary(), [
      'workflow',
      'signal',
      '--address',
      server.address,
      '--namespace',
      'default',
      '--workflow-id',
      'wake-early',
      '--name',
      'wake',
      '--input',
      '{"now":true}',
    ]);
    const result = await runCli(['result', 'wake-early'], env(llm));
    expect(result.stdout).toContain('The deploy is done.');
    expect(lastUserText(llm.requests[3]!)).toBe('check the deploy again');
    const done = await status('wake-early', llm);
    expect(done.terminal).toMatchObject({ reason: 'completed', turnCount: 4 });
    const notices = done.events
      .filter((event: { kind: string }) => event.kind === 'notice')
      .map((event: { text: string }) => event.text);
    expect(notices).toContain('wake: the signal takes no argument; what came with it was ignored');
    expect(
      notices.some((text: string) => /^woke early \(set for \d\d:\d\d:\d\d UTC\): check the deploy again$/.test(text)),
    ).toBe(true);

    // Nothing left to wake: a clear answer, no stack trace.
    const late = await runCli(['wake', 'wake-early'], env(llm));
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('Job wake-early has ended (completed); it has no wake-up to fire.');
    expect(late.stderr).not.toMatch(/\n\s+at .*:\d+:\d+\)?\n/);
  }, 180_000);

  test('`wake` fires it at once; a job that is not sleeping is told so; abort ends a sleeping job', async () => {
    const llm = await model([
      wakeCall(3_600, 'look again'),
      say('Sleeping.'),
      wakeCall(3_600, 'and again', 'toolu_wake2'),
      say('Sleeping once more.'),
    ]);
    await startWorker(llm);
    const workspace = makeWorkspace({ 'README.md': 'hello\n' });
    expect(
      (await runCli(['run', 'Keep an eye on it', '--cwd', workspace, '--job-id', 'wake-cli', '--detach'], env(llm)))
        .code,
    ).toBe(0);
    await sleeping('wake-cli', llm);
    const woke = await runCli(['wake', 'wake-cli'], env(llm));
    expect(woke.stdout).toMatch(/^woke wake-cli \(its wake-up was set for .* UTC\); it goes on with: look again/);
    // It wakes, looks, and schedules another: asleep again, on a new wake-up.
    await waitFor(async () => (llm.requests.length >= 4 ? true : undefined), 30_000, 'the second wake-up');
    await sleeping('wake-cli', llm);
    expect((await status('wake-cli', llm)).wakeup.prompt).toBe('and again');

    const abort = await runCli(['abort', 'wake-cli', '--reason', 'not needed any more'], env(llm));
    expect(abort.code).toBe(0);
    const result = await runCli(['result', 'wake-cli', '--json'], env(llm));
    const terminal = JSON.parse(result.stdout);
    expect(terminal).toMatchObject({ subtype: expect.any(String) });
    const ended = await status('wake-cli', llm);
    expect(ended.terminal.reason).toBe('aborted_tools');
    expect(ended.terminal.detail).toMatch(/^not needed any more \(while sleeping until \d\d:\d\d:\d\d UTC\)/);
    expect(llm.requests).toHaveLength(4);

    const notSleeping = await runCli(['wake', 'wake-cli'], env(llm));
    expect(notSleeping.code).toBe(1);
    expect(notSleeping.stderr).toContain('Job wake-cli has ended (aborted_tools)');
  }, 180_000);
});
