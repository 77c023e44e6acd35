/**
 * CronCreate as a user meets it: the real CLI and a worker process on a dev server of the test's
 * own, the scripted model scheduling a prompt every minute. The job does not end with its turn: it
 * sleeps (no activity) until the next minute, also across a SIGKILL of its worker, then goes on with
 * the prompt; `wake` fires the next run early; CronDelete ends the schedule, and with it the job.
 */
import type { ScriptedReply } from '../src/model-server';
import { decideCronCreate } from '../src/shared/tools/cron';
import { DevServer } from './support/chaos';
import { describeExecution, lastUserText } from './support/job-observation';
import { runCli } from './support/cli';
import { makeWorkspace, ScriptedModelServer, spawnWorkerProcess, tempDir, waitFor } from './support/harness';
import type { WorkerProcess } from './support/harness';

const say = (text: string): ScriptedReply => ({ content: [{ type: 'text', text }] });
const call = (id: string, name: string, input: Record<string, unknown>) => ({
  type: 'tool_use' as const,
  id,
  name,
  input,
});

describe('CronCreate: prompts scheduled into a durable job', () => {
  const dir = tempDir('cron');
  const home = tempDir('cron-home');
  const taskQueue = 'durable-agent';
  let server: DevServer;
  let worker: WorkerProcess | undefined;
  let model: ScriptedModelServer;
  const env = (): NodeJS.ProcessEnv => {
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
  const startWorker = async () => {
    worker = await spawnWorkerProcess({ address: server.address, taskQueue, modelUrl: model.url, home });
  };
  const status = async (id: string) => JSON.parse((await runCli(['status', id, '--json'], env())).stdout);

  beforeAll(async () => {
    server = await DevServer.start(dir);
  }, 90_000);
  afterAll(async () => {
    await worker?.kill('SIGKILL');
    await server?.kill();
    await model?.close();
  });

  test('the job sleeps until each run, survives its worker killed meanwhile, wakes early on `wake`, and ends with CronDelete', async () => {
    // The ID the job gives the schedule comes from the call's tool_use_id, the same on every run.
    const id = decideCronCreate({ cron: '* * * * *', prompt: 'x' }, 'toolu_c1', 0, []).crons[0]!.id;
    model = await ScriptedModelServer.start({
      chunkDelayMs: 0,
      replies: [
        {
          content: [
            call('toolu_c1', 'CronCreate', { cron: '* * * * *', prompt: 'Check the queue.' }),
            call('toolu_c2', 'CronCreate', { cron: 'every minute', prompt: 'x' }),
          ],
        },
        say('Watching the queue every minute.'),
        say('The queue is empty.'),
        say('Checked early: still empty.'),
        { content: [call('toolu_l', 'CronList', {}), call('toolu_d', 'CronDelete', { id })] },
        say('Stopped watching.'),
      ],
    });
    await startWorker();
    // Its first two turns must end before the minute does: a CronCreate at :59 is due at once, and
    // the job would then be seen asleep only after its first run. (CI once saw exactly that.)
    const second = new Date().getUTCSeconds();
    if (second > 30) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
    const workspace = makeWorkspace({ 'README.md': 'hello\n' });
    const run = await runCli(['run', 'Watch the queue', '--cwd', workspace, '--job-id', 'cron-job', '--detach'], env());
    expect(run.code).toBe(0);
    const asleep = await waitFor(
      async () => {
        const seen = await status('cron-job');
        return seen.phase === 'sleeping' ? seen : undefined;
      },
      60_000,
      'the job asleep after its first turn',
    );
    // Claude Code's answers: the schedule, and the refused expression.
    const answers = lastUserText(model.requests[1]!);
    expect(answers).toContain(`Scheduled recurring job ${id} (Every minute). Next run: `);
    expect(answers).toContain(
      "<tool_use_error>Invalid cron expression 'every minute'. Expected 5 fields: M H DoM Mon DoW.</tool_use_error>",
    );
    expect(asleep.crons).toEqual([
      {
        id,
        cron: '* * * * *',
        schedule: 'Every minute',
        recurring: true,
        nextAt: expect.stringMatching(/:00\.000Z$/),
        prompt: 'Check the queue.',
      },
    ]);
    const firstRun = Date.parse(asleep.crons[0].nextAt);
    const shown = (await runCli(['status', 'cron-job'], env())).stdout;
    expect(shown).toContain(`${id} Every minute (recurring), next `);
    expect(shown).toContain('durable-agent wake cron-job');
    const described = await describeExecution(server.address, 'cron-job');
    expect(described.pendingActivities ?? []).toHaveLength(0);

    // The worker dies while the job sleeps; another comes back before the run is due.
    await worker!.kill('SIGKILL');
    await startWorker();
    await waitFor(async () => (model.requests.length >= 3 ? true : undefined), 90_000, 'the first run');
    expect(Date.now()).toBeGreaterThanOrEqual(firstRun);
    expect(lastUserText(model.requests[2]!)).toBe('Check the queue.');

    // Asleep again until the next minute: `wake` fires that run now.
    await waitFor(
      async () => ((await status('cron-job')).phase === 'sleeping' ? true : undefined),
      60_000,
      'asleep again',
    );
    const woke = await runCli(['wake', 'cron-job'], env());
    expect(woke.stdout).toContain(`woke cron-job: its scheduled job ${id}`);
    await waitFor(async () => (model.requests.length >= 4 ? true : undefined), 30_000, 'the early run');
    expect(lastUserText(model.requests[3]!)).toBe('Check the queue.');
    // That `wake` is used up: the schedule sleeps until its next minute again, rather than firing
    // after every turn.
    await waitFor(
      async () => ((await status('cron-job')).phase === 'sleeping' ? true : undefined),
      30_000,
      'asleep after the early run',
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const stillAsleep = await status('cron-job');
    if (Date.now() < Date.parse(stillAsleep.crons[0].nextAt) - 1_000) {
      expect(stillAsleep.phase).toBe('sleeping');
      expect(model.requests).toHaveLength(4);
    }
    await runCli(['wake', 'cron-job'], env());
    const result = await runCli(['result', 'cron-job', '--json'], env());
    const ended = JSON.parse(result.stdout);
    expect(ended.terminal.reason).toBe('completed');
    expect(ended.result).toBe('Stopped watching.');
    expect(ended.terminal.transitions).toMatchObject({ scheduled_task: 3 });
    expect(lastUserText(model.requests[4]!)).toBe('Check the queue.');
    const listed = lastUserText(model.requests[5]!);
    expect(listed).toMatch(
      new RegExp(`${id} — Every minute \\(recurring\\) \\[job\\], next run .*: Check the queue\\.`),
    );
    expect(listed).toContain(`Cancelled job ${id} (Every minute): Check the queue.`);
    expect(model.requests).toHaveLength(6);
  }, 240_000);
});
