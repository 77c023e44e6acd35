import Anthropic from '@anthropic-ai/sdk';
import { MockActivityEnvironment } from '@temporalio/testing';
import fs from 'node:fs';
import path from 'node:path';
import { createActivities } from '../../src/activities';
import { runHooks } from '../../src/activities/hooks';
import { FileContentStore } from '../../src/activities/store/content-store';
import { hookStdin, type HookCommand, type RunHookEvent, type RunHooksResult } from '../../src/shared/hooks';
import type { ToolResultBlock } from '../../src/shared/messages';
import type { JobSandbox } from '../../src/shared/sandbox';
import { spawnerPid, stopSpawner } from '../../src/worker/spawner';
import {
  fixtureEngine,
  livingSleeps,
  makeSandboxFixture,
  sleepsReach,
  watchSleeps,
  type SandboxFixture,
} from '../sandbox/support';

/**
 * The runHooks activity running real hook scripts inside the real bubblewrap sandbox (installed by
 * `bash scripts/setup.sh`), with the fake home full of credentials the sandbox tests use.
 */
let fixture: SandboxFixture;
let storeDir: string;
beforeEach(() => {
  fixture = makeSandboxFixture();
  storeDir = path.join(fixture.dataHome, 'store');
});
afterEach(() => fixture.cleanup());

/** A hook script in the workspace's `.claude/hooks`, as Claude Code's docs suggest; its command. */
function script(name: string, body: string): string {
  const dir = path.join(fixture.workspace, '.claude', 'hooks');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  return `"$CLAUDE_PROJECT_DIR"/.claude/hooks/${name}`;
}

const hook = (command: string, timeoutSec?: number): HookCommand => ({
  command,
  source: '/home/me/.claude/settings.json',
  ...(timeoutSec !== undefined ? { timeoutSec } : {}),
});

const SESSION = { sessionId: 'job-1', permissionMode: 'default' };
function stdinFor(event: RunHookEvent): Record<string, unknown> {
  const cwd = fixture.workspace;
  switch (event) {
    case 'PreToolUse':
      return hookStdin(
        { ...SESSION, cwd },
        { event, toolName: 'Bash', toolInput: { command: 'ls' }, toolUseId: 'toolu_1' },
      );
    case 'PostToolUse':
      return hookStdin(
        { ...SESSION, cwd },
        { event, toolName: 'Bash', toolInput: { command: 'ls' }, toolUseId: 'toolu_1' },
      );
    case 'Stop':
      return hookStdin({ ...SESSION, cwd }, { event, stopHookActive: false, lastAssistantMessage: 'Done.' });
  }
}

function activityEnv(): MockActivityEnvironment {
  return new MockActivityEnvironment({ activityType: 'runHooks', attempt: 1, startToCloseTimeoutMs: 120_000 });
}

async function run(
  event: RunHookEvent,
  hooks: HookCommand[],
  options: {
    sandbox?: JobSandbox;
    bwrap?: string;
    /** 'worker': none given, so the activities build it from this process's environment. */
    toolEnv?: NodeJS.ProcessEnv | 'worker';
    toolResponseRef?: string;
  } = {},
): Promise<RunHooksResult> {
  const activities = createActivities({
    anthropic: () => new Anthropic({ apiKey: 'unused' }),
    storeDir,
    ...(options.toolEnv !== 'worker'
      ? { toolEnv: options.toolEnv ?? { PATH: process.env.PATH, HOME: fixture.home, LANG: 'C.UTF-8' } }
      : {}),
    sandbox: fixtureEngine(fixture, options.bwrap),
  });
  return (await activityEnv().run(activities.runHooks, {
    sessionKey: 'job-1',
    workspace: fixture.workspace,
    event,
    hooks,
    stdin: stdinFor(event),
    ...(options.toolResponseRef ? { toolResponseRef: options.toolResponseRef } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  })) as RunHooksResult;
}

const ranOnce = (result: RunHooksResult, exitCode: number | null) =>
  expect(result.ran).toEqual([{ command: expect.any(String), exitCode, timedOut: false, ms: expect.any(Number) }]);

describe('runHooks: what a hook decides', () => {
  it('exit 0 with a PreToolUse deny', async () => {
    const deny = script(
      'deny.sh',
      `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm here"}}'`,
    );
    const result = await run('PreToolUse', [hook(deny)]);
    expect(result).toMatchObject({ outcome: 'deny', reason: 'no rm here', userMessages: [] });
    ranOnce(result, 0);
  });

  it('exit 0 with a PreToolUse ask', async () => {
    const ask = script(
      'ask.sh',
      `echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"sure?"}}'`,
    );
    expect(await run('PreToolUse', [hook(ask)])).toMatchObject({ outcome: 'ask', reason: 'sure?' });
  });

  it('exit 0 with a Stop block', async () => {
    const block = script('block.sh', `echo '{"decision":"block","reason":"run the tests first"}'`);
    expect(await run('Stop', [hook(block)])).toMatchObject({ outcome: 'block', reason: 'run the tests first' });
  });

  it('exit 0 with PostToolUse additionalContext and a systemMessage', async () => {
    const context = script(
      'context.sh',
      `echo '{"systemMessage":"formatted","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"3 lint warnings"}}'`,
    );
    expect(await run('PostToolUse', [hook(context)])).toMatchObject({
      outcome: 'none',
      additionalContext: '3 lint warnings',
      userMessages: [expect.stringContaining(': formatted')],
    });
  });

  it('exit 0 with continue false', async () => {
    const stop = script('stop.sh', `echo '{"continue":false,"stopReason":"Build failed, fix it first"}'`);
    expect(await run('PostToolUse', [hook(stop)])).toMatchObject({
      outcome: 'none',
      preventContinuation: { stopReason: 'Build failed, fix it first' },
    });
  });

  it('exit 0 with plain text: for the user only', async () => {
    const chatty = script('chatty.sh', 'echo "all good"');
    expect(await run('Stop', [hook(chatty)])).toMatchObject({
      outcome: 'none',
      userMessages: [expect.stringMatching(/chatty\.sh": all good$/)],
    });
  });

  it('exit 2: stderr is the reason fed to the model', async () => {
    const two = script('two.sh', 'echo "ignored stdout"; echo "tests fail: 3" >&2; exit 2');
    expect(await run('Stop', [hook(two)])).toMatchObject({ outcome: 'block', reason: 'tests fail: 3' });
    expect(await run('PreToolUse', [hook(two)])).toMatchObject({ outcome: 'deny', reason: 'tests fail: 3' });
    const post = await run('PostToolUse', [hook(two)]);
    expect(post).toMatchObject({ outcome: 'block', reason: 'tests fail: 3' });
    ranOnce(post, 2);
  });

  it('exit 1: a non-blocking error shown to the user', async () => {
    const one = script('one.sh', 'echo "jq: command not found" >&2; exit 1');
    const result = await run('PreToolUse', [hook(one)]);
    expect(result).toEqual({
      outcome: 'none',
      userMessages: [`PreToolUse hook ${JSON.stringify(one)} failed with exit code 1: jq: command not found`],
      ran: [{ command: one, exitCode: 1, timedOut: false, ms: expect.any(Number) }],
    });
  });

  it('caps what a chatty hook writes', async () => {
    const flood = script('flood.sh', 'head -c 300000 /dev/zero | tr "\\0" x >&2; exit 2');
    const result = await run('Stop', [hook(flood)]);
    expect(result.reason?.length).toBeLessThan(10_100);
    expect(result.reason).toContain('characters left out]');
  });
});

describe('runHooks: how hooks run', () => {
  it('gives each hook the documented stdin fields, tool_response from the content store', async () => {
    const store = new FileContentStore(storeDir);
    const block: ToolResultBlock = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt\nb.txt' };
    const ref = await store.put(block);
    const echo = script('echo-stdin.sh', 'cat >&2; exit 2');
    const result = await run('PostToolUse', [hook(echo)], { toolResponseRef: ref });
    expect(JSON.parse(result.reason ?? '')).toEqual({
      session_id: 'job-1',
      transcript_path: '',
      cwd: fixture.workspace,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_1',
      tool_response: 'a.txt\nb.txt',
    });
    const stop = await run('Stop', [hook(echo)]);
    expect(JSON.parse(stop.reason ?? '')).toMatchObject({ hook_event_name: 'Stop', stop_hook_active: false });
  });

  it('runs in the workspace with CLAUDE_PROJECT_DIR, in the sandbox', async () => {
    const where = script('where.sh', 'echo "$PWD|$CLAUDE_PROJECT_DIR|$(ls /proc | grep -cE "^[0-9]+$")" >&2; exit 2');
    const [cwd, projectDir, processes] = ((await run('Stop', [hook(where)])).reason ?? '').split('|');
    expect(cwd).toBe(fixture.workspace);
    expect(projectDir).toBe(fixture.workspace);
    // Its own PID namespace: the host's processes are out of sight.
    expect(Number(processes)).toBeLessThan(10);
  });

  it('cannot read what the sandbox hides', async () => {
    const key = fixture.credentials.find((c) => c.file.endsWith('.ssh/id_ed25519'));
    const thief = script(
      'thief.sh',
      `cat "$HOME/.ssh/id_ed25519" ${key?.file ?? ''} ${fixture.dataHome}/temporal.db >&2; exit 2`,
    );
    const result = await run('PreToolUse', [hook(thief)]);
    expect(result.outcome).toBe('deny');
    const text = JSON.stringify(result);
    for (const { secret } of fixture.credentials) expect(text).not.toContain(secret);
    expect(result.reason).toMatch(/Permission denied|No such file/);
  });

  it('a script under ~/.claude is hidden by the sandbox: the user is told, and allowRead shows it', async () => {
    const dir = path.join(fixture.home, '.claude', 'hooks');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'mine.sh'), '#!/bin/bash\necho "mine ran"\n', { mode: 0o755 });
    const mine = hook(path.join(dir, 'mine.sh'));
    const hidden = await run('Stop', [mine]);
    expect(hidden.ran[0]?.exitCode).toBe(127);
    expect(hidden.userMessages).toEqual([expect.stringContaining('hooks run in the same OS sandbox as Bash')]);
    const shown = await run('Stop', [mine], {
      sandbox: { enabled: true, source: 'test', filesystem: { allowRead: ['~/.claude/hooks'] } },
    });
    expect(shown.userMessages).toEqual([expect.stringMatching(/mine\.sh": mine ran$/)]);
  });

  it('gets no secret from the worker environment', async () => {
    const saved = { ...process.env };
    process.env.ANTHROPIC_API_KEY = 'sk-ant-test-hook-secret';
    process.env.DEPLOY_TOKEN = 'deploy-token-hook-secret';
    try {
      const dump = script('env.sh', 'env >&2; exit 2');
      const result = await run('Stop', [hook(dump)], { toolEnv: 'worker' });
      expect(result.reason).toContain(`CLAUDE_PROJECT_DIR=${fixture.workspace}`);
      expect(result.reason).not.toContain('hook-secret');
    } finally {
      process.env = saved;
    }
  });

  it('runs identical commands once', async () => {
    const count = script('count.sh', 'echo x >> "$CLAUDE_PROJECT_DIR/count"');
    const result = await run('PostToolUse', [hook(count), hook(count, 5)]);
    expect(result.ran).toHaveLength(1);
    expect(fs.readFileSync(path.join(fixture.workspace, 'count'), 'utf8')).toBe('x\n');
  });

  it('runs an event’s hooks in parallel and combines them (deny wins)', async () => {
    const slowAsk = script('slow-ask.sh', `sleep 3; echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`);
    const slowDeny = script('slow-deny.sh', 'sleep 3; echo "not on main" >&2; exit 2');
    const slowAllow = script('slow-allow.sh', `sleep 3; echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`);
    const started = Date.now();
    const result = await run('PreToolUse', [hook(slowAsk), hook(slowDeny), hook(slowAllow)]);
    // Side by side: about 3 s, where one after another would take 9 (4 s of margin for a loaded machine).
    expect(Date.now() - started).toBeLessThan(7000);
    expect(result).toMatchObject({ outcome: 'deny', reason: 'not on main' });
    expect(result.ran.map((r) => r.exitCode)).toEqual([0, 2, 0]);
  });

  it('on timeout kills the hook and everything it started; the timeout is a non-blocking error', async () => {
    const marker = `${Date.now() % 100000}.${process.pid}`;
    const spawner = script('spawner.sh', `sleep 100${marker}1 & setsid sleep 100${marker}2 & sleep 100${marker}3`);
    const started = Date.now();
    // All three ran at once before the timeout (2 s: a loaded machine may take a second to start them).
    const watch = watchSleeps(`100${marker}`);
    const result = await run('PreToolUse', [hook(spawner, 2)]);
    expect(watch.stop()).toBe(3);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(result.outcome).toBe('none');
    expect(result.ran).toEqual([{ command: spawner, exitCode: null, timedOut: true, ms: expect.any(Number) }]);
    expect(result.userMessages).toEqual([
      expect.stringContaining('timed out after 2 s; it and every process it started were killed'),
    ]);
    expect(livingSleeps(`100${marker}`)).toEqual([]);
  });

  it('on cancellation kills every hook before it rejects, heartbeating meanwhile', async () => {
    const marker = `${Date.now() % 100000}.${process.pid}`;
    const a = script('a.sh', `sleep 100${marker}1 & touch "$CLAUDE_PROJECT_DIR/started"; sleep 100${marker}2`);
    const b = script('b.sh', `setsid sleep 100${marker}3`);
    const env = activityEnv();
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    const deps = {
      store: new FileContentStore(storeDir),
      toolEnv: { PATH: process.env.PATH, HOME: fixture.home },
      sandbox: fixtureEngine(fixture),
      heartbeatMs: 100,
    };
    const pending = env.run(runHooks, deps, {
      sessionKey: 'job-1',
      workspace: fixture.workspace,
      event: 'Stop' as const,
      hooks: [hook(a), hook(b)],
      stdin: stdinFor('Stop'),
    });
    const startedFile = path.join(fixture.workspace, 'started');
    for (let i = 0; i < 200 && !fs.existsSync(startedFile); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await sleepsReach(`100${marker}`, 3)).toBe(3);
    // A heartbeat while both run (every 100 ms; seconds at most on a loaded machine).
    const beating = (b: unknown) => JSON.stringify(b) === JSON.stringify({ hooks: 'Stop', running: 2 });
    for (let i = 0; i < 250 && !beats.some(beating); i++) await new Promise((r) => setTimeout(r, 20));
    env.cancel();
    await expect(pending).rejects.toBeDefined();
    expect(livingSleeps(`100${marker}`)).toEqual([]);
    expect(beats).toContainEqual({ hooks: 'Stop', running: 2 });
  });

  it('runs unsandboxed for a job that opted out, still without sourcing ~/.bashrc', async () => {
    // stdin is a file, not a socket: bash sources ~/.bashrc when stdin is a socket (a "remote login").
    const where = script('count-procs.sh', 'ls /proc | grep -cE "^[0-9]+$" >&2; exit 2');
    const result = await run('Stop', [hook(where)], { sandbox: { enabled: false, source: '--no-sandbox' } });
    expect(result.reason).toMatch(/^\d+$/);
    expect(Number(result.reason)).toBeGreaterThan(10);
  });
});

describe('runHooks: a job that needs the sandbox on a worker without one', () => {
  const touch = () => script('touch.sh', 'touch "$CLAUDE_PROJECT_DIR/ran"');

  it('runs no hook, and PreToolUse denies the call', async () => {
    const result = await run('PreToolUse', [hook(touch())], { bwrap: '/nonexistent/bwrap' });
    expect(result.outcome).toBe('deny');
    expect(result.reason).toContain('the worker has no OS sandbox');
    expect(result.userMessages).toEqual([
      expect.stringContaining('1 PreToolUse hook did not run: this job requires the OS sandbox (default)'),
    ]);
    expect(result.ran).toEqual([]);
    expect(fs.existsSync(path.join(fixture.workspace, 'ran'))).toBe(false);
  });

  it('lets Stop stop, and tells the user', async () => {
    const result = await run('Stop', [hook(touch())], { bwrap: '/nonexistent/bwrap' });
    expect(result).toMatchObject({ outcome: 'none', ran: [] });
    expect(result.userMessages).toEqual([expect.stringContaining('install bubblewrap on the worker')]);
    expect(fs.existsSync(path.join(fixture.workspace, 'ran'))).toBe(false);
  });

  it('with no hooks, starts nothing', async () => {
    expect(await run('Stop', [], { bwrap: '/nonexistent/bwrap' })).toEqual({
      outcome: 'none',
      userMessages: [],
      ran: [],
    });
  });
});

describe("runHooks: hooks start from the worker's command helper", () => {
  afterAll(() => stopSpawner());

  it('its parent is the helper, not the worker, and it reads the event on stdin as before', async () => {
    const where = script(
      'parent.sh',
      'echo "$PPID" > "$CLAUDE_PROJECT_DIR/parent"; jq -r .hook_event_name >&2 2>/dev/null || cat >&2; exit 2',
    );
    const result = await run('Stop', [hook(where)], { sandbox: { enabled: false, source: '--no-sandbox' } });
    expect(result.reason).toContain('Stop');
    const parent = Number(fs.readFileSync(path.join(fixture.workspace, 'parent'), 'utf8'));
    expect(spawnerPid()).toBeDefined();
    expect(parent).toBe(spawnerPid());
    expect(parent).not.toBe(process.pid);
  });

  it('a fast hook never loses its answer: 30 quick PreToolUse denies in a row are 30 denies', async () => {
    const deny = script('quick-deny.sh', 'echo "no, not that" >&2; exit 2');
    for (let i = 0; i < 30; i++) {
      const result = await run('PreToolUse', [hook(deny)], { sandbox: { enabled: false, source: '--no-sandbox' } });
      expect(result).toMatchObject({ outcome: 'deny', reason: 'no, not that' });
    }
  });

  it('a workspace that is gone is a hook that could not start, said as such; nothing crashes', async () => {
    const where = script('never.sh', 'exit 0');
    fs.rmSync(fixture.workspace, { recursive: true, force: true });
    const result = await run('Stop', [hook(where)], { sandbox: { enabled: false, source: '--no-sandbox' } });
    expect(JSON.stringify(result)).toMatch(/could not start.*ENOENT/);
  });

  it('a hook no process could be made for (spawn refuses its environment) is not run: PreToolUse denies', async () => {
    const allow = script('allow.sh', 'exit 0');
    const result = await run('PreToolUse', [hook(allow)], {
      sandbox: { enabled: false, source: '--no-sandbox' },
      toolEnv: { PATH: process.env.PATH, HOME: fixture.home, BROKEN: 'a\0b' },
    });
    expect(result.outcome).toBe('deny');
  });

  it('a helper SIGKILLed while a hook runs: the hook is stopped and reported as not run, at once', async () => {
    const where = script('slow.sh', `touch "$CLAUDE_PROJECT_DIR/started"; sleep 100${process.pid}7; exit 2`);
    const pending = run('Stop', [hook(where)], { sandbox: { enabled: false, source: '--no-sandbox' } });
    const startedFile = path.join(fixture.workspace, 'started');
    for (let i = 0; i < 250 && !fs.existsSync(startedFile); i++) await new Promise((r) => setTimeout(r, 20));
    // The hook runs, and the helper's word of its start (the pid) is on its way to the worker. This
    // test is about a helper that dies after that word: the kill comes once the hook's sleep runs
    // and the word had time to arrive. (A helper killed in the instant between its start of the hook
    // and its word of it leaves a group the worker cannot name: a narrower case this does not test.)
    expect(await sleepsReach(`100${process.pid}7`, 1, 10_000)).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    const helper = spawnerPid();
    expect(helper).toBeDefined();
    process.kill(helper!, 'SIGKILL');
    const result = await pending;
    expect(JSON.stringify(result)).toContain("the worker's command helper exited while the hook ran");
    // The hook's group is killed, not waited for: its sleep is gone soon after (seconds at most under load).
    expect(await sleepsReach(`100${process.pid}7`, 0, 5_000)).toBe(0);
  });
});
