/**
 * The scripted model server under context pressure, driven by the real `@anthropic-ai/sdk`: the
 * context window's 400, compaction requests and their summaries, turn numbers that go on across
 * compactions, `tool_choice`, and the prompt cache's share of `usage`.
 */
import Anthropic from '@anthropic-ai/sdk';
import {
  estimateInputTokens,
  ScriptedModelServer,
  type ScriptedModelServerOptions,
  type ScriptedReply,
  type ScriptedSession,
} from '../src/model-server';
import { COMPACTION_PROMPT_MARKER } from '../src/shared/compact-prompt';

const MODEL = 'claude-test-model';
const servers: ScriptedModelServer[] = [];

async function startServer(session: ScriptedSession, opts: ScriptedModelServerOptions = {}) {
  const server = await ScriptedModelServer.start(session, opts);
  servers.push(server);
  return server;
}

function clientFor(server: ScriptedModelServer): Anthropic {
  return new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function rejectionOf(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(Anthropic.APIError);
    return error as InstanceType<typeof Anthropic.APIError>;
  }
  throw new Error('expected the promise to reject');
}

const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello' }];
const text = (t: string): ScriptedReply => ({ content: [{ type: 'text', text: t }] });
const COMPACTION_PROMPT = `${COMPACTION_PROMPT_MARKER}.\nUse the usual seven sections.`;
const CLEARED = '[Old tool result content cleared]';

describe('context window', () => {
  it("refuses a prompt over the window with the real API's 400, recorded first, and counts like count_tokens", async () => {
    const server = await startServer({ replies: [text('fits')], contextWindow: 300 });
    const client = clientFor(server);
    const long: Anthropic.MessageParam[] = [{ role: 'user', content: 'word '.repeat(400) }];
    const tokens = (await client.messages.countTokens({ model: MODEL, messages: long })).input_tokens;
    expect(tokens).toBe(estimateInputTokens({ messages: long }));
    expect(tokens).toBeGreaterThan(300);

    const error = await rejectionOf(
      client.messages.stream({ model: MODEL, max_tokens: 10, messages: long }).finalMessage(),
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.type).toBe('invalid_request_error');
    expect(error.apiMessage).toBe(`prompt is too long: ${tokens} tokens > 300 maximum`);
    expect(server.requests.map((r) => [r.kind, r.turn, r.attempt])).toEqual([['turn', 0, 1]]);

    // Current models accept a prompt that fits even when max_tokens does not: they stop when the window is full.
    const message = await client.messages.stream({ model: MODEL, max_tokens: 64_000, messages: hello }).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'fits' }]);
    expect(server.requests.map((r) => r.attempt)).toEqual([1, 2]);
  });

  it('applies to compaction requests too', async () => {
    const server = await startServer({ replies: [], contextWindow: 50 });
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'please do a long task '.repeat(20) },
      { role: 'assistant', content: 'working on it' },
      { role: 'user', content: COMPACTION_PROMPT },
    ];
    const error = await rejectionOf(clientFor(server).messages.create({ model: MODEL, max_tokens: 10, messages }));
    expect(error.apiMessage).toMatch(/^prompt is too long: \d+ tokens > 50 maximum$/);
    expect(server.requests.map((r) => [r.kind, r.turn, r.compaction])).toEqual([['compaction', 1, 0]]);
  });

  it('rejects a window that is not a positive integer', async () => {
    await expect(ScriptedModelServer.start({ replies: [], contextWindow: 0 })).rejects.toThrow(/contextWindow/);
  });
});

describe('tool_choice', () => {
  const tools: Anthropic.Tool[] = [{ name: 'Read', input_schema: { type: 'object' } }];

  async function problemOf(extra: Record<string, unknown>): Promise<string | undefined> {
    const server = await startServer({ replies: [text('ok')] });
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test' },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: hello, tools, ...extra }),
    });
    const json = (await res.json()) as { error?: { message: string } };
    return res.status === 200 ? undefined : json.error?.message;
  }

  it('accepts auto, any, tool and none the way the SDK types them', async () => {
    const server = await startServer({ replies: [text('ok')] });
    const client = clientFor(server);
    const choices: Anthropic.ToolChoice[] = [
      { type: 'auto' },
      { type: 'auto', disable_parallel_tool_use: true },
      { type: 'any' },
      { type: 'tool', name: 'Read', disable_parallel_tool_use: false },
      { type: 'none' },
    ];
    for (const tool_choice of choices) {
      const message = await client.messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: hello,
        tools,
        tool_choice,
      });
      expect(message.content).toEqual([{ type: 'text', text: 'ok' }]);
    }
  });

  it('rejects malformed choices, forced tool use without the tool, and forced tool use with thinking', async () => {
    expect(await problemOf({ tool_choice: 'auto' })).toBe(
      'tool_choice: Input should be a valid dictionary or object to extract fields from',
    );
    expect(await problemOf({ tool_choice: {} })).toBe("tool_choice: Unable to extract tag using discriminator 'type'");
    expect(await problemOf({ tool_choice: { type: 'required' } })).toMatch(
      /^tool_choice: Input tag 'required' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'$/,
    );
    expect(await problemOf({ tool_choice: { type: 'tool' } })).toBe('tool_choice.tool.name: Field required');
    expect(await problemOf({ tool_choice: { type: 'none', disable_parallel_tool_use: true } })).toBe(
      'tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted',
    );
    expect(await problemOf({ tool_choice: { type: 'auto', disable_parallel_tool_use: 'yes' } })).toBe(
      'tool_choice.auto.disable_parallel_tool_use: Input should be a valid boolean',
    );
    expect(await problemOf({ tool_choice: { type: 'tool', name: 'Write' } })).toMatch(/'Write' is not among the tools/);
    expect(await problemOf({ tools: [], tool_choice: { type: 'any' } })).toMatch(/no tools were provided/);
    // Manual thinking cannot be forced to use a tool (its budget must also stay below max_tokens).
    const manual = { max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } };
    expect(await problemOf({ ...manual, tool_choice: { type: 'any' } })).toBe(
      'Thinking may not be enabled when tool_choice forces tool use.',
    );
    expect(await problemOf({ ...manual, tool_choice: { type: 'auto' } })).toBe(undefined);
    // Adaptive thinking can: the model then skips thinking.
    expect(await problemOf({ tool_choice: { type: 'any' }, thinking: { type: 'adaptive' } })).toBe(undefined);
  });
});

/** Text of a reply, all text blocks joined. */
function textOf(message: Anthropic.Message): string {
  return message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
}

/**
 * A small agent loop over the real SDK, the way the durable agent talks to the API: the turn's
 * reply is appended, its tool calls answered, and a compaction restarts the transcript from a
 * summary message plus the most recent messages.
 */
class MiniAgent {
  messages: Anthropic.MessageParam[];
  readonly replies: Anthropic.Message[] = [];
  readonly summaries: string[] = [];
  private readonly client: Anthropic;

  constructor(server: ScriptedModelServer, prompt = 'Fix the failing tests in src/app.ts') {
    this.client = clientFor(server);
    this.messages = [{ role: 'user', content: prompt }];
  }

  async turn(): Promise<Anthropic.Message> {
    const reply = await this.client.messages
      .stream({ model: MODEL, max_tokens: 100, messages: this.messages })
      .finalMessage();
    this.replies.push(reply);
    this.messages.push({ role: 'assistant', content: reply.content });
    const results = reply.content.flatMap((b): Anthropic.ToolResultBlockParam[] =>
      b.type === 'tool_use' ? [{ type: 'tool_result', tool_use_id: b.id, content: `result of ${b.id}` }] : [],
    );
    if (results.length > 0) this.messages.push({ role: 'user', content: results });
    return reply;
  }

  async turns(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await this.turn();
  }

  /**
   * Ask for a summary, then (unless `adopt` is false) restart from it with the last `keep`
   * messages. With `fit`, the request sends only the task and the last `fit` messages, as an
   * agent does when the conversation is too long to summarise whole.
   */
  async compact(keep: number, { adopt = true, fit }: { adopt?: boolean; fit?: number } = {}): Promise<string> {
    const task = this.messages[0]!;
    const head: Anthropic.MessageParam = {
      role: 'user',
      content: `${String(task.content)}\n\n[Earlier messages omitted]`,
    };
    const sent = fit === undefined ? this.messages : [head, ...this.messages.slice(-fit)];
    const reply = await this.client.messages.create({
      model: MODEL,
      max_tokens: 1000,
      tool_choice: { type: 'none' },
      messages: [...sent, { role: 'user', content: [{ type: 'text', text: COMPACTION_PROMPT }] }],
    });
    expect(reply.stop_reason).toBe('end_turn');
    const summary = textOf(reply);
    this.summaries.push(summary);
    if (adopt) {
      const kept = keep > 0 ? this.messages.slice(-keep) : [];
      const restart: Anthropic.TextBlockParam[] = [
        { type: 'text', text: 'This session continues an earlier conversation. Summary:' },
        { type: 'text', text: summary },
      ];
      this.messages = [{ role: 'user', content: restart }, ...kept];
    }
    return summary;
  }

  /** Microcompact: every tool_result's content replaced by a marker. */
  clearToolResults(): void {
    this.messages = this.messages.map((m) =>
      m.role === 'user' && Array.isArray(m.content)
        ? { ...m, content: m.content.map((b) => (b.type === 'tool_result' ? { ...b, content: CLEARED } : b)) }
        : m,
    );
  }
}

/** Turn `i` reads a file (a tool call with a unique id), the last one ends the task. */
function readingScript(turns: number): ScriptedReply[] {
  return Array.from({ length: turns }, (_, i) =>
    i === turns - 1
      ? text('All tests pass now.')
      : {
          content: [
            { type: 'text' as const, text: `Step ${i}: reading part ${i}.` },
            { type: 'tool_use' as const, id: `toolu_${i}`, name: 'Read', input: { file_path: `src/part-${i}.ts` } },
          ],
        },
  );
}

/** The tool_use ids of the replies the agent got, in order: each one names the turn that answered. */
function answeredTurns(agent: MiniAgent): string[] {
  return agent.replies.map((r) => r.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])).join(',') || 'end');
}

function turnRequests(server: ScriptedModelServer): number[] {
  return server.requests.filter((r) => r.kind === 'turn').map((r) => r.turn);
}

describe('compaction requests', () => {
  it('are answered with a generated summary, outside the scripted turns', async () => {
    const server = await startServer({ name: 'cmp', replies: readingScript(4) });
    const agent = new MiniAgent(server);
    await agent.turns(2);
    const summary = await agent.compact(2, { adopt: false });
    for (const section of [
      '1. Primary Request and Intent',
      '2. Key Technical Concepts',
      '3. Files and Code Sections',
      '4. Errors and fixes',
      '5. Pending Tasks',
      '6. Current Work',
      '7. Optional Next Step',
    ]) {
      expect(summary).toContain(section);
    }
    expect(summary).toMatch(/^<summary>\n[\s\S]*\n<\/summary>$/);
    expect(summary).toContain('Fix the failing tests in src/app.ts');
    expect(summary).toContain('src/part-1.ts');
    expect(summary).toContain('0 of 2 tool calls reported an error');
    expect(summary).toContain('Compaction reference: #1');

    // The compaction consumed no reply: the next turn gets its own.
    await agent.turn();
    expect(answeredTurns(agent)).toEqual(['toolu_0', 'toolu_1', 'toolu_2']);
    expect(server.requests.map((r) => [r.kind, r.turn, r.attempt, r.compaction])).toEqual([
      ['turn', 0, 1, undefined],
      ['turn', 1, 1, undefined],
      ['compaction', 2, 1, 0],
      ['turn', 2, 1, undefined],
    ]);
    expect(server.compactionRequests()).toHaveLength(1);
    expect((await server.waitForCompaction(0)).body.tool_choice).toEqual({ type: 'none' });
    await expect(server.waitForRequest(2, 2, 20)).rejects.toThrow(/seen: 0\/1, 1\/1, 2\/1\)/);
  });

  it('streams a summary too, and two compactions never write the same text', async () => {
    const server = await startServer({ replies: readingScript(6) });
    const agent = new MiniAgent(server);
    await agent.turns(1);
    const first = await agent.compact(2);
    const second = await agent.compact(2);
    expect(first).not.toBe(second);
    const stream = clientFor(server).messages.stream({
      model: MODEL,
      max_tokens: 100,
      messages: [...agent.messages, { role: 'user', content: COMPACTION_PROMPT }],
    });
    const streamed = await stream.finalMessage();
    expect(streamed.content).toHaveLength(1);
    expect(textOf(streamed)).toContain('Compaction reference: #3');
    expect(server.compactionRequests().map((r) => r.compaction)).toEqual([0, 1, 2]);
  });

  it('follow scripted replies and faults by compaction index; a retry is the next attempt of the same one', async () => {
    const scripted = 'Summary: the user wants the tests fixed; parts 0 and 1 were read.';
    const server = await startServer({
      replies: readingScript(5),
      compactions: {
        replies: [{ content: [{ type: 'text', text: scripted }], usage: { output_tokens: 42 } }],
        faults: [
          { index: 0, attempt: 1, kind: 'http', status: 529, errorType: 'overloaded_error' },
          { index: 1, attempt: 1, kind: 'stream_error', errorType: 'api_error', afterBlocks: 0 },
        ],
      },
    });
    const agent = new MiniAgent(server);
    await agent.turns(2);
    const overloaded = await rejectionOf(agent.compact(2));
    expect(overloaded.status).toBe(529);
    expect(await agent.compact(2)).toBe(scripted);
    await agent.turn();
    expect(answeredTurns(agent)).toEqual(['toolu_0', 'toolu_1', 'toolu_2']);

    const failing = clientFor(server).messages.stream({
      model: MODEL,
      max_tokens: 100,
      messages: [...agent.messages, { role: 'user', content: COMPACTION_PROMPT }],
    });
    await expect(failing.finalMessage()).rejects.toThrow();
    expect(await agent.compact(0)).toContain('Compaction reference: #2');
    expect(server.compactionRequests().map((r) => [r.compaction, r.attempt, r.turn])).toEqual([
      [0, 1, 2],
      [0, 2, 2],
      [1, 1, 3],
      [1, 2, 3],
    ]);
  });

  it('refuse scripted compaction replies the model could not give, and duplicate compaction faults', async () => {
    await expect(
      ScriptedModelServer.start({
        replies: [],
        compactions: { replies: [{ content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] }] },
      }),
    ).rejects.toThrow(/compactions\.replies\.0\.content: a compaction is asked with tool_choice none/);
    await expect(
      ScriptedModelServer.start({
        replies: [],
        compactions: {
          faults: [
            { index: 0, attempt: 1, kind: 'hang' },
            { index: 0, attempt: 1, kind: 'drop' },
          ],
        },
      }),
    ).rejects.toThrow(/compactions\.faults\.1: duplicate fault for compaction 0 attempt 1/);
  });
});

describe('turns across compactions', () => {
  it('without a compaction, the turn is the number of assistant messages', async () => {
    const server = await startServer({ replies: readingScript(4) });
    const agent = new MiniAgent(server);
    await agent.turns(4);
    expect(answeredTurns(agent)).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'end']);
    expect(turnRequests(server)).toEqual([0, 1, 2, 3]);
  });

  it('go on after a compaction that keeps no message', async () => {
    const server = await startServer({ replies: readingScript(6) });
    const agent = new MiniAgent(server);
    await agent.turns(3);
    await agent.compact(0);
    expect(agent.messages).toHaveLength(1);
    await agent.turns(3);
    expect(answeredTurns(agent)).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3', 'toolu_4', 'end']);
    expect(server.requests.map((r) => [r.kind, r.turn])).toEqual([
      ['turn', 0],
      ['turn', 1],
      ['turn', 2],
      ['compaction', 3],
      ['turn', 3],
      ['turn', 4],
      ['turn', 5],
    ]);
  });

  it('go on after a compaction that keeps the last four messages verbatim', async () => {
    const server = await startServer({ replies: readingScript(7) });
    const agent = new MiniAgent(server);
    await agent.turns(4);
    await agent.compact(4);
    expect(agent.messages.filter((m) => m.role === 'assistant')).toHaveLength(2);
    await agent.turns(3);
    expect(answeredTurns(agent)).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3', 'toolu_4', 'toolu_5', 'end']);
    expect(turnRequests(server)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('chain through two compactions in a row and a later third one', async () => {
    const server = await startServer({ replies: readingScript(9) });
    const agent = new MiniAgent(server);
    await agent.turns(3);
    await agent.compact(4);
    await agent.compact(2); // a compaction of the compacted conversation, with no turn between
    await agent.turns(2);
    await agent.compact(0);
    await agent.turns(4);
    expect(answeredTurns(agent)).toEqual([
      'toolu_0',
      'toolu_1',
      'toolu_2',
      'toolu_3',
      'toolu_4',
      'toolu_5',
      'toolu_6',
      'toolu_7',
      'end',
    ]);
    expect(server.compactionRequests().map((r) => [r.compaction, r.turn])).toEqual([
      [0, 3],
      [1, 3],
      [2, 5],
    ]);
    expect(turnRequests(server)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    // The user's request survives every summary, even with the first one long gone.
    expect(agent.summaries[2]).toContain('Fix the failing tests in src/app.ts');
  });

  it('go on when the compaction request leaves out the oldest messages, and retries cutting more', async () => {
    const server = await startServer({
      replies: readingScript(8),
      compactions: {
        faults: [{ index: 0, attempt: 1, kind: 'http', status: 400, errorType: 'invalid_request_error' }],
      },
    });
    const agent = new MiniAgent(server);
    await agent.turns(5);
    await rejectionOf(agent.compact(2, { fit: 4 }));
    await agent.compact(2, { fit: 2 });
    await agent.turn();
    await agent.compact(0, { fit: 2 });
    await agent.turns(2);
    expect(answeredTurns(agent)).toEqual([
      'toolu_0',
      'toolu_1',
      'toolu_2',
      'toolu_3',
      'toolu_4',
      'toolu_5',
      'toolu_6',
      'end',
    ]);
    expect(server.compactionRequests().map((r) => [r.compaction, r.attempt, r.turn])).toEqual([
      [0, 1, 5],
      [0, 2, 5],
      [1, 1, 6],
    ]);
    expect(turnRequests(server)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('place a kept reply the agent altered before writing it back by the summary', async () => {
    const partial_json = '{"file_path":"src/a';
    const cut: ScriptedReply = {
      content: [
        { type: 'text', text: 'Writing the fix.' },
        { type: 'tool_use', id: 'toolu_cut', name: 'Write', input: { file_path: 'src/app.ts' }, partial_json },
      ],
      stop_reason: 'max_tokens',
    };
    const server = await startServer({ replies: [readingScript(2)[0]!, cut, ...readingScript(4).slice(2)] });
    const agent = new MiniAgent(server);
    await agent.turn();
    const reply = await clientFor(server)
      .messages.stream({ model: MODEL, max_tokens: 100, messages: agent.messages })
      .finalMessage();
    expect(reply.stop_reason).toBe('max_tokens');
    // The cut tool call is dropped: the reply written back is not the reply sent.
    agent.messages.push(
      { role: 'assistant', content: [{ type: 'text', text: 'Writing the fix.' }] },
      { role: 'user', content: 'Your reply was cut off; go on.' },
    );
    await agent.compact(2);
    await agent.turns(2);
    expect(answeredTurns(agent)).toEqual(['toolu_0', 'toolu_2', 'end']);
    expect(turnRequests(server)).toEqual([0, 1, 2, 3]);
  });

  it('go on when the kept messages later have their tool results cleared', async () => {
    const server = await startServer({ replies: readingScript(8) });
    const agent = new MiniAgent(server);
    await agent.turns(3);
    await agent.compact(4);
    await agent.turn();
    agent.clearToolResults();
    await agent.turns(2);
    agent.clearToolResults();
    await agent.compact(2);
    await agent.turns(2);
    expect(answeredTurns(agent)).toEqual([
      'toolu_0',
      'toolu_1',
      'toolu_2',
      'toolu_3',
      'toolu_4',
      'toolu_5',
      'toolu_6',
      'end',
    ]);
    expect(turnRequests(server)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(server.requests.at(-1)?.body.messages[2].content[0].content).toBe(CLEARED);
  });
});

/** A system prompt of about `tokens` tokens (four characters each). */
function bigText(tokens: number, seed = 'system'): string {
  return `${seed}: ${'abcd'.repeat(tokens)}`;
}

const cc = { type: 'ephemeral' as const };

type Usage = Pick<Anthropic.Usage, 'input_tokens' | 'cache_creation_input_tokens' | 'cache_read_input_tokens'>;

function split(usage: Anthropic.Usage): Usage {
  return {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
  };
}

describe('prompt cache', () => {
  let clock = 1_000_000;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  /** Send `params` and check the three input counters add up to count_tokens of the same request. */
  async function usageOf(client: Anthropic, params: Omit<Anthropic.MessageCreateParamsNonStreaming, 'max_tokens'>) {
    const message = await client.messages.create({ max_tokens: 10, ...params });
    const { input_tokens } = await client.messages.countTokens({
      model: params.model,
      messages: params.messages,
      ...(params.system ? { system: params.system } : {}),
      ...(params.tools ? { tools: params.tools } : {}),
    });
    const u = split(message.usage);
    expect((u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0)).toBe(
      input_tokens,
    );
    return u;
  }

  const replies = Array.from({ length: 10 }, (_, i) => text(`answer ${i}`));

  it('writes at a breakpoint, then reads the same prefix, the rest staying uncached input', async () => {
    const server = await startServer({ replies }, { now });
    const client = clientFor(server);
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: bigText(2000), cache_control: cc }];
    const cold = await usageOf(client, { model: MODEL, system, messages: hello });
    expect(cold.cache_read_input_tokens).toBe(0);
    expect(cold.cache_creation_input_tokens).toBeGreaterThanOrEqual(2000);
    expect(cold.input_tokens).toBeGreaterThan(0);
    expect(cold.input_tokens).toBeLessThan(20);

    const warm = await usageOf(client, {
      model: MODEL,
      system,
      messages: [{ role: 'user', content: 'Other question' }],
    });
    expect(warm).toEqual({
      input_tokens: expect.any(Number),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: cold.cache_creation_input_tokens,
    });

    // The stream reports the same split up front, in message_start.
    const raw = await client.messages.create({ model: MODEL, max_tokens: 10, system, messages: hello, stream: true });
    for await (const event of raw) {
      if (event.type === 'message_start') {
        expect(event.message.usage.cache_read_input_tokens).toBe(cold.cache_creation_input_tokens);
      }
    }
    // Another model reads nothing the first one wrote.
    const other = await usageOf(client, { model: 'claude-other-model', system, messages: hello });
    expect(other.cache_read_input_tokens).toBe(0);
  });

  it("grows with the conversation: each turn reads the last turn's prefix and writes only what is new", async () => {
    const server = await startServer({ replies }, { now });
    const client = clientFor(server);
    const tools: Anthropic.Tool[] = [
      { name: 'Read', description: bigText(600, 'tool'), input_schema: { type: 'object' }, cache_control: cc },
    ];
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: bigText(600), cache_control: cc }];
    const withBreakpointOnLast = (messages: Anthropic.MessageParam[]): Anthropic.MessageParam[] =>
      messages.map((m, i) =>
        i === messages.length - 1
          ? { ...m, content: [{ type: 'text', text: String(m.content), cache_control: cc }] }
          : m,
      );
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: 'first question' }];
    const first = await usageOf(client, { model: MODEL, tools, system, messages: withBreakpointOnLast(history) });
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.input_tokens).toBe(0); // the breakpoint is on the very last block

    history.push({ role: 'assistant', content: 'answer 0' }, { role: 'user', content: 'second question' });
    const second = await usageOf(client, { model: MODEL, tools, system, messages: withBreakpointOnLast(history) });
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(second.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.cache_creation_input_tokens).toBeLessThan(40);

    // A changed tool invalidates everything after it: tools render first.
    const changed = [{ ...tools[0]!, description: bigText(600, 'tool v2') }];
    const rebuilt = await usageOf(client, {
      model: MODEL,
      tools: changed,
      system,
      messages: withBreakpointOnLast(history),
    });
    expect(rebuilt.cache_read_input_tokens).toBe(0);
  });

  it('expires after the TTL unless a read refreshes it; cacheTtlMs shortens it, ttl 1h outlives it', async () => {
    const server = await startServer({ replies, cacheTtlMs: 60_000 }, { now });
    const client = clientFor(server);
    const system = (ttl?: '1h'): Anthropic.TextBlockParam[] => [
      { type: 'text', text: bigText(1500, ttl ?? '5m'), cache_control: ttl ? { type: 'ephemeral', ttl } : cc },
    ];
    const params = { model: MODEL, messages: hello };
    const written = (await usageOf(client, { ...params, system: system() })).cache_creation_input_tokens;
    clock += 50_000;
    expect((await usageOf(client, { ...params, system: system() })).cache_read_input_tokens).toBe(written);
    clock += 50_000; // 100 s after the write, 50 s after the read that refreshed it
    expect((await usageOf(client, { ...params, system: system() })).cache_read_input_tokens).toBe(written);
    clock += 61_000;
    const cold = await usageOf(client, { ...params, system: system() });
    expect(cold).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: written });

    const hour = (await usageOf(client, { ...params, system: system('1h') })).cache_creation_input_tokens;
    clock += 30 * 60_000;
    expect((await usageOf(client, { ...params, system: system('1h') })).cache_read_input_tokens).toBe(hour);
  });

  it('caches nothing below the minimum cacheable length', async () => {
    const server = await startServer({ replies }, { now });
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: bigText(900), cache_control: cc }];
    for (let i = 0; i < 2; i++) {
      const usage = await usageOf(clientFor(server), { model: MODEL, system, messages: hello });
      expect(usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    }
  });

  it('looks back at most 20 blocks from a breakpoint for an earlier entry', async () => {
    const server = await startServer({ replies }, { now });
    const client = clientFor(server);
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: bigText(1200), cache_control: cc }];
    const systemOnly = await usageOf(client, { model: MODEL, system, messages: hello });
    const base: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: cc }] },
      { role: 'assistant', content: 'answer 0' },
    ];
    const withBase = await usageOf(client, { model: MODEL, system, messages: base });
    const baseTokens = systemOnly.cache_creation_input_tokens! + withBase.cache_creation_input_tokens!;
    const blocks = (n: number, label: string): Anthropic.MessageParam => ({
      role: 'user',
      content: Array.from({ length: n }, (_, i) => ({
        type: 'text' as const,
        text: `${label} ${i}`,
        ...(i === n - 1 ? { cache_control: cc } : {}),
      })),
    });
    // The same messages without their breakpoint: only the one on the last block can reach the entry.
    const unmarked: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello' }, base[1]!];
    const near = await usageOf(client, { model: MODEL, system, messages: [...unmarked, blocks(18, 'near')] });
    expect(near.cache_read_input_tokens).toBe(baseTokens);
    const far = await usageOf(client, { model: MODEL, system, messages: [...unmarked, blocks(25, 'far')] });
    expect(far.cache_read_input_tokens).toBe(systemOnly.cache_creation_input_tokens);
  });

  it('lets scripted usage win, counter by counter', async () => {
    const server = await startServer({ replies: [{ ...text('x'), usage: { cache_read_input_tokens: 5 } }] }, { now });
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: bigText(1500), cache_control: cc }];
    const message = await clientFor(server).messages.create({ model: MODEL, max_tokens: 10, system, messages: hello });
    expect(message.usage.cache_read_input_tokens).toBe(5);
    expect(message.usage.cache_creation_input_tokens).toBeGreaterThan(1500);
  });

  it('refuses malformed cache_control, an unknown ttl, and a 1h breakpoint after a 5m one', async () => {
    const server = await startServer({ replies });
    const send = async (body: Record<string, unknown>) => {
      const res = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'test' },
        body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: hello, ...body }),
      });
      return res.status === 200 ? 'ok' : ((await res.json()) as { error: { message: string } }).error.message;
    };
    const block = (cache_control: unknown) => [{ type: 'text', text: 'sys', cache_control }];
    expect(await send({ system: block({ type: 'persistent' }) })).toBe(
      "system.0.cache_control.type: Input should be 'ephemeral'",
    );
    expect(await send({ system: block({ type: 'ephemeral', ttl: '10m' }) })).toBe(
      "system.0.cache_control.ttl: Input should be '5m' or '1h'",
    );
    expect(
      await send({
        tools: [{ name: 'A', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral', ttl: '5m' } }],
        system: block({ type: 'ephemeral', ttl: '1h' }),
      }),
    ).toMatch(/^system\.0\.cache_control: a breakpoint with ttl '1h' cannot come after one with ttl '5m' \(tools\.0/);
    expect(
      await send({
        tools: [{ name: 'A', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral', ttl: '1h' } }],
        system: block(cc),
      }),
    ).toBe('ok');
    // The top-level (automatic) breakpoint takes a slot of the four.
    const four = Array.from({ length: 4 }, (_, i) => ({ type: 'text', text: `part ${i}`, cache_control: cc }));
    expect(await send({ messages: [{ role: 'user', content: four }], cache_control: cc })).toBe(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });
});
