import Anthropic from '@anthropic-ai/sdk';
import { MockActivityEnvironment } from '@temporalio/testing';
import fs from 'node:fs';
import path from 'node:path';
import { createActivities } from '../../src/activities';
import { FileContentStore } from '../../src/activities/store/content-store';
import type { RunToolInput, ToolRunResult } from '../../src/shared/activity-types';
import type { ToolResultBlock } from '../../src/shared/messages';
import type { JobSandbox } from '../../src/shared/sandbox';
import { fixtureEngine, makeSandboxFixture, type SandboxFixture } from './support';

/** The runTool activity passes the job's policy down and reports how Bash ran. */
let fixture: SandboxFixture;
beforeEach(() => {
  fixture = makeSandboxFixture();
});
afterEach(() => fixture.cleanup());

let counter = 0;
async function runTool(
  command: string,
  options: { sandbox?: JobSandbox; bwrap?: string; name?: string } = {},
): Promise<{ result: ToolRunResult; block: ToolResultBlock }> {
  const storeDir = path.join(fixture.dataHome, 'store');
  const activities = createActivities({
    anthropic: () => new Anthropic({ apiKey: 'unused' }),
    storeDir,
    toolEnv: { PATH: process.env.PATH, HOME: fixture.home },
    sandbox: fixtureEngine(fixture, options.bwrap),
  });
  const id = `toolu_${++counter}`;
  const input: RunToolInput = {
    sessionKey: 'job-1',
    workspace: fixture.workspace,
    toolUse: {
      type: 'tool_use',
      id,
      name: options.name ?? 'Bash',
      input: options.name === 'Read' ? { file_path: command } : { command },
    },
    readState: {},
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  };
  const env = new MockActivityEnvironment({
    activityType: 'runTool',
    activityId: id,
    attempt: 1,
    startToCloseTimeoutMs: 60_000,
  });
  const result = (await env.run(activities.runTool, input)) as ToolRunResult;
  return { result, block: await new FileContentStore(storeDir).get<ToolResultBlock>(result.ref) };
}

describe('runTool and the sandbox', () => {
  it('runs Bash sandboxed when the input says nothing (a job from before sandboxing)', async () => {
    const { result, block } = await runTool('ls /proc | grep -cE "^[0-9]+$"');
    expect(result.sandboxed).toBe(true);
    expect(Number(block.content)).toBeLessThan(10);
  });

  it('runs Bash unsandboxed for a job that opted out, and says so', async () => {
    const { result } = await runTool('true', { sandbox: { enabled: false, source: '--no-sandbox' } });
    expect(result).toMatchObject({ isError: false, sandboxed: false });
  });

  it('returns the refusal as an error result when the worker has no sandbox', async () => {
    const { result, block } = await runTool('touch nope', { bwrap: '/nonexistent/bwrap' });
    expect(result.isError).toBe(true);
    expect(result.sandboxed).toBeUndefined();
    expect(block.content).toContain('requires the OS sandbox (default)');
    expect(fs.existsSync(path.join(fixture.workspace, 'nope'))).toBe(false);
  });

  it('says nothing about the sandbox for tools that start no command', async () => {
    fs.writeFileSync(path.join(fixture.workspace, 'a.txt'), 'hello\n');
    const { result } = await runTool('a.txt', { name: 'Read' });
    expect(result.isError).toBe(false);
    expect(result.sandboxed).toBeUndefined();
  });
});
