import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { probeSandbox } from '../../src/activities/sandbox/probe';
import { executeTool } from '../../src/activities/tools/index';
import {
  fixtureEngine,
  livingSleeps,
  makeSandboxFixture,
  sandboxContext,
  sleepsReach,
  startLocalServer,
  watchSleeps,
  type SandboxFixture,
} from './support';

/**
 * Bash inside the real bubblewrap sandbox: what a command can see, read, write and reach, and
 * that nothing it starts outlives an abort or a timeout. `bash scripts/setup.sh` installs bwrap.
 */
let fixture: SandboxFixture;
beforeEach(() => {
  fixture = makeSandboxFixture();
});
afterEach(() => fixture.cleanup());

const bash = (ctx: ReturnType<typeof sandboxContext>, command: string, timeout?: number) =>
  executeTool('Bash', { command, ...(timeout ? { timeout } : {}) }, ctx);

beforeAll(async () => {
  const availability = await probeSandbox('bwrap');
  if (!availability.available) throw new Error(`these tests need bubblewrap: ${availability.reason}`);
});

describe('the sandbox', () => {
  it('has its own PID namespace: no worker process, no host /proc entry', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture));
    const listed = await bash(ctx, 'ls /proc | grep -E "^[0-9]+$" | sort -n | tr "\\n" " "');
    expect(ctx.starts).toEqual([{ sandboxed: true }]);
    const pids = listed.content.trim().split(' ').map(Number);
    expect(pids.length).toBeLessThan(10);
    expect(pids).not.toContain(process.pid);
    const worker = await bash(ctx, `cat /proc/${process.pid}/environ; cat /proc/$PPID/cmdline | tr '\\0' ' '`);
    expect(worker.content).toContain(`/proc/${process.pid}/environ: No such file or directory`);
    // Its parent is the sandbox's own init (bwrap), not the worker.
    expect(worker.content).not.toContain('node');
  });

  it('writes only to the workspace and its private temp folder', async () => {
    const engine = fixtureEngine(fixture);
    const ctx = sandboxContext(fixture, engine);
    const result = await bash(
      ctx,
      [
        'touch ws-file && echo ws-ok',
        'echo kept > "$TMPDIR/note" && echo tmp-ok',
        `touch ${fixture.outside}/x`,
        'touch "$HOME/x"',
        'touch /etc/x',
        `touch ${fixture.home}/.gitconfig`,
      ].join('; '),
    );
    expect(result.content).toContain('ws-ok');
    expect(result.content).toContain('tmp-ok');
    for (const target of [`${fixture.outside}/x`, '/etc/x', `${fixture.home}/.gitconfig`]) {
      expect(result.content).toContain(`touch: cannot touch '${target}': Read-only file system`);
    }
    // The home itself is hidden: an empty folder nothing can be made in.
    expect(result.content).toContain(`touch: cannot touch '${fixture.home}/x': Permission denied`);
    expect(result.content).toContain('(Sandbox: commands may write only inside the workspace and $TMPDIR.');
    expect(fs.existsSync(path.join(fixture.workspace, 'ws-file'))).toBe(true);
    expect(fs.existsSync(path.join(fixture.outside, 'x'))).toBe(false);

    // The temp folder is the job's: kept across its calls, unseen by another job.
    expect((await bash(ctx, 'cat "$TMPDIR/note"; echo "$TMPDIR"')).content).toBe('kept\n/tmp');
    const other = sandboxContext(fixture, engine);
    expect((await bash(other, 'cat /tmp/note')).content).toContain('No such file or directory');
    // Nor under its host path, where the temp root is not under /tmp (TMPDIR set elsewhere).
    const probe = await bash(
      other,
      `ls ${fixture.tempRoot}/durable-agent-*; cat ${fixture.tempRoot}/durable-agent-*/*/note`,
    );
    expect(probe.content).not.toContain('kept');
    expect(probe.content).toContain('Permission denied');
    // The host's /tmp is not visible at all.
    const marker = fs.mkdtempSync(path.join(os.tmpdir(), 'host-tmp-marker-'));
    try {
      expect((await bash(ctx, `ls ${marker}`)).content).toContain('No such file or directory');
    } finally {
      fs.rmSync(marker, { recursive: true, force: true });
    }
  });

  it('keeps the protected workspace files read-only', async () => {
    for (const dir of ['.git/hooks', '.claude/hooks', '.vscode', '.durable-agent/journal']) {
      fs.mkdirSync(path.join(fixture.workspace, dir), { recursive: true });
    }
    fs.writeFileSync(path.join(fixture.workspace, '.git/config'), '[core]\n');
    fs.writeFileSync(path.join(fixture.workspace, '.claude/settings.json'), '{}');
    const ctx = sandboxContext(fixture, fixtureEngine(fixture));
    const result = await bash(
      ctx,
      [
        'touch .git/hooks/pre-commit',
        'echo "[core] fsmonitor = evil" >> .git/config',
        'echo \'{"sandbox":{"enabled":false}}\' > .claude/settings.json',
        'touch .vscode/tasks.json',
        'touch .durable-agent/journal/forged.json',
        // The whole of .claude: settings name hook scripts there, and Claude Code runs them later.
        'touch .claude/hooks/format.sh',
        'touch elsewhere.txt && echo other-files-ok',
      ].join('; '),
    );
    expect(result.content.match(/Read-only file system/g)).toHaveLength(6);
    expect(result.content).toContain('other-files-ok');
    expect(fs.readFileSync(path.join(fixture.workspace, '.claude/settings.json'), 'utf8')).toBe('{}');
  });

  it('cannot read any credential place, the data folder or the TLS files', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture));
    for (const { file, secret } of fixture.credentials) {
      const result = await bash(ctx, `cat '${file}'`);
      expect(result.isError).toBe(true);
      expect(result.content).not.toContain(secret);
      expect(result.content).toMatch(/Permission denied|No such file or directory/);
    }
    const everything = await bash(
      ctx,
      `grep -r -a SECRET '${fixture.home}' '${fixture.dataHome}' '${fixture.root}/tls' 2>&1`,
    );
    expect(everything.content).not.toContain('SECRET-');
    // Not everything in the home is hidden: the user's git identity is still there.
    expect((await bash(ctx, 'git config --global user.name')).content).toBe('Sandbox Test');
  });

  it('applies the job policy: denyRead hides, allowRead shows again, allowWrite and denyWrite', async () => {
    fs.mkdirSync(path.join(fixture.workspace, 'secrets'));
    fs.writeFileSync(path.join(fixture.workspace, 'secrets', 'token'), 'ws-secret\n');
    fs.writeFileSync(path.join(fixture.workspace, 'locked.txt'), 'locked\n');
    fs.writeFileSync(path.join(fixture.home, '.ssh', 'config'), 'Host example\n');
    // (~/.cache holds a hidden token already: a writable folder keeps what is hidden in it hidden.)
    const cache = path.join(fixture.home, '.cache');
    fs.mkdirSync(cache, { recursive: true });
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), {
      enabled: true,
      source: 'test',
      filesystem: {
        denyRead: ['./secrets'],
        allowRead: ['~/.ssh/config'],
        allowWrite: ['~/.cache'],
        denyWrite: ['locked.txt'],
      },
    });
    const result = await bash(
      ctx,
      'cat secrets/token; cat ~/.ssh/config; cat ~/.ssh/id_ed25519; touch ~/.cache/ok && echo cache-ok; echo x >> locked.txt; cat ~/.cache/huggingface/token',
    );
    expect(result.content).not.toContain('SECRET');
    expect(result.content).not.toContain('ws-secret');
    expect(result.content).toContain('Host example');
    expect(result.content).toContain('id_ed25519: No such file or directory');
    expect(result.content).toContain('cache-ok');
    expect(result.content).toContain('locked.txt: Read-only file system');
  });

  it('has no network unless the policy allows every host', async () => {
    const server = await startLocalServer();
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${server.port} && cat <&3`;
    try {
      const closed = await bash(sandboxContext(fixture, fixtureEngine(fixture)), connect);
      expect(closed.isError).toBe(true);
      expect(closed.content).not.toContain('hello-from-host');

      const named = await bash(
        sandboxContext(fixture, fixtureEngine(fixture), {
          enabled: true,
          source: 'test',
          network: { allowedDomains: ['github.com'] },
        }),
        connect,
      );
      expect(named.isError).toBe(true);
      expect(named.content).toContain('allowedDomains github.com cannot be enforced by host name');

      const open = await bash(
        sandboxContext(fixture, fixtureEngine(fixture), {
          enabled: true,
          source: 'test',
          network: { allowedDomains: ['*'] },
        }),
        connect,
      );
      expect(open).toEqual({ isError: false, content: 'hello-from-host' });
    } finally {
      await server.close();
    }
  });

  it('on timeout kills everything the command started, even what left its process group', async () => {
    const marker = `${Date.now() % 100000}.${process.pid}`;
    const ctx = sandboxContext(fixture, fixtureEngine(fixture));
    const started = Date.now();
    // All three ran at once before the timeout (2 s: a loaded machine may take a second to start them).
    const watch = watchSleeps(`100${marker}`);
    const result = await bash(ctx, `sleep 100${marker}1 & setsid sleep 100${marker}2 & sleep 100${marker}3`, 2000);
    expect(watch.stop()).toBe(3);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(result.content).toBe('Exit code 137\nCommand timed out after 2s');
    expect(livingSleeps(`100${marker}`)).toEqual([]);
  });

  it('on abort kills everything and rejects with an AbortError', async () => {
    const marker = `${Date.now() % 100000}.${process.pid}`;
    const controller = new AbortController();
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), undefined, { signal: controller.signal });
    const pending = bash(ctx, `sleep 100${marker}1 & setsid sleep 100${marker}2 & touch started; sleep 100${marker}3`);
    const startedFile = path.join(fixture.workspace, 'started');
    for (let i = 0; i < 200 && !fs.existsSync(startedFile); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await sleepsReach(`100${marker}`, 3)).toBe(3);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(livingSleeps(`100${marker}`)).toEqual([]);
  });

  it('background jobs end with the command instead of outliving it', async () => {
    const marker = `${Date.now() % 100000}.${process.pid}`;
    const ctx = sandboxContext(fixture, fixtureEngine(fixture));
    const started = Date.now();
    expect(await bash(ctx, `sleep 100${marker} & echo started`)).toEqual({ isError: false, content: 'started' });
    // Not waited for: the sleep would take a day; starting the sandbox may take seconds under load.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(livingSleeps(`100${marker}`)).toEqual([]);
  });
});

describe('without a sandbox', () => {
  it('refuses a job that needs one, saying what is missing, where, and the two fixes', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture, '/nonexistent/bwrap'));
    const result = await bash(ctx, 'touch should-not-exist');
    expect(result.isError).toBe(true);
    expect(result.content).toContain('Bash did not run: this job requires the OS sandbox (test)');
    expect(result.content).toContain(`worker ${os.hostname()}`);
    expect(result.content).toContain('bubblewrap is not installed (no executable "/nonexistent/bwrap")');
    expect(result.content).toContain('bash scripts/setup.sh');
    expect(result.content).toContain('--no-sandbox');
    expect(result.content).toContain('"sandbox": { "enabled": false }');
    expect(ctx.starts).toEqual([]);
    expect(fs.existsSync(path.join(fixture.workspace, 'should-not-exist'))).toBe(false);
  });

  it('runs a job that opted out, unsandboxed, and says so', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture, '/nonexistent/bwrap'), {
      enabled: false,
      source: '--no-sandbox',
    });
    const result = await bash(ctx, `test -e /proc/${process.pid} && echo worker-visible; echo "$TMPDIR"`);
    expect(ctx.starts).toEqual([{ sandboxed: false }]);
    const [visible, tmpdir] = result.content.split('\n');
    expect(visible).toBe('worker-visible');
    expect(tmpdir).toMatch(new RegExp(`^${fixture.tempRoot}/durable-agent-\\d+/[0-9a-f]{16}$`));
    expect(fs.statSync(tmpdir!).mode & 0o777).toBe(0o700);
  });

  it('probes once per bwrap and explains a bwrap that cannot start here', async () => {
    const fake = path.join(fixture.root, 'bwrap');
    fs.writeFileSync(
      fake,
      '#!/bin/sh\n[ "$1" = --version ] && echo "bubblewrap 0.0.1" && exit 0\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
    );
    fs.chmodSync(fake, 0o755);
    const first = await probeSandbox(fake);
    expect(first).toEqual({
      available: false,
      bwrap: fake,
      reason: `bubblewrap 0.0.1 at ${fake} cannot start a sandbox here: bwrap: No permissions to create new namespace`,
    });
    expect(await probeSandbox(fake)).toBe(first);
  });
});
