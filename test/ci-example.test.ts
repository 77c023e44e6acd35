import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadScriptedSession } from '../src/model-server';
import { ScriptedModelServer, tempDir } from './support/harness';
import { exitedWithOutput } from './support/cli';
import { TS_REGISTER } from './support/ts-run';

const root = path.join(__dirname, '..');
const example = path.join(root, 'examples/github-actions');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}

/** Pids of live processes whose command line or environment names `dir` (the embedded server and worker do). */
function processesUsing(dir: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environ = fs.readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (cmdline.includes(dir) || environ.includes(`DURABLE_AGENT_HOME=${dir}`)) found.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

function runScript(env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [path.join(example, 'run-agent-task.sh')], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exitedWithOutput(child).then((code) => resolve({ code, stderr }));
  });
}

describe('the GitHub Actions example', () => {
  const workflow = parse(fs.readFileSync(path.join(example, 'agent-task.yml'), 'utf8')) as {
    on: { workflow_dispatch: { inputs: Record<string, { default?: string }> } };
    jobs: { agent: { steps: Step[] } };
  };
  const inputs = workflow.on.workflow_dispatch.inputs;
  const steps = workflow.jobs.agent.steps;
  const taskStep = steps.find((step) => step.run?.includes('run-agent-task.sh'));
  const script = fs.readFileSync(path.join(example, 'run-agent-task.sh'), 'utf8');

  test('the workflow runs the script with the settings it reads, and uploads what it writes', () => {
    expect(taskStep).toBeDefined();
    for (const name of Object.keys(taskStep?.env ?? {})) {
      if (name === 'ANTHROPIC_API_KEY' || name === 'DURABLE_AGENT_HOME') continue;
      expect(script).toContain(`\${${name}`);
    }
    // The user's prompt reaches the script through the environment, never spliced into shell code.
    expect(taskStep?.run).not.toContain('${{');
    const upload = steps.find((step) => step.uses?.startsWith('actions/upload-artifact@'));
    expect(upload?.with?.path).toContain('agent-output/result.json');
    expect(upload?.with?.path).toContain('agent-output/transcript.jsonl');
    expect(taskStep?.env?.OUTPUT_DIR).toContain('agent-output');
  });

  test('without the API key secret it stops at once with one line, before starting anything', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PROMPT: 'x', OUTPUT_DIR: tempDir('out'), DURABLE_AGENT: 'false' };
    delete env.ANTHROPIC_API_KEY;
    delete env.ANTHROPIC_AUTH_TOKEN;
    const run = await runScript(env, tempDir('repo'));
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'run-agent-task: ANTHROPIC_API_KEY is not set (in GitHub Actions: the ANTHROPIC_API_KEY secret; forks get no secrets)',
    );
  });

  test('its steps, run here as a runner would, write the json result and the transcript', async () => {
    const recorded = loadScriptedSession(path.join(root, 'examples/recorded/check-login.json'));
    const server = await ScriptedModelServer.start({ ...recorded, chunkDelayMs: 0 });
    const home = tempDir('home');
    const workspace = tempDir('repo');
    fs.cpSync(path.join(root, 'examples/login-demo'), workspace, { recursive: true });
    const output = tempDir('agent-output');
    const summary = path.join(tempDir('summary'), 'step-summary.md');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...taskStep?.env,
      CI: 'true',
      GITHUB_RUN_ID: '4242',
      GITHUB_RUN_ATTEMPT: '1',
      GITHUB_STEP_SUMMARY: summary,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: server.url,
      DURABLE_AGENT: `${process.execPath} -r ${TS_REGISTER} ${path.join(root, 'src/client/cli.ts')}`,
      DURABLE_AGENT_HOME: home,
      PROMPT: 'Check the login module',
      TEST_COMMAND: 'grep -q login src/auth/login.ts',
      MAX_TURNS: '10',
      MAX_BUDGET_USD: '1',
      // What the workflow passes when started with its defaults.
      ALLOWED_TOOLS: inputs.allowed_tools?.default,
      OUTPUT_DIR: output,
    };
    delete env.TEMPORAL_ADDRESS;
    try {
      const run = await runScript(env, workspace);
      expect(run.stderr).toContain('run-agent-task: ci-4242-1 completed after 3 turns');
      expect(run.code).toBe(0);
      const result = JSON.parse(fs.readFileSync(path.join(output, 'result.json'), 'utf8')) as Record<string, unknown>;
      expect(result).toMatchObject({ type: 'result', subtype: 'success', job_id: 'ci-4242-1', num_turns: 3 });
      const lines = fs
        .readFileSync(path.join(output, 'transcript.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { sessionId?: string; type?: string });
      expect(lines.length).toBeGreaterThanOrEqual(6);
      expect(lines.filter((line) => line.type === 'user' || line.type === 'assistant').length).toBeGreaterThanOrEqual(
        6,
      );
      for (const line of lines) expect(line.sessionId).toBe('ci-4242-1');
      expect(fs.readFileSync(summary, 'utf8')).toContain('### ci-4242-1: completed (3 turns');
      // The script leaves no embedded server or worker running.
      expect(processesUsing(home)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 240_000);
});
