/**
 * `export`, `run --resume` and `run --resume-from`, as a user runs them: the real CLI in its own
 * processes, on the embedded server and worker, against the scripted model server.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import { NOT_RUN_RESULT } from '../src/shared/conversation-repair';
import { parseSessionJsonl } from '../src/shared/session-jsonl';
import { ScriptedModelServer, makeWorkspace, tempDir } from './support/harness';
import { textReply, toolUse } from './support/jobs';
import { runCli as cli } from './support/cli';

const fixture = path.join(__dirname, 'fixtures/claude-code-session.jsonl');

/** Over the size at which a tool input travels by reference, and big enough to fill a 40k window. */
const BIG = Array.from({ length: 1_000 }, (_, i) => `${String(i).padStart(4, '0')} ${'y'.repeat(75)}`).join('\n');
const MODEL = 'claude-sonnet-5-5';

/**
 * Job one: Write, Read, answer (turns 1-3). A continuation of it, and the fixture's conversation
 * (three replies), are both on turn 4.
 */
const session: ScriptedSession = {
  name: 'export-resume',
  replies: [
    {
      content: [
        { type: 'text', text: 'Writing the big file.' },
        toolUse('w1', 'Write', { file_path: 'big.txt', content: BIG }),
      ],
    },
    {
      content: [{ type: 'text', text: 'Reading it back.' }, toolUse('r1', 'Read', { file_path: 'big.txt', limit: 2 })],
    },
    // The model thinks (the CLI asks for adaptive thinking): the signed block is exported and sent back.
    {
      content: [
        { type: 'thinking', thinking: 'Both steps are done.' },
        { type: 'text', text: 'Done writing.' },
      ],
    },
    textReply('Resumed answer.'),
  ],
};

type Block = Record<string, unknown>;
type Body = { model: string; messages: Array<{ role: string; content: string | Block[] }> };
type Line = Record<string, unknown> & { message?: { role: string; content: Block[]; model?: string; usage?: unknown } };

const blocksOf = (content: string | Block[]): Block[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;
const textOf = (content: string | Block[]) =>
  blocksOf(content)
    .map((b) => String(b.text ?? ''))
    .join('');
const lastUserText = (body: Body) => textOf(body.messages.at(-1)?.content ?? []);

describe('export and resume', () => {
  const home = tempDir('home');
  let server: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;
  let workspace: string;
  const first = 'first-job';

  beforeAll(async () => {
    server = await ScriptedModelServer.start({ ...session, chunkDelayMs: 0 });
    env = { ...process.env, DURABLE_AGENT_HOME: home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url };
    delete env.TEMPORAL_ADDRESS;
    delete env.CI;
    delete env.ANTHROPIC_MODEL;
    // A small window, so the first job compacts after the big Write.
    workspace = makeWorkspace({
      '.claude/settings.json': JSON.stringify({
        modelLimits: { [MODEL]: { contextWindow: 40_000, maxOutputTokens: 8_000 } },
      }),
    });
    const run = await cli(
      ['run', 'Write the big file', '--cwd', workspace, '--job-id', first, '--permission-mode', 'bypassPermissions'],
      env,
    );
    expect(run.stderr).toContain('Terminal: completed after 3 turns');
    expect(run.code).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await cli(['stop'], env);
    await server?.close();
  });

  test('export writes every message as a Claude Code session line, across the compaction', async () => {
    const output = path.join(tempDir('export'), 'first.jsonl');
    const exported = await cli(['export', first, '--output', output], env);
    expect(exported.stderr).toMatch(/^wrote \d+ lines to /);
    expect(exported.code).toBe(0);
    const text = fs.readFileSync(output, 'utf8');
    const stdout = await cli(['export', first, '--format', 'jsonl'], env);
    expect(stdout.stdout).toBe(text);

    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Line);
    const uuids = new Set<unknown>();
    let previous: unknown = null;
    for (const line of lines) {
      expect(line).toMatchObject({ sessionId: first, cwd: workspace, isSidechain: false, userType: 'external' });
      expect(typeof line.version).toBe('string');
      expect(new Date(String(line.timestamp)).toISOString()).toBe(line.timestamp);
      expect(uuids.has(line.uuid)).toBe(false);
      uuids.add(line.uuid);
      if (line.type === 'system') {
        expect(line).toMatchObject({ subtype: 'compact_boundary', parentUuid: null, logicalParentUuid: previous });
      } else {
        expect(line.parentUuid).toBe(previous);
        expect(['user', 'assistant']).toContain(line.type);
        expect(line.message?.role).toBe(line.type);
      }
      previous = line.uuid;
    }

    // The job's own conversation, in order: prompt, Write, its result, Read, its result, answer.
    const boundary = lines.findIndex((line) => line.type === 'system');
    expect(boundary).toBeGreaterThan(0);
    expect(lines[boundary + 1]).toMatchObject({ type: 'user', isCompactSummary: true });
    expect(textOf(lines[boundary + 1]!.message!.content)).toContain('compacted to save context');
    const before = lines.slice(0, boundary);
    expect(textOf(before[0]!.message!.content)).toBe('Write the big file');
    const write = before[1]!;
    expect(write.type).toBe('assistant');
    // The Write's content went through the workflow by reference; the export has the real value.
    expect(write.message!.content[1]).toEqual({
      type: 'tool_use',
      id: 'w1',
      name: 'Write',
      input: { file_path: 'big.txt', content: BIG },
    });
    expect(write.message).toMatchObject({ model: MODEL, usage: { output_tokens: expect.any(Number) } });
    expect(before[2]!.message!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'w1' });

    const assistants = lines.filter((line) => line.type === 'assistant');
    expect(assistants.every((line) => line.message?.model === MODEL && line.message.usage)).toBe(true);
    expect(textOf(assistants.at(-1)!.message!.content)).toBe('Done writing.');
    expect(assistants.at(-1)!.message!.content[0]).toEqual({
      type: 'thinking',
      thinking: 'Both steps are done.',
      signature: expect.stringMatching(/./),
    });
    const ids = lines.flatMap((line) =>
      (line.message?.content ?? []).filter((b) => b.type === 'tool_use').map((b) => b.id),
    );
    expect(new Set(ids)).toEqual(new Set(['w1', 'r1']));

    // Read back as a session file, it is the conversation after the compaction.
    const parsed = parseSessionJsonl(text, output);
    expect(textOf(parsed.messages[0]!.content as unknown as Block[])).toContain('compacted to save context');
    // Nothing needed repair; the thinking is left out, as from any file.
    expect(parsed.notes).toEqual(['thinking left out (1 block): only the API that signed it can check it']);
  }, 120_000);

  test('run --resume continues the finished job in its workspace: the model sees the old conversation and the prompt', async () => {
    const before = server.requests.length;
    const run = await cli(['run', '--resume', first, 'What did you write?', '--job-id', 'resumed', '--json'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`resuming job ${first} (completed`);
    expect(run.stderr).toContain(`in ${workspace} (its workspace; --cwd to change) with ${MODEL} (its model`);
    const result = JSON.parse(run.stdout) as { result: string; terminal: Record<string, unknown> };
    expect(result.result).toBe('Resumed answer.');
    expect(result.terminal).toMatchObject({ reason: 'completed', turnCount: 1, model: MODEL });

    const sent = server.requests.slice(before).filter((r) => r.kind === 'turn');
    expect(sent).toHaveLength(1);
    const body = sent[0]!.body as Body;
    expect(lastUserText(body)).toBe('What did you write?');
    const texts = body.messages.map((m) => textOf(m.content));
    expect(texts.at(-2)).toBe('Done writing.');
    // The old job's thinking goes back as the API signed it (the server refuses a changed one).
    expect(blocksOf(body.messages.at(-2)!.content)[0]).toMatchObject({
      type: 'thinking',
      thinking: 'Both steps are done.',
    });
    expect(server.rejected).toEqual([]);
    expect(texts.some((t) => t.includes('Reading it back.'))).toBe(true);

    // The continuation is a job of its own; its export holds the old conversation and the new turn.
    const exported = await cli(['export', 'resumed'], env);
    expect(exported.code).toBe(0);
    const lines = exported.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Line);
    expect(lines.every((line) => line.sessionId === 'resumed')).toBe(true);
    expect(textOf(lines.at(-1)!.message!.content)).toBe('Resumed answer.');
    expect(textOf(lines.at(-2)!.message!.content)).toBe('What did you write?');
    expect(JSON.stringify(lines)).toContain('"id":"w1"');
  }, 120_000);

  test('run --resume-from a file Claude Code wrote: the model gets a valid conversation ending with the prompt', async () => {
    const cwd = makeWorkspace({});
    const before = server.requests.length;
    const run = await cli(
      ['run', '--resume-from', fixture, 'Summarise what you found', '--cwd', cwd, '--job-id', 'from-file', '--json'],
      env,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`continuing the conversation of ${fixture} (7 messages;`);
    const result = JSON.parse(run.stdout) as { result: string; terminal: Record<string, unknown> };
    expect(result.terminal).toMatchObject({ reason: 'completed', turnCount: 1 });

    const sent = server.requests.slice(before).filter((r) => r.kind === 'turn');
    expect(sent).toHaveLength(1);
    const body = sent[0]!.body as Body;
    // The server refuses what the API refuses, so a reply at all says the request was valid; the shape too:
    expect(body.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    expect(textOf(body.messages[0]!.content)).toBe('Find where the login is checked');
    const last = blocksOf(body.messages.at(-1)!.content);
    expect(last[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_03ReadLogin',
      is_error: true,
      content: NOT_RUN_RESULT,
    });
    expect(last.at(-1)).toMatchObject({ type: 'text', text: 'Summarise what you found' });
    expect(blocksOf(body.messages[2]!.content).map((b) => b.tool_use_id)).toEqual([
      'toolu_01GrepLogin',
      'toolu_02GlobAuth',
    ]);
    const all = JSON.stringify(body.messages);
    expect(all).not.toContain('abandoned branch');
    expect(all).not.toContain('toolu_side01');
    expect(all).not.toContain('Cut off before it was signed');
  }, 120_000);

  test('a running job is not resumed but pointed to send; bad ids and files get a clear error', async () => {
    const parked = await cli(
      [
        'run',
        'Write the big file',
        '--cwd',
        makeWorkspace({}),
        '--job-id',
        'parked',
        '--permission-mode',
        'default',
        '--detach',
      ],
      env,
    );
    expect(parked.code).toBe(0);
    const refused = await cli(['run', '--resume', 'parked', 'More'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('job parked is still running');
    expect(refused.stderr).toContain('durable-agent send parked');
    const notYet = await cli(['export', 'parked'], env);
    expect(notYet.code).toBe(1);
    expect(notYet.stderr).toContain('still running');
    await cli(['abort', 'parked'], env);

    const unknown = await cli(['export', 'no-such-job'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no job "no-such-job"');
    expect(unknown.stderr).not.toMatch(/\n\s+at /);

    const broken = path.join(tempDir('bad'), 'bad.jsonl');
    fs.writeFileSync(
      broken,
      '{"type":"user","uuid":"a","message":{"role":"user","content":"hi"}}\n{"type":"assistant",\n',
    );
    const bad = await cli(['run', '--resume-from', broken, 'Go on'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${broken}:2: not a JSON object`);
    expect(bad.stderr).not.toMatch(/\n\s+at /);

    // Temporal is here, but the store holding the transcript is not (another machine's DURABLE_AGENT_HOME).
    const { port } = JSON.parse(fs.readFileSync(path.join(home, 'embedded-server.json'), 'utf8')) as { port: number };
    const elsewhere = await cli(['export', first], {
      ...env,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      DURABLE_AGENT_HOME: tempDir('elsewhere'),
    });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(`the transcript of job ${first} is not in the store`);
    expect(elsewhere.stderr).not.toMatch(/\n\s+at /);
  }, 180_000);
});
