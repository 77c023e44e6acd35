import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runBash, timeoutText } from '../../src/activities/tools/bash';
import { withTimeoutClamped } from '../../src/shared/tools/bash';
import { buildToolEnv, defaultBashEnv, executeTool, type ToolContext } from '../../src/activities/tools/index';
import { toolContext } from './support/context';

let workspace: string;
let ctx: ToolContext;
const bash = (input: unknown) => executeTool('Bash', input, ctx);

/** Dead means gone, or a zombie waiting for a reaper: either way it runs nothing. */
function isDead(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  try {
    const state = readFileSync(stat, 'utf8').split(') ')[1]?.[0];
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-bash-')));
  ctx = toolContext(workspace);
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('Bash', () => {
  it('runs in the workspace and combines stdout and stderr', async () => {
    expect(await bash({ command: 'pwd' })).toEqual({ isError: false, content: workspace });
    const both = await bash({ command: 'echo to-out; echo to-err >&2', description: 'Print twice' });
    expect(both.isError).toBe(false);
    expect(both.content.split('\n').sort()).toEqual(['to-err', 'to-out']);
    expect(await bash({ command: 'true' })).toEqual({ isError: false, content: '(Bash completed with no output)' });
  });

  it('reports a non-zero exit code as an error: "Exit code N" first, then the output, as Claude Code does', async () => {
    expect(await bash({ command: 'echo partial; exit 3' })).toEqual({ isError: true, content: 'Exit code 3\npartial' });
    expect(await bash({ command: 'echo out; echo err >&2; exit 5' })).toEqual({
      isError: true,
      content: 'Exit code 5\nout\nerr',
    });
    // The shell's status for a command a signal killed (128 + n), as for one that exits so itself.
    expect(await bash({ command: 'echo before; kill -TERM $$' })).toEqual({
      isError: true,
      content: 'Exit code 143\nbefore',
    });
    expect(await bash({ command: 'exit 130' })).toEqual({ isError: true, content: 'Exit code 130' });
  });

  it('lowers a timeout above the maximum to it, as Claude Code does, rather than refusing the call', async () => {
    expect(await bash({ command: 'echo x', timeout: 99_999_999 })).toEqual({ isError: false, content: 'x' });
    expect(await bash({ command: 'echo y', timeout: '700000' })).toEqual({ isError: false, content: 'y' });
    expect(withTimeoutClamped({ command: 'x', timeout: 99_999_999 })).toEqual({ command: 'x', timeout: 600_000 });
    expect(withTimeoutClamped({ command: 'x', timeout: '700000' })).toEqual({ command: 'x', timeout: 600_000 });
    // Anything else is left to the schema.
    for (const input of [{ command: 'x', timeout: 5000 }, { command: 'x', timeout: 'soon' }, { command: 'x' }, 'x'])
      expect(withTimeoutClamped(input)).toBe(input);
  });

  it('words a timeout as Claude Code does: whole seconds, then minutes and seconds', () => {
    expect([500, 1000, 1500, 59_999, 60_000, 61_500, 119_600, 120_000, 600_000].map(timeoutText)).toEqual([
      '0s',
      '1s',
      '1s',
      '59s',
      '1m 0s',
      '1m 2s',
      '2m 0s',
      '2m 0s',
      '10m 0s',
    ]);
  });

  it('shows output of up to 30000 characters in full', async () => {
    expect(await bash({ command: "head -c 30000 /dev/zero | tr '\\0' a" })).toEqual({
      isError: false,
      content: 'a'.repeat(30_000),
    });
  });

  it('saves longer output whole and shows a 2KB preview and the path, as Claude Code does', async () => {
    const result = await bash({ command: 'seq 1 100000' });
    const whole = Array.from({ length: 100_000 }, (_, i) => String(i + 1)).join('\n');
    const match =
      /^<persisted-output>\nOutput too large \(575\.1KB\)\. Full output saved to: (\.durable-agent\/tool-results\/Bash-[0-9a-f]{16}\.txt)\n\nPreview \(first 2KB\):\n([^]*)\n\.\.\.\n<\/persisted-output>$/.exec(
        result.content,
      );
    expect(result.isError).toBe(false);
    expect(match).not.toBeNull();
    // The preview ends at a line break, as Claude Code's does: 1..527 is the first 1,999 characters.
    expect(match![2]).toBe(whole.slice(0, whole.indexOf('\n528\n')));
    // Past the first 120 KB the output is kept too: the file has all of it, and Read can page through it.
    expect(await readFile(path.join(workspace, match![1]!), 'utf8')).toBe(whole);
    expect((await executeTool('Read', { file_path: match![1], offset: 99_999, limit: 5 }, ctx)).content).toBe(
      ' 99999\t99999\n100000\t100000',
    );
  });

  it("cuts a failed command's long output at 30000 characters and says how much was cut", async () => {
    const result = await bash({ command: "head -c 50000 /dev/zero | tr '\\0' a; exit 1" });
    expect(result).toEqual({
      isError: true,
      content: `Exit code 1\n${'a'.repeat(30_000)}\n... [output truncated: 20000 more characters not shown]`,
    });
  });

  it('kills the whole process group on timeout', async () => {
    const started = Date.now();
    const result = await bash({ command: 'sleep 300 & echo $!; sleep 300', timeout: 500 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.isError).toBe(true);
    const [code, timedOut, echoed] = result.content.split('\n');
    expect([code, timedOut]).toEqual(['Exit code 137', 'Command timed out after 0s']);
    const pid = Number(echoed);
    expect(pid).toBeGreaterThan(0);
    expect(isDead(pid)).toBe(true);
  });

  it('on abort, kills the process group and then rejects with an AbortError', async () => {
    const controller = new AbortController();
    const pending = executeTool(
      'Bash',
      { command: 'sleep 300 & echo $! > child.pid; sleep 300' },
      { ...ctx, signal: controller.signal },
    );
    const pidFile = path.join(workspace, 'child.pid');
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const pid = Number(await readFile(pidFile, 'utf8'));
    expect(isDead(pid)).toBe(false);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(isDead(pid)).toBe(true);
  });

  it.each(['abort', 'timeout'] as const)(
    'on %s, also kills what left the group: setsid, and a daemon double fork',
    async (how) => {
      const controller = new AbortController();
      const pending = executeTool(
        'Bash',
        {
          command:
            'read -r _ _ _ _ g _ < /proc/$$/stat; echo $g > g.pid; setsid sleep 300 & echo $! > a.pid; ' +
            "( setsid sh -c 'sleep 301 & echo $! > b.pid; wait' & ); sleep 300",
          ...(how === 'timeout' ? { timeout: 1500 } : {}),
        },
        { ...ctx, signal: controller.signal },
      );
      const pids: number[] = [];
      for (const file of ['g.pid', 'a.pid', 'b.pid']) {
        const pidFile = path.join(workspace, file);
        for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((resolve) => setTimeout(resolve, 20));
        await new Promise((resolve) => setTimeout(resolve, 50));
        pids.push(Number(await readFile(pidFile, 'utf8')));
      }
      const group = pids.shift();
      // Both really left the command's process group.
      for (const pid of pids) {
        expect(isDead(pid)).toBe(false);
        const pgrp = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[2]);
        expect(pgrp).not.toBe(group);
      }
      try {
        if (how === 'abort') {
          controller.abort();
          await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
        } else {
          expect((await pending).content).toBe('Exit code 137\nCommand timed out after 1s');
        }
        for (const pid of pids) expect(isDead(pid)).toBe(true);
      } finally {
        for (const pid of pids) if (!isDead(pid)) process.kill(pid, 'SIGKILL');
      }
    },
  );

  it('does not wait for a background job that keeps the pipes open', async () => {
    const started = Date.now();
    const result = await bash({ command: 'sleep 30 & echo started' });
    expect(result).toEqual({ isError: false, content: 'started' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('builds the default environment from an allowlist and never passes a credential', async () => {
    const names = [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'TEMPORAL_API_KEY',
      'GITHUB_TOKEN',
      'MY_SECRET',
      'OPENAI_API_KEY',
    ];
    const extra = ['DURABLE_AGENT_HARMLESS', 'DURABLE_AGENT_LISTED', 'DURABLE_AGENT_TOOL_ENV', 'TEMPORAL_TLS_KEY'];
    const saved = [...names, ...extra].map((name) => process.env[name]);
    for (const name of names) process.env[name] = `value-of-${name}`;
    process.env.DURABLE_AGENT_HARMLESS = 'unlisted';
    process.env.DURABLE_AGENT_LISTED = 'listed';
    process.env.TEMPORAL_TLS_KEY = '/etc/worker/tls.key';
    // Listing a credential does not let it through.
    process.env.DURABLE_AGENT_TOOL_ENV = 'DURABLE_AGENT_LISTED, GITHUB_TOKEN';
    try {
      const result = await bash({ command: 'env' });
      for (const name of names) {
        expect(result.content).not.toContain(name);
        expect(result.content).not.toContain(`value-of-${name}`);
      }
      expect(result.content).not.toContain('DURABLE_AGENT_HARMLESS');
      expect(result.content).not.toContain('tls.key');
      expect(result.content).toContain('DURABLE_AGENT_LISTED=listed');
      expect(result.content).toMatch(/^PATH=/m);
      expect(result.content).toMatch(/^HOME=/m);
      expect(result.content).toContain('GIT_CONFIG_KEY_0=core.fsmonitor');
      expect(defaultBashEnv({ A_TOKEN: 'x', PATH: '/bin', NODE_OPTIONS: '--inspect' })).toEqual({ PATH: '/bin' });
      expect(buildToolEnv({ LC_ALL: 'C', LANG: 'en', FOO: 'x', FOO_TOKEN: 'y' }, ['FOO', 'FOO_TOKEN'])).toEqual({
        LC_ALL: 'C',
        LANG: 'en',
        FOO: 'x',
      });
    } finally {
      [...names, ...extra].forEach((name, i) => {
        if (saved[i] === undefined) delete process.env[name];
        else process.env[name] = saved[i];
      });
    }
  });

  it('uses the environment the caller gives', async () => {
    const result = await bash({ command: 'echo "$ONLY_HERE:${HOME:-unset}"' });
    expect(result.content).toBe(':' + (process.env.HOME ?? 'unset'));
    ctx = { ...ctx, env: { PATH: process.env.PATH, ONLY_HERE: 'yes' } };
    expect((await bash({ command: 'echo "$ONLY_HERE:${HOME:-unset}"' })).content).toBe('yes:unset');
  });

  it('heartbeats while the command runs', async () => {
    const beats: unknown[] = [];
    const result = await runBash({ command: 'echo tick; sleep 0.4' }, { ...ctx, heartbeat: (d) => beats.push(d) }, 50);
    expect(result.content).toBe('tick');
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats[beats.length - 1]).toEqual({ tool: 'Bash', outputBytes: 5 });
  });
});
