/**
 * The supervisors of production workers (deploy/): the systemd unit and the Kubernetes manifest are
 * accepted by their own tools, give the worker longer than its drain to stop, and name only
 * variables the worker reads, so neither can drift from the code. And the unit's command, run the
 * way systemd runs it (its environment file, its credential, SIGTERM to the main process), polls
 * with those settings and drains: the running Bash finishes and the worker exits 0.
 *
 * Tools: `systemd-analyze` (scripts/install-systemd-analyze.sh) and the strict Kubernetes decoder
 * scripts/k8s-manifest-check (built by scripts/install-k8s-manifest-check.sh into .tools/).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { isSecretEnvName } from '../src/activities/tools/bash-env';
import type { Terminal } from '../src/shared/terminal';
import {
  DEFAULT_SHUTDOWN_GRACE_MS,
  SHUTDOWN_FORCE_MARGIN_MS,
  shutdownGraceFromEnv,
} from '../src/worker/shutdown-grace';
import { exitedWithOutput } from './support/cli';
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
import type { WorkerProcess } from './support/harness';
import { liveProcesses, textReply, toolResultFor, toolUse, waitForSnapshot } from './support/jobs';
import {
  parseUnit,
  readEnvironmentFile,
  systemdTimeSpanMs,
  unitEnvironment,
  unitValue,
  unitValues,
} from './support/systemd-unit';
import { TS_REGISTER } from './support/ts-run';

const root = path.join(__dirname, '..');
const UNIT_FILE = path.join(root, 'deploy/systemd/durable-agent-worker.service');
const ENV_EXAMPLE = path.join(root, 'deploy/systemd/durable-agent-worker.env.example');
const SECRETS_EXAMPLE = path.join(root, 'deploy/systemd/worker-secrets.json.example');
const MANIFEST = path.join(root, 'deploy/kubernetes/worker.yaml');
const SECRET_EXAMPLE = path.join(root, 'deploy/kubernetes/worker-secrets.example.yaml');

/** Where the unit expects the checkout and Node; the tests put this checkout and this Node there. */
const INSTALL_DIR = '/opt/durable-agent';
const UNIT_NODE = '/usr/bin/node';

/** Time a supervisor must leave beyond the worker's own bound, for its connection to close and exit. */
const EXIT_MARGIN_MS = 15_000;

/** The absolute path an install script prints (it installs or builds the tool the first time). */
function installed(script: string): string {
  return execFileSync('bash', [path.join(root, 'scripts', script)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 600_000,
  }).trim();
}

/**
 * The environment variables the worker's source reads: `env.NAME`, `config.NAME`,
 * `process.env.NAME`, `env['NAME']`, and `*_VAR = 'NAME'` constants, anywhere under src/.
 */
function namesTheWorkerReads(): Set<string> {
  const names = new Set<string>();
  const patterns = [
    /\b(?:env|config|process\.env|source)\??\.([A-Z][A-Z0-9_]+)\b/g,
    /\[['"]([A-Z][A-Z0-9_]{2,})['"]\]/g,
    /_VAR = '([A-Z][A-Z0-9_]+)'/g,
  ];
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith('.ts')) {
        const text = fs.readFileSync(file, 'utf8');
        for (const pattern of patterns) for (const match of text.matchAll(pattern)) names.add(match[1]!);
      }
    }
  };
  visit(path.join(root, 'src'));
  return names;
}

/** The longest a worker with this configuration takes to stop after SIGTERM, before it exits. */
function drainBoundMs(config: NodeJS.ProcessEnv): number {
  return shutdownGraceFromEnv(config) + SHUTDOWN_FORCE_MARGIN_MS;
}

/** Write to the command's FIFO; fails (ENXIO) rather than blocks when nothing reads it any more. */
function openGate(fifo: string): void {
  const fd = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  try {
    fs.writeSync(fd, 'gate open\n');
  } finally {
    fs.closeSync(fd);
  }
}

describe('the workers read the variables they are named by', () => {
  test('the scan of src/ finds the names the worker reads, and not names it does not', () => {
    const names = namesTheWorkerReads();
    for (const name of ['TEMPORAL_ADDRESS', 'DURABLE_AGENT_SHUTDOWN_GRACE', 'DURABLE_AGENT_SECRETS_FD', 'AWS_REGION']) {
      expect(names).toContain(name);
    }
    expect(names).not.toContain('DURABLE_AGENT_SHUTDOWN_GRACE_MS');
    expect(names).not.toContain('TEMPORAL_ADRESS');
  });
});

describe('deploy/systemd/durable-agent-worker.service', () => {
  const unit = parseUnit(fs.readFileSync(UNIT_FILE, 'utf8'));
  const envFile = readEnvironmentFile(ENV_EXAMPLE);
  let analyze: string;
  beforeAll(() => {
    analyze = installed('install-systemd-analyze.sh');
  }, 600_000);

  /** A copy of the unit in `dir` whose paths are this machine's, with `edit` applied. */
  function localCopy(dir: string, edit: (text: string) => string = (text) => text): string {
    const file = path.join(dir, 'durable-agent-worker.service');
    const text = fs
      .readFileSync(UNIT_FILE, 'utf8')
      .replaceAll(UNIT_NODE, process.execPath)
      .replaceAll(INSTALL_DIR, root);
    fs.writeFileSync(file, edit(text));
    return file;
  }

  test('systemd-analyze verify accepts it without a warning, and warns about a misspelt key', () => {
    const dir = tempDir('unit');
    // verify needs no running systemd; it checks the syntax and that ExecStart's program exists
    // (/bin/sh: the paths in the command it runs are checked below).
    const verify = (file: string) => {
      const result = spawnSync(analyze, ['verify', '--man=no', file], { encoding: 'utf8' });
      return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
    };
    expect(verify(localCopy(dir))).toEqual({ status: 0, output: '' });
    // It only warns about what it ignores, with status 0: the empty output above is the check.
    const misspelt = verify(localCopy(tempDir('unit'), (text) => text.replace(/^KillMode=/m, 'KillMod=')));
    expect(misspelt.output).toMatch(/Unknown key 'KillMod'/);
    // The program the shell execs is in this checkout under the install path's layout.
    const exec = unitValue(unit, 'Service', 'ExecStart') ?? '';
    expect(exec).toContain(`exec ${UNIT_NODE} ${INSTALL_DIR}/bin/durable-agent.js worker `);
    expect(fs.existsSync(path.join(root, 'bin/durable-agent.js'))).toBe(true);
  });

  test('stops by SIGTERM to the worker alone, waits longer than its drain, and restarts it', () => {
    expect(unitValue(unit, 'Service', 'KillSignal')).toBe('SIGTERM');
    // control-group would send SIGTERM to the running commands too, and they would not finish.
    expect(unitValue(unit, 'Service', 'KillMode')).toBe('mixed');
    expect(unitValue(unit, 'Service', 'Restart')).toMatch(/^(always|on-failure)$/);
    expect(systemdTimeSpanMs(unitValue(unit, 'Service', 'RestartSec') ?? '0')).toBeGreaterThan(0);
    const timeoutMs = systemdTimeSpanMs(unitValue(unit, 'Service', 'TimeoutStopSec') ?? '');
    const config = { ...envFile.env, ...unitEnvironment(unit) };
    expect(timeoutMs).toBeGreaterThanOrEqual(drainBoundMs(config) + EXIT_MARGIN_MS);
    // Also with the grace left at its default (the line removed from the environment file).
    expect(timeoutMs).toBeGreaterThanOrEqual(DEFAULT_SHUTDOWN_GRACE_MS + SHUTDOWN_FORCE_MARGIN_MS + EXIT_MARGIN_MS);
  });

  test('is hardened, but not with the options that would take the Bash sandbox away', () => {
    // bubblewrap needs namespaces, mount() and a fresh /proc (see the unit's comment).
    const forbidden = [
      'RestrictNamespaces',
      'SystemCallFilter',
      'PrivateUsers',
      'ProtectKernelTunables',
      'ProtectKernelLogs',
      'ProtectProc',
      'ProcSubset',
      'MemoryDenyWriteExecute',
    ];
    expect(forbidden.filter((key) => unitValues(unit, 'Service', key).length > 0)).toEqual([]);
    expect(unitValue(unit, 'Service', 'User')).toBe('durable-agent');
    const security = spawnSync(analyze, ['security', '--offline=yes', localCopy(tempDir('unit'))], {
      encoding: 'utf8',
    });
    const exposure = /Overall exposure level for .*: (\d+\.\d+)/.exec(security.stdout)?.[1];
    // 4.3 when written ("OK"); systemd's own scale: 10 is an unhardened service.
    expect(Number(exposure)).toBeLessThanOrEqual(5);
  });

  test('names only variables the worker reads, and keeps secrets out of every environment', () => {
    const reads = namesTheWorkerReads();
    const secrets = JSON.parse(fs.readFileSync(SECRETS_EXAMPLE, 'utf8')) as Record<string, string>;
    const named = [...Object.keys(unitEnvironment(unit)), ...envFile.documented, ...Object.keys(secrets)];
    expect(named.filter((name) => !reads.has(name))).toEqual([]);
    expect(Object.keys(secrets)).toContain('ANTHROPIC_API_KEY');
    expect([...Object.keys(unitEnvironment(unit)), ...envFile.documented].filter(isSecretEnvName)).toEqual([]);
    // The credential is what the command hands the worker on the descriptor it names.
    expect(unitEnvironment(unit).DURABLE_AGENT_SECRETS_FD).toBe('3');
    expect(unitValues(unit, 'Service', 'LoadCredential')).toEqual([
      'worker-secrets.json:/etc/durable-agent/worker-secrets.json',
    ]);
    expect(unitValue(unit, 'Service', 'ExecStart')).toMatch(/ 3<%d\/worker-secrets\.json'$/);
    expect(unitValues(unit, 'Service', 'EnvironmentFile')).toEqual(['/etc/durable-agent/worker.env']);
  });

  describe('its command, run as systemd runs it', () => {
    let env: TestWorkflowEnvironment;
    beforeAll(async () => {
      env = await startTemporal();
    });
    afterAll(async () => {
      await env?.teardown();
    });

    test('polls with the settings and secret it was given, and drains on SIGTERM', async () => {
      const gate = `unit-gate-${process.pid}.fifo`;
      const server = await ScriptedModelServer.start({
        name: 'deploy-unit',
        replies: [
          {
            content: [
              { type: 'text', text: 'Running it.' },
              toolUse('toolu_unit', 'Bash', { command: `cat ${gate}; echo unit-drained-5c1e` }),
            ],
          },
          textReply('Done.'),
        ],
      });
      const workspace = makeWorkspace({});
      execFileSync('mkfifo', [path.join(workspace, gate)]);
      // What systemd prepares: the state directory (also the working directory), and the
      // credential copied into a directory of the service's own (%d), readable by it alone.
      const stateDir = tempDir('state');
      const credentials = tempDir('credentials');
      const apiKey = `unit-test-key-${process.pid}-${Date.now()}`;
      fs.writeFileSync(path.join(credentials, 'worker-secrets.json'), JSON.stringify({ ANTHROPIC_API_KEY: apiKey }), {
        mode: 0o600,
      });
      const taskQueue = uniqueTaskQueue('unit');
      const unitEnv: NodeJS.ProcessEnv = {
        // systemd's own variables for a service of a user with this home.
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        HOME: stateDir,
        LANG: 'C.UTF-8',
        CREDENTIALS_DIRECTORY: credentials,
        ...unitEnvironment(unit),
        ...envFile.env,
        // This machine's places for what the files name on a real one.
        TEMPORAL_ADDRESS: env.address,
        DURABLE_AGENT_HOME: stateDir,
        DURABLE_AGENT_WORKTREES: path.join(stateDir, 'worktrees'),
        DURABLE_AGENT_TASK_QUEUE: taskQueue,
        ANTHROPIC_BASE_URL: server.url,
        // The run's temp folder (PrivateTmp), compiled sources and workflow bundle.
        TMPDIR: process.env.TMPDIR,
        DURABLE_AGENT_TS_CACHE: process.env.DURABLE_AGENT_TS_CACHE,
        DURABLE_AGENT_TS_REGISTER: process.env.DURABLE_AGENT_TS_REGISTER,
        DURABLE_AGENT_WORKFLOW_BUNDLE: process.env.DURABLE_AGENT_WORKFLOW_BUNDLE,
      };
      // ExecStart: /bin/sh -c '<command>'. %d is the credentials directory; the checkout's source
      // stands in for the install's build, so the code under test is what runs.
      const execStart = /^(\/\S+) -c '([^']*)'$/.exec(unitValue(unit, 'Service', 'ExecStart') ?? '');
      expect(execStart).not.toBeNull();
      const [, shell = '', command = ''] = execStart!;
      const local = command
        .replaceAll('%d', credentials)
        .replace(UNIT_NODE, process.execPath)
        .replace(`${INSTALL_DIR}/bin/durable-agent.js`, `-r ${TS_REGISTER} ${path.join(root, 'src/client/cli.ts')}`);
      // The working directory is the state directory, here as in the unit.
      expect(unitValue(unit, 'Service', 'WorkingDirectory')).toBe(unitEnvironment(unit).DURABLE_AGENT_HOME);
      const worker = spawn(shell, ['-c', local], {
        cwd: stateDir,
        env: unitEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      worker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      worker.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = exitedWithOutput(worker);
      let second: WorkerProcess | undefined;
      try {
        await waitFor(async () => output.includes('durable-agent worker polling') || undefined, 60_000, 'the worker');
        // The environment file's task queue, not the command's default.
        expect(output).toContain(`task queue ${taskQueue}`);
        // The shell exec'd: the process systemd signals is the worker, and its environment has no key.
        expect(fs.realpathSync(`/proc/${worker.pid}/exe`)).toBe(fs.realpathSync(process.execPath));
        expect(fs.readFileSync(`/proc/${worker.pid}/environ`, 'utf8')).not.toContain(apiKey);

        const handle = await env.client.workflow.start('agentSession', {
          taskQueue,
          workflowId: `deploy-unit-${Date.now()}`,
          // Production timeouts, as the unit's worker would have them.
          args: [sessionInput(workspace, { timeouts: undefined })],
        });
        await waitForSnapshot(handle, (s) => s.runningTools.some((t) => t.toolUseId === 'toolu_unit'), 'Bash to start');
        await waitFor(async () => liveProcesses(gate)[0], 10_000, 'the command to run');
        // The model call carried the key from the credential.
        // (The SDK sends a key as `x-api-key` or as a bearer token, by version.)
        const headers = server.requests[0]?.headers ?? {};
        expect([headers['x-api-key'], headers.authorization]).toContainEqual(expect.stringContaining(apiKey));

        const stopAt = Date.now();
        worker.kill('SIGTERM');
        await waitFor(async () => /SIGTERM: taking no new work/.test(output) || undefined, 10_000, 'the drain');
        expect(output).toMatch(
          new RegExp(
            `SIGTERM: taking no new work; 1 running activity may finish within ${envFile.env.DURABLE_AGENT_SHUTDOWN_GRACE}`,
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        expect(worker.exitCode).toBeNull();
        const gateAt = Date.now();
        openGate(path.join(workspace, gate));
        const code = await exited;
        const stoppedAt = Date.now();
        expect({ code, signal: worker.signalCode }).toEqual({ code: 0, signal: null });
        expect(stoppedAt).toBeGreaterThanOrEqual(gateAt);
        expect(stoppedAt - stopAt).toBeLessThan(systemdTimeSpanMs(unitValue(unit, 'Service', 'TimeoutStopSec') ?? ''));
        expect(output).toContain('durable-agent worker stopped');

        // The drained call's real output reached the job; another worker finishes it.
        second = await spawnWorkerProcess({ address: env.address, taskQueue, modelUrl: server.url, home: stateDir });
        const terminal = (await handle.result()) as Terminal;
        expect(terminal.reason).toBe('completed');
        const result = toolResultFor(server, 'toolu_unit');
        expect(result).toContain('unit-drained-5c1e');
        expect(result).not.toContain('interrupted');
      } finally {
        if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
        await exited;
        await second?.kill('SIGKILL');
        for (const pid of liveProcesses(gate)) process.kill(pid, 'SIGKILL');
        await server.close();
      }
    });
  });
});

/** The parts of the decoded objects the checks below read. */
interface Container {
  name: string;
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
  envFrom?: Array<{ configMapRef?: { name: string } }>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  securityContext?: { procMount?: string };
}
interface K8sObject {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    serviceName?: string;
    selector?: { matchLabels?: Record<string, string> };
    template?: {
      metadata: { labels?: Record<string, string> };
      spec: {
        terminationGracePeriodSeconds?: number;
        hostUsers?: boolean;
        containers: Container[];
        volumes?: Array<{
          name: string;
          secret?: { secretName: string };
          persistentVolumeClaim?: { claimName: string };
        }>;
      };
    };
    volumeClaimTemplates?: Array<{ metadata: { name: string } }>;
  };
}

describe('deploy/kubernetes/worker.yaml', () => {
  let check: string;
  let objects: K8sObject[];
  let examples: K8sObject[];
  const one = (kind: string) => {
    const found = objects.filter((object) => object.kind === kind);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  beforeAll(() => {
    check = installed('install-k8s-manifest-check.sh');
    objects = JSON.parse(execFileSync(check, [MANIFEST], { encoding: 'utf8' })) as K8sObject[];
    examples = JSON.parse(execFileSync(check, [SECRET_EXAMPLE], { encoding: 'utf8' })) as K8sObject[];
  }, 600_000);

  test('decodes strictly into the Kubernetes API types; a misspelt field does not', () => {
    expect(objects.map((object) => object.kind).sort()).toEqual(
      ['ConfigMap', 'PersistentVolumeClaim', 'PodDisruptionBudget', 'Service', 'StatefulSet'].sort(),
    );
    // No Secret in what is applied: `kubectl apply` again would put the example's placeholder over
    // the key created from the user's file. The example is a file of its own.
    expect(examples.map((object) => object.kind)).toEqual(['Secret']);
    const broken = path.join(tempDir('manifest'), 'worker.yaml');
    fs.writeFileSync(
      broken,
      fs
        .readFileSync(MANIFEST, 'utf8')
        .replace(/^(\s+)terminationGracePeriodSeconds:/m, '$1terminationGracePeriodSecond:'),
    );
    const result = spawnSync(check, [broken], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('unknown field "terminationGracePeriodSecond"');
  });

  test('gives the worker longer than its drain to stop', () => {
    const settings = one('ConfigMap').data ?? {};
    const graceSeconds = one('StatefulSet').spec?.template?.spec.terminationGracePeriodSeconds ?? 30;
    expect(graceSeconds * 1000).toBeGreaterThanOrEqual(drainBoundMs(settings) + EXIT_MARGIN_MS);
    expect(graceSeconds * 1000).toBeGreaterThanOrEqual(
      DEFAULT_SHUTDOWN_GRACE_MS + SHUTDOWN_FORCE_MARGIN_MS + EXIT_MARGIN_MS,
    );
  });

  test('names only variables the worker reads, and every reference resolves in the file', () => {
    const reads = namesTheWorkerReads();
    const set = one('StatefulSet');
    const pod = set.spec!.template!;
    const [worker] = pod.spec.containers;
    const configMap = one('ConfigMap');
    const [secret] = examples as [K8sObject];
    const env = Object.fromEntries((worker?.env ?? []).map((entry) => [entry.name, entry]));
    const named = [...Object.keys(env), ...Object.keys(configMap.data ?? {})];
    expect(named.filter((name) => !reads.has(name))).toEqual([]);
    expect(named.filter(isSecretEnvName)).toEqual([]);
    const secrets = JSON.parse(secret.stringData?.['worker-secrets.json'] ?? '') as Record<string, string>;
    expect(Object.keys(secrets)).toContain('ANTHROPIC_API_KEY');
    expect(Object.keys(secrets).filter((name) => !reads.has(name))).toEqual([]);

    // The settings, the secret and the volumes are the ones this file defines.
    expect(worker?.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }]);
    const volumes = Object.fromEntries((pod.spec.volumes ?? []).map((volume) => [volume.name, volume]));
    const claims = (set.spec?.volumeClaimTemplates ?? []).map((claim) => claim.metadata.name);
    const mounts = Object.fromEntries((worker?.volumeMounts ?? []).map((mount) => [mount.mountPath, mount.name]));
    expect(Object.values(mounts).filter((name) => !(name in volumes) && !claims.includes(name))).toEqual([]);
    const secretMount = Object.entries(mounts).find(([, name]) => volumes[name]?.secret)?.[0];
    expect(volumes[mounts[secretMount ?? ''] ?? '']?.secret?.secretName).toBe(secret.metadata.name);
    expect(worker?.command?.at(-1)).toBe(
      `exec node /app/bin/durable-agent.js worker 3<${secretMount}/worker-secrets.json`,
    );
    expect(env.DURABLE_AGENT_SECRETS_FD?.value).toBe('3');
    const workspaceClaim = Object.values(volumes).find((volume) => volume.persistentVolumeClaim);
    expect(workspaceClaim?.persistentVolumeClaim?.claimName).toBe(one('PersistentVolumeClaim').metadata.name);

    // Workspace affinity: each pod keeps its host id (its stable name) and its own data volume.
    expect(env.DURABLE_AGENT_HOST_ID?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(claims).toContain(mounts[env.DURABLE_AGENT_HOME?.value ?? '']);
    expect(set.spec?.serviceName).toBe(one('Service').metadata.name);
    expect(pod.metadata.labels).toMatchObject(set.spec?.selector?.matchLabels ?? { missing: 'selector' });
    // The sandbox's needs (see the file's header): a user namespace and an unmasked /proc.
    expect(pod.spec.hostUsers).toBe(false);
    expect(worker?.securityContext?.procMount).toBe('Unmasked');
  });
});
