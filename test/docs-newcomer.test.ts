/**
 * The README's newcomer path, run word for word: the commands of its "Run it on your own
 * repository" section, in order, read from README.md itself (nothing here repeats them), on the
 * embedded default in a fresh HOME, with a new git repository standing in for the reader's own
 * and the scripted model server standing in for Claude. It ends with the job's answer printed and
 * `stop` leaving no server or worker running. A step this test does not know fails it: teach it
 * what the new step should do.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '../src/client/free-port';
import { ScriptedModelServer, tempDir } from './support/harness';
import { textReply } from './support/jobs';
import { childrenOf, runCli, startCli } from './support/cli';
import type { CliResult } from './support/cli';
import { blockCommands, fencedBlocks } from './support/doc-commands';
import type { DocCommand } from './support/doc-commands';

const SECTION = 'Run it on your own repository';
const ANSWER = 'This repository parses arithmetic expressions; its tests run with npm test.';

/** The section's commands, in the order the README gives them. */
function newcomerCommands(): DocCommand[] {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  expect(readme).toContain('<!-- newcomer-path: test/docs-newcomer.test.ts');
  return fencedBlocks('README.md', readme)
    .filter((block) => block.section === SECTION)
    .flatMap(blockCommands);
}

/** A small git repository of the reader's own. */
function ownRepository(): string {
  const repo = tempDir('own-repo');
  fs.writeFileSync(path.join(repo, 'README.md'), '# calc\n\nParses arithmetic expressions.\n');
  fs.mkdirSync(path.join(repo, 'src'));
  fs.writeFileSync(path.join(repo, 'src', 'parser.js'), 'module.exports = (text) => Number(text);\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Reader', '-c', 'user.email=reader@example.com', ...args], { cwd: repo });
  git('init', '-q');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  return repo;
}

describe("the README's newcomer path", () => {
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;
  let home: string;

  beforeAll(async () => {
    // Every job's first model call is answered at once, except the second job's: it hangs, so the
    // detached job is still running while the reader looks in, sends, tails and aborts it.
    server = await ScriptedModelServer.start({
      name: 'newcomer',
      replies: [textReply(ANSWER), textReply(ANSWER)],
      faults: [{ turn: 0, attempt: 2, kind: 'hang' }],
      chunkDelayMs: 0,
    });
    home = tempDir('home');
    env = { ...process.env, HOME: home, ANTHROPIC_BASE_URL: server.url };
    // A newcomer's shell: no key until the README says to set one, the embedded default.
    for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'DURABLE_AGENT_HOME', 'TEMPORAL_ADDRESS']) {
      delete env[name];
    }
  });

  afterAll(async () => {
    // Whatever a failed step left running; a no-op after the README's own `stop`.
    await runCli(['stop'], env);
    await server?.close();
  });

  test('runs a job on a repository of their own, follows, aborts, resumes and stops', async () => {
    const commands = newcomerCommands();
    expect(commands.length).toBeGreaterThan(3);
    const repo = ownRepository();
    const data = path.join(home, '.durable-agent');
    let jobId: string | undefined;
    let answered = 0;
    let last: CliResult | undefined;
    let running: number[] = [];

    for (const command of commands) {
      const [program, ...written] = command.words;
      const step = `${command.where}: ${command.text}`;
      if (program === 'export') {
        for (const assignment of written) {
          const name = assignment.slice(0, assignment.indexOf('='));
          if (name !== 'ANTHROPIC_API_KEY') throw new Error(`${step}: the test does not know what ${name} should be`);
          env[name] = 'test-key';
        }
        continue;
      }
      if (program !== 'durable-agent') throw new Error(`${step}: the test runs durable-agent commands only`);
      const args = written.map((word) => {
        if (word === '<id>') {
          if (!jobId) throw new Error(`${step}: <id> before any command printed a job id`);
          return jobId;
        }
        return word === '/path/to/your/repo' ? repo : word;
      });
      const [subcommand] = args;

      if (subcommand === 'tail') {
        // Ctrl-C, as the README says, once it has shown something: it stops watching, not the job.
        const tail = startCli(args, env);
        const shown = Date.now();
        while (!tail.output().includes(jobId as string) && Date.now() - shown < 10_000) {
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        tail.child.kill('SIGINT');
        last = await tail.done;
        expect({ step, code: last.code }).toEqual({ step, code: 130 });
        expect(last.stderr).toContain(`job ${jobId} keeps running`);
        continue;
      }

      if (subcommand === 'stop') {
        const records = ['embedded-server.json', 'embedded-worker.json'].map(
          (name) => (JSON.parse(fs.readFileSync(path.join(data, name), 'utf8')) as { pid: number }).pid,
        );
        running = [...records, ...childrenOf(records[1] as number)];
        expect(running.every(isProcessAlive)).toBe(true);
        last = await runCli(args, env);
        expect({ step, code: last.code, stdout: last.stdout }).toMatchObject({
          code: 0,
          stdout: expect.stringContaining('stopped worker'),
        });
        continue;
      }

      last = await runCli(args, env);
      const seen = { step, code: last.code, stdout: last.stdout, stderr: last.stderr };
      if (subcommand === 'run' && args.includes('--detach')) {
        expect(seen).toMatchObject({ code: 0 });
        jobId = last.stdout.trim();
        expect(jobId).toMatch(/^job-/);
        // Its model call has arrived (and hangs): the job is running.
        await server.waitForRequest(0, 2, 30_000);
      } else if (subcommand === 'run') {
        expect(seen).toMatchObject({ code: 0 });
        expect(last.stdout).toContain(ANSWER);
        expect(last.stderr).toContain('Terminal: completed');
        expect(last.stderr).toContain('UI http://127.0.0.1:');
        answered++;
      } else if (subcommand === 'status') {
        expect(seen).toMatchObject({ code: 0 });
        expect(last.stdout).toContain('workflow status: RUNNING');
      } else if (subcommand === 'send') {
        expect(seen).toMatchObject({ code: 0, stdout: expect.stringContaining(`message queued for ${jobId}`) });
      } else if (subcommand === 'abort') {
        expect(seen).toMatchObject({ code: 0, stdout: expect.stringContaining(`abort sent to ${jobId}`) });
      } else if (subcommand === 'wake') {
        // This job scheduled no wake-up (and has been aborted): told so plainly, nothing sent.
        expect(seen).toMatchObject({
          code: 1,
          stderr: expect.stringMatching(/has ended \(aborted_\w+\)|has no wake-up pending/),
        });
        expect(last.stderr).not.toMatch(/\n\s+at .*:\d+:\d+\)?\n/);
      } else if (subcommand === 'result') {
        // The job was aborted on the way: exit status 1 (it did not complete), and the Terminal says so.
        expect(seen).toMatchObject({ code: 1, stderr: expect.stringContaining('aborted_streaming') });
      } else {
        throw new Error(`${step}: the newcomer test does not know what this step should do; teach it`);
      }
    }

    // The path ran a job to its answer and ended with `stop`, which left nothing running.
    expect(answered).toBeGreaterThan(0);
    expect(commands[commands.length - 1]?.words.slice(0, 2)).toEqual(['durable-agent', 'stop']);
    expect(running.filter(isProcessAlive)).toEqual([]);
    expect(fs.existsSync(path.join(data, 'embedded-server.json'))).toBe(false);
  }, 120_000);
});
