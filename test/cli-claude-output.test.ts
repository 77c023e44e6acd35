/**
 * `run --output-format json | stream-json` as a script written for `claude -p` reads it: the real
 * CLI on the embedded default, against the scripted model server. What is expected here is what
 * Claude Code 2.1.332 printed for the same conversations (see docs/cli.md, Headless and CI).
 */
import type { ScriptedSession } from '../src/model-server';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { textReply, toolUse } from './support/jobs';
import { runCli as cli } from './support/cli';
import type { CliResult } from './support/cli';

/** Longer than any preview the job's progress log keeps. */
const LONG = Array.from({ length: 60 }, (_, i) => `line ${i} of a file longer than any preview kept\n`).join('');

/** Every job here plays the same conversation: a Read and a Bash call, then the answer. */
const session: ScriptedSession = {
  name: 'claude-output',
  replies: [
    {
      content: [
        { type: 'text', text: 'Reading.' },
        toolUse('r1', 'Read', { file_path: 'long.txt' }),
        toolUse('b1', 'Bash', { command: 'cat long.txt' }),
      ],
    },
    textReply('Finished.'),
  ],
};

const SLOW_MS = 300_000;

describe("run's json and stream-json read as claude -p's", () => {
  const home = tempDir('claude-output-home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;
  let workspace: string;

  beforeAll(async () => {
    workspace = makeWorkspace({ 'long.txt': LONG });
    server = await ScriptedModelServer.start({ ...session, chunkDelayMs: 0 });
    env = {
      ...process.env,
      DURABLE_AGENT_HOME: home,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: server.url,
      CI: 'true',
    };
    delete env.TEMPORAL_ADDRESS;
    delete env.ANTHROPIC_MODEL;
  });

  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
  }, SLOW_MS);

  const run = (prompt: string, args: string[]): Promise<CliResult> =>
    cli(['run', prompt, '--cwd', workspace, ...args], env);

  const lines = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON lines

  /** The tool names the model was offered in the first request of the job whose prompt is `prompt`. */
  const offeredTo = (prompt: string): string[] => {
    const request = server.requests.find((r) => JSON.stringify(r.body.messages?.[0] ?? '').includes(prompt));
    if (!request) throw new Error(`no request for ${prompt}`);
    return (request.body.tools as Array<{ name: string }>).map((tool) => tool.name);
  };

  test(
    'stream-json: tool results whole, no notice lines, the result last; exit 0',
    async () => {
      const result = await run('case stream', ['--job-id', 'cc-stream', '--output-format', 'stream-json', '--verbose']);
      if (result.code !== 0) throw new Error(result.stdout.slice(-3000) + result.stderr);
      expect(result.code).toBe(0);
      const out = lines(result.stdout);
      expect(out.filter((line) => line.type === 'system').map((line) => line.subtype)).toEqual(['init']);
      const results = out.filter((line) => line.type === 'user').map((line) => line.message.content[0]);
      expect(results.map((block) => block.tool_use_id)).toEqual(['r1', 'b1']);
      // Read numbers its lines; Bash prints the file as it is.
      expect(results[0].content).toContain('60\tline 59 of a file');
      expect(results[1].content).toBe(LONG.trimEnd());
      const last = out[out.length - 1];
      expect(last).toMatchObject({
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'Finished.',
        num_turns: 2,
        api_error_status: null,
        stop_reason: 'end_turn',
        terminal_reason: 'completed',
      });
    },
    SLOW_MS,
  );

  test(
    '--max-turns 1: error_max_turns with errors and no result, the refused turn counted; exit 1, or 2 with --exit-status detailed',
    async () => {
      const result = await run('case max turns', ['--job-id', 'cc-max', '--max-turns', '1', '--output-format', 'json']);
      expect(result.code).toBe(1);
      const message = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(message).toMatchObject({
        subtype: 'error_max_turns',
        is_error: true,
        num_turns: 2,
        errors: ['Reached maximum number of turns (1)'],
        stop_reason: 'tool_use',
        terminal_reason: 'max_turns',
      });
      expect(message).not.toHaveProperty('result');
      expect((await cli(['result', 'cc-max', '--json', '--exit-status', 'detailed'], env)).code).toBe(2);
      expect((await cli(['result', 'cc-max', '--exit-status', 'simple'], env)).code).toBe(1);
    },
    SLOW_MS,
  );

  test(
    '--max-budget-usd: error_max_budget_usd with errors; exit 1',
    async () => {
      const result = await run('case budget', ['--job-id', 'cc-budget', '--max-budget-usd', '0.0001', '--json']);
      expect(result.code).toBe(1);
      const message = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(message).toMatchObject({
        subtype: 'error_max_budget_usd',
        is_error: true,
        // The tools of turn 1 ran; turn 2's call was refused, and counts.
        num_turns: 2,
        errors: ['Reached maximum budget ($0.0001)'],
        terminal_reason: 'budget_exhausted',
      });
      expect(message).not.toHaveProperty('result');
    },
    SLOW_MS,
  );

  test(
    '--disallowedTools Bash: Bash is not offered, and a call of it is no such tool, not a denial',
    async () => {
      const prompt = 'case no bash';
      const result = await run(prompt, [
        '--job-id',
        'cc-no-bash',
        '--disallowedTools',
        'Bash',
        '--output-format',
        'stream-json',
        '--verbose',
      ]);
      if (result.code !== 0) throw new Error(result.stdout.slice(-3000) + result.stderr);
      expect(result.code).toBe(0);
      expect(offeredTo(prompt)).not.toContain('Bash');
      expect(offeredTo(prompt)).toContain('Read');
      const out = lines(result.stdout);
      expect(out[0]).toMatchObject({ type: 'system', subtype: 'init' });
      expect(out[0]?.tools).not.toContain('Bash');
      const bash = out.find((line) => line.type === 'user' && line.message.content[0].tool_use_id === 'b1');
      expect(bash?.message.content[0]).toMatchObject({ is_error: true });
      expect(bash?.message.content[0].content).toBe(
        '<tool_use_error>Error: No such tool available: Bash</tool_use_error>',
      );
      expect(out.some((line) => line.subtype === 'permission_denied')).toBe(false);
      expect(out[out.length - 1]).toMatchObject({ type: 'result', permission_denials: [] });
    },
    SLOW_MS,
  );

  test(
    '--disallowedTools "Bash(cat:*)": Bash is offered, the call is denied, with a permission_denied line',
    async () => {
      const prompt = 'case no cat';
      const result = await run(prompt, [
        '--job-id',
        'cc-no-cat',
        '--disallowedTools',
        'Bash(cat:*)',
        '--output-format',
        'stream-json',
        '--verbose',
      ]);
      if (result.code !== 0) throw new Error(result.stdout.slice(-3000) + result.stderr);
      expect(result.code).toBe(0);
      expect(offeredTo(prompt)).toContain('Bash');
      const out = lines(result.stdout);
      const at = out.findIndex((line) => line.type === 'system' && line.subtype === 'permission_denied');
      expect(out[at]).toMatchObject({ tool_name: 'Bash', tool_use_id: 'b1', session_id: 'cc-no-cat' });
      expect(out[at]?.message).toMatch(/^Permission to use Bash was denied/);
      expect(out[at + 1]).toMatchObject({
        type: 'user',
        message: { content: [{ tool_use_id: 'b1', is_error: true }] },
      });
      expect(out[out.length - 1]).toMatchObject({
        type: 'result',
        permission_denials: [{ tool_name: 'Bash', tool_use_id: 'b1', tool_input: { command: 'cat long.txt' } }],
      });
    },
    SLOW_MS,
  );

  test(
    'a 400 from the API: is_error, the API error as the result, api_error, its status; exit 1',
    async () => {
      // A server of its own, whose first request for turn 1 is answered 400: the worker restarts for it.
      const failing = await ScriptedModelServer.start({
        ...session,
        chunkDelayMs: 0,
        faults: [
          {
            turn: 1,
            attempt: 1,
            kind: 'http',
            status: 400,
            errorType: 'invalid_request_error',
            message: 'messages.2.content: bad thing',
          },
        ],
      });
      const result = await cli(
        ['run', 'case api error', '--cwd', workspace, '--job-id', 'cc-400', '--output-format', 'json'],
        { ...env, ANTHROPIC_BASE_URL: failing.url },
      ).finally(() => failing.close());
      expect(result.code).toBe(1);
      const message = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(message).toMatchObject({
        type: 'result',
        subtype: 'success',
        is_error: true,
        result: 'API Error: 400 messages.2.content: bad thing',
        terminal_reason: 'api_error',
        api_error_status: 400,
        api_error_type: 'invalid_request_error',
        num_turns: 2,
        session_id: 'cc-400',
      });
      expect(message.uuid).toEqual(expect.any(String));
    },
    SLOW_MS,
  );
});
