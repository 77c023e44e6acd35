/**
 * deploy/systemd/durable-agent-embedded.service: the embedded default brought back at boot (issue
 * 26: "a job whose machine rebooted waits until someone types a command"). No systemd runs here, so
 * the unit is verified, and its command is run as the user manager would run it after a power cut:
 * its environment file, its PATH, nothing else. The job cut off mid-call then goes on by itself.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { childrenOf, exitedWithOutput } from './support/cli';
import { ScriptedModelServer, makeWorkspace, tempDir, waitFor } from './support/harness';
import { parseUnit, readEnvironmentFile, systemdTimeSpanMs, unitValue } from './support/systemd-unit';
import { textReply } from './support/jobs';
import { TS_REGISTER } from './support/ts-run';

jest.setTimeout(300_000);

const root = path.join(__dirname, '..');
const UNIT_FILE = path.join(root, 'deploy/systemd/durable-agent-embedded.service');
const unit = parseUnit(fs.readFileSync(UNIT_FILE, 'utf8'));

/** The PATH systemd's user manager gives its units. */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** An Exec line's words (these lines use no quoting). */
const words = (key: string) => (unitValue(unit, 'Service', key) ?? '').split(/\s+/).filter(Boolean);

/** What a command of the unit prints, and how it exits. */
async function runAsUnit(argv: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(argv[0]!, argv.slice(1), { cwd: env.HOME, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await exitedWithOutput(child);
  return { code, output };
}

/** Every process of the embedded default, SIGKILLed at once: the power went. */
function powerCut(home: string): void {
  const record = (name: string) => (JSON.parse(fs.readFileSync(path.join(home, name), 'utf8')) as { pid: number }).pid;
  const supervisor = record('embedded-worker.json');
  const pids = [supervisor, ...childrenOf(supervisor), record('embedded-server.json')];
  for (const pid of pids) process.kill(pid, 'SIGKILL');
}

describe('deploy/systemd/durable-agent-embedded.service', () => {
  test('systemd-analyze verify accepts it, and it stops with a drain longer than the worker`s', () => {
    const analyze = execFileSync('bash', [path.join(root, 'scripts/install-systemd-analyze.sh')], {
      encoding: 'utf8',
    }).trim();
    const dir = tempDir('embedded-unit');
    fs.copyFileSync(UNIT_FILE, path.join(dir, 'durable-agent-embedded.service'));
    // As a system unit: --user needs a running user manager. %h is then root's home; the syntax
    // and the programs of the Exec lines are what is checked.
    const verify = spawnSync(analyze, ['verify', '--man=no', path.join(dir, 'durable-agent-embedded.service')], {
      encoding: 'utf8',
    });
    expect({ status: verify.status, output: `${verify.stdout}${verify.stderr}`.trim() }).toEqual({
      status: 0,
      output: '',
    });
    expect(unitValue(unit, 'Service', 'Type')).toBe('oneshot');
    expect(unitValue(unit, 'Service', 'RemainAfterExit')).toBe('yes');
    expect(words('ExecStop')).toEqual(['/usr/bin/env', 'durable-agent', 'stop']);
    // The worker's drain: 11 minutes, then 30 s more.
    expect(systemdTimeSpanMs(unitValue(unit, 'Service', 'TimeoutStopSec') ?? '')).toBeGreaterThan(11.5 * 60_000);
  });

  test('after a power cut, its command brings back the server and worker, and the job cut mid-call goes on', async () => {
    // The job's first call hangs: the power goes in the middle of it.
    const server = await ScriptedModelServer.start({
      replies: [textReply('Back after the reboot.')],
      faults: [{ turn: 0, attempt: 1, kind: 'hang' }],
    });
    const home = tempDir('embedded-user');
    // `durable-agent` on the PATH, as `npm link` puts it there; this checkout's source runs.
    const bin = tempDir('embedded-bin');
    fs.writeFileSync(
      path.join(bin, 'durable-agent'),
      `#!/bin/sh\nexec "${process.execPath}" -r "${TS_REGISTER}" "${path.join(root, 'src/client/cli.ts')}" "$@"\n`,
      { mode: 0o755 },
    );
    // The unit's environment file, as its install lines say to write it.
    const envFile = path.join(home, '.config/durable-agent/env');
    fs.mkdirSync(path.dirname(envFile), { recursive: true });
    fs.writeFileSync(envFile, `ANTHROPIC_API_KEY=test-key\nANTHROPIC_BASE_URL=${server.url}\n`, { mode: 0o600 });
    expect(unitValue(unit, 'Service', 'EnvironmentFile')).toBe('%h/.config/durable-agent/env');
    const unitEnv: NodeJS.ProcessEnv = {
      PATH: `${bin}:${SYSTEMD_PATH}`,
      HOME: home,
      LANG: 'C.UTF-8',
      ...readEnvironmentFile(envFile).env,
      // The compiled sources and workflow bundle of this run, and its temp folder.
      TMPDIR: process.env.TMPDIR,
      DURABLE_AGENT_TS_CACHE: process.env.DURABLE_AGENT_TS_CACHE,
      DURABLE_AGENT_TS_REGISTER: process.env.DURABLE_AGENT_TS_REGISTER,
      DURABLE_AGENT_WORKFLOW_BUNDLE: process.env.DURABLE_AGENT_WORKFLOW_BUNDLE,
    };
    const shell = { ...unitEnv, PATH: `${bin}:${process.env.PATH ?? SYSTEMD_PATH}` };
    const stateDir = path.join(home, '.durable-agent');
    try {
      const started = await runAsUnit(
        ['durable-agent', 'run', 'Say you are back', '--cwd', makeWorkspace({}), '--job-id', 'boot-1', '--detach'],
        shell,
      );
      expect(started.code).toBe(0);
      await server.waitForRequest(0, 1, 60_000);
      // Well into the call, as a power cut would mostly find it.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      powerCut(stateDir);

      // Boot: the user manager runs the unit's command, and nobody types anything.
      const bootedAt = Date.now();
      const boot = await runAsUnit(words('ExecStart'), unitEnv);
      expect(boot).toMatchObject({ code: 0 });
      expect(boot.output).toContain('boot-1');
      // Mostly within seconds (the new worker finds the dead one's call in its record); at worst
      // when the call's 60 s heartbeat timeout runs out on the restarted server.
      await server.waitForRequest(0, 2, 150_000).catch((error: Error) => {
        const logs = path.join(stateDir, 'logs');
        const text = fs
          .readdirSync(logs)
          .map((name) => `--- ${name}\n${fs.readFileSync(path.join(logs, name), 'utf8').slice(-3000)}`)
          .join('\n');
        throw new Error(`${error.message}\nboot: ${boot.output}\n${text}`);
      });
      console.log(
        `after the power cut, the unit's command had the call made again in ${(Date.now() - bootedAt) / 1000} s`,
      );
      // The unit's command has exited; what it started goes on and finishes the job.
      await waitFor(
        async () => (fs.existsSync(path.join(stateDir, 'embedded-worker.json')) ? true : undefined),
        10_000,
        'the worker record',
      );
      const result = await runAsUnit(['durable-agent', 'result', 'boot-1'], shell);
      expect(result.code).toBe(0);
      expect(result.output).toContain('Back after the reboot.');

      const stop = await runAsUnit(words('ExecStop'), unitEnv);
      expect(stop.code).toBe(0);
      expect(fs.existsSync(path.join(stateDir, 'embedded-server.json'))).toBe(false);
    } finally {
      await runAsUnit(['durable-agent', 'stop'], shell);
      await server.close();
    }
  });
});
