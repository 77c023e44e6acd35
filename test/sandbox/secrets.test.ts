import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ScriptedBlock } from '../../src/model-server';
import {
  ScriptedModelServer,
  sessionInput,
  spawnWorkerProcess,
  startTemporal,
  uniqueTaskQueue,
  type WorkerProcess,
} from '../support/harness';
import { makeSandboxFixture, type SandboxFixture } from './support';
import { terminalOf } from '../support/jobs';

/**
 * Issue 6, requirement 2, end to end: a worker in its own process, given a recognisable API key
 * the way durable-agent launches workers (over a pipe), runs a job whose Bash calls try every way
 * to the key and to the credentials on the machine. Afterwards every place a secret could land
 * is searched: the decoded history, the content store, the journal, the worker's logs, and the
 * tool results the model saw. Run once sandboxed, once with the job opted out.
 */

/** Everything of the history as text: each payload's data (base64 of JSON bytes) decoded. */
function historyText(history: unknown): string {
  return JSON.stringify(history, (key, value: unknown) => {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    if (key === 'data' && typeof value === 'string') {
      const text = Buffer.from(value, 'base64').toString('utf8');
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    }
    return value;
  });
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((entry) => {
    const full = path.join(entry.parentPath, entry.name);
    return entry.isFile() ? [full] : [];
  });
}

/** PIDs of the host's processes whose start environment (`/proc/<pid>/environ`) holds `secret`. */
function environsHolding(secret: string): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return fs.readFileSync(`/proc/${entry}/environ`, 'utf8').includes(secret) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

/** Where the secret turned up, as "place: excerpt" lines; empty when nowhere. */
function findings(secret: string, places: Record<string, string>): string[] {
  return Object.entries(places).flatMap(([place, text]) => {
    const at = text.indexOf(secret);
    return at === -1 ? [] : [`${place}: …${text.slice(Math.max(0, at - 80), at + secret.length + 20)}…`];
  });
}

describe('no tool process can reach a credential the worker holds', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTemporal();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  async function runAttack(mode: 'sandboxed' | 'unsandboxed', handover: 'pipe' | 'env' = 'pipe') {
    const apiKey = `sk-ant-test-SECRET-${Math.random().toString(36).slice(2)}`;
    const fixture: SandboxFixture = makeSandboxFixture(`file-secret-${Math.random().toString(36).slice(2)}`);
    if (mode === 'sandboxed') {
      // The key also on disk: in another job's transcript, and exported from the user's shell rc.
      // (Without the sandbox any file of this user is readable: that run keeps the key off disk.)
      fs.mkdirSync(path.join(fixture.dataHome, 'store', 'zz'), { recursive: true });
      fs.writeFileSync(path.join(fixture.dataHome, 'store', 'zz', 'other-job'), `{"apiKey":"${apiKey}"}`);
      fs.appendFileSync(path.join(fixture.home, '.bashrc'), `export ANTHROPIC_API_KEY=${apiKey}\n`);
    }
    // A file whatever started the worker left open (a shell's `250<file`): the file itself is not here.
    const fdSecret = `FD-SECRET-${Math.random().toString(36).slice(2)}`;
    const fdFile = path.join(fixture.root, 'left-open');
    fs.writeFileSync(fdFile, `${fdSecret}\n`);
    const inheritFd = fs.openSync(fdFile, 'r');
    fs.unlinkSync(fdFile);
    const attacks = [
      'cat <&250; cat /proc/self/fd/250; ls -l /proc/self/fd',
      'grep -a ANTHROPIC_API_KEY /proc/*/environ',
      // Every ancestor's environment: the command's shell, the helper that started it, the worker.
      'p=$PPID; while [ "$p" -gt 1 ]; do tr "\\0" "\\n" < /proc/$p/environ; p=$(awk \'/^PPid:/ { print $2 }\' /proc/$p/status); done',
      'for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null | tr "\\0" "\\n"; done',
      'env; cat /proc/self/environ /proc/1/environ | tr "\\0" "\\n"',
      'ps -eo pid,args',
      'cat ~/.aws/credentials ~/.ssh/id_ed25519 ~/.bashrc ~/.netrc ~/.docker/config.json ~/.kube/config',
      `cat ${fixture.dataHome}/store/*/* ${fixture.dataHome}/temporal.db`,
      `grep -r -a -h SECRET ${fixture.home} ${fixture.dataHome} 2>/dev/null | head -50`,
    ];
    const toolUses: ScriptedBlock[] = attacks.map((command, i) => ({
      type: 'tool_use',
      id: `toolu_attack_${i}`,
      name: 'Bash',
      // Each ends well: a failing Bash would cancel the calls beside it.
      input: { command: `${command}; exit 0` },
    }));
    const server = await ScriptedModelServer.start({
      name: `secrets-${mode}`,
      replies: [{ content: toolUses }, { content: [{ type: 'text', text: 'Nothing found.' }] }],
    });
    let worker: WorkerProcess | undefined;
    try {
      const taskQueue = uniqueTaskQueue(`secrets-${mode}`);
      worker = await spawnWorkerProcess({
        address: env.address,
        taskQueue,
        modelUrl: server.url,
        home: fixture.dataHome,
        ...(handover === 'pipe' ? { secrets: { ANTHROPIC_API_KEY: apiKey } } : {}),
        extraEnv: { HOME: fixture.home, ...(handover === 'env' ? { ANTHROPIC_API_KEY: apiKey } : {}) },
        inheritFd,
      });
      fs.closeSync(inheritFd);
      const handle = await env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: `secrets-${mode}-${Date.now()}`,
        args: [
          sessionInput(fixture.workspace, {
            permissions: { mode: 'bypassPermissions' },
            ...(mode === 'unsandboxed' ? { noSandbox: true } : {}),
          }),
        ],
      });
      const terminal = await terminalOf(handle);
      expect(terminal.reason).toBe('completed');

      // While the worker runs: no process on this machine has the key in its environment.
      const environs = environsHolding(apiKey);
      const history = historyText(await handle.fetchHistory());
      const toolResults = JSON.stringify(server.requests.at(-1)?.body);
      const places: Record<string, string> = {
        history,
        'worker logs': worker.logs(),
        'tool results the model saw': toolResults,
      };
      const planted = new Set([
        ...fixture.credentials.map((c) => c.file),
        path.join(fixture.dataHome, 'store', 'zz', 'other-job'),
      ]);
      for (const file of filesUnder(path.join(fixture.dataHome, 'store'))) {
        if (!planted.has(file)) places[`store ${file}`] = fs.readFileSync(file, 'utf8');
      }
      for (const file of filesUnder(path.join(fixture.workspace, '.durable-agent'))) {
        places[`journal ${file}`] = fs.readFileSync(file, 'utf8');
      }
      return {
        apiKey,
        fdSecret,
        fixture,
        history,
        places,
        toolResults,
        environs,
        workerPid: worker.child.pid,
        logs: worker.logs(),
      };
    } finally {
      await worker?.kill('SIGTERM');
      await server.close();
    }
  }

  test('sandboxed: neither the key nor any credential file reaches a tool result', async () => {
    const run = await runAttack('sandboxed');
    try {
      expect(run.history).toContain('"sandboxed":true');
      expect(run.logs).toContain('durable-agent worker: Bash runs sandboxed (bubblewrap');
      expect(run.environs).toEqual([]);
      expect(findings(run.apiKey, run.places)).toEqual([]);
      expect(findings(run.fdSecret, run.places)).toEqual([]);
      // (The TLS files are not the worker's here: a local dev server takes no TLS. bwrap.test.ts and
      // worker-setup.test.ts cover them.)
      for (const { file, secret } of run.fixture.credentials) {
        if (file.startsWith(path.join(run.fixture.root, 'tls'))) continue;
        expect(findings(secret, run.places)).toEqual([]);
      }
      // The attacks did run, inside the sandbox: they saw its processes and were refused the files.
      expect(run.toolResults).toContain('Permission denied');
      expect(run.toolResults).toContain('bwrap');
      expect(run.toolResults).not.toContain('DURABLE_AGENT_TASK_QUEUE');
    } finally {
      run.fixture.cleanup();
    }
  });

  test('opted out: the key still reaches no tool result; the files this user can read do', async () => {
    const run = await runAttack('unsandboxed');
    try {
      expect(run.history).toContain('"sandboxed":false');
      expect(run.history).not.toContain('"sandboxed":true');
      // The key came over a pipe: no process's environment holds it, the worker's included.
      expect(run.environs).toEqual([]);
      expect(findings(run.apiKey, run.places)).toEqual([]);
      expect(findings(run.fdSecret, run.places)).toEqual([]);
      // The worker is an ancestor of every command: its environment was read, and held no key.
      expect(run.toolResults).toContain('DURABLE_AGENT_TASK_QUEUE=test-secrets-unsandboxed');
      expect(run.toolResults).toContain('jest');
      // What does not hold without the sandbox, stated: every file of this user is readable, the
      // credential files included. (So is the worker's memory, which these commands do not try.)
      const aws = run.fixture.credentials.find((c) => c.file.endsWith('.aws/credentials'));
      expect(run.toolResults).toContain(aws?.secret);
    } finally {
      run.fixture.cleanup();
    }
  });

  test('control: a worker started with the key in its environment leaks it to an opted-out job', async () => {
    // The attacks are real: where the key is in the worker's start environment, they find it.
    const run = await runAttack('unsandboxed', 'env');
    try {
      expect(run.environs).toContain(run.workerPid);
      expect(run.toolResults).toContain(run.apiKey);
      // And the worker said so when it started.
      expect(run.logs).toContain(`/proc/${run.workerPid}/environ shows them`);
    } finally {
      run.fixture.cleanup();
    }
  });
});
