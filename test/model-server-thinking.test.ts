/**
 * Extended thinking on the scripted model server, driven by the real `@anthropic-ai/sdk`: thinking
 * streamed and signed as the API does, thinking sent back checked against its signature, and the
 * API's rules for the `thinking` and `output_config` parameters.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ScriptedModelServer, type ScriptedModelServerOptions, type ScriptedSession } from '../src/model-server';
import { validateMessagesRequest } from '../src/model-server/validate';
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

/** Status and `error.message` of a raw request, so any body can be sent, types aside. */
async function answerTo(server: ScriptedModelServer, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test', ...headers },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { error?: { type: string; message: string } } & Partial<Anthropic.Message>;
  return { status: res.status, message: json.error?.message, type: json.error?.type, json };
}

const THOUGHT = 'The user wants the file. I should read a.txt first, then answer.';
const tools: Anthropic.Tool[] = [{ name: 'Read', input_schema: { type: 'object' } }];
const ask: Anthropic.MessageParam = { role: 'user', content: 'What does a.txt say?' };
const adaptive = { type: 'adaptive' } as const;

/** Turn 0 thinks, says a word and reads a file; turn 1 answers. */
const thinkingSession: ScriptedSession = {
  replies: [
    {
      content: [
        { type: 'thinking', thinking: THOUGHT },
        { type: 'text', text: 'Let me read it.' },
        { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'a.txt' } },
      ],
    },
    { content: [{ type: 'text', text: 'It says hello.' }] },
  ],
};

/** The request that sends `assistant` back with the tool's result. */
function followUp(assistant: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: MODEL,
    max_tokens: 2048,
    tools,
    thinking: adaptive,
    messages: [
      ask,
      { role: 'assistant', content: assistant },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_read', content: 'hello' }] },
    ],
    ...extra,
  };
}

/** Turn 0 streamed through the SDK, with every raw event it saw. */
async function streamTurn0(server: ScriptedModelServer, params: Partial<Anthropic.MessageStreamParams> = {}) {
  const events: Anthropic.MessageStreamEvent[] = [];
  const stream = clientFor(server).messages.stream({
    model: MODEL,
    max_tokens: 2048,
    tools,
    thinking: adaptive,
    messages: [ask],
    ...params,
  });
  stream.on('streamEvent', (event) => events.push(event));
  return { message: await stream.finalMessage(), events };
}

describe('thinking in replies', () => {
  it('streams a thinking block as the API does: empty start, thinking deltas, signature last', async () => {
    const server = await startServer(thinkingSession);
    const { message, events } = await streamTurn0(server);

    const [thinking, text, toolUse] = message.content;
    expect(thinking).toEqual({ type: 'thinking', thinking: THOUGHT, signature: expect.any(String) });
    expect((thinking as Anthropic.ThinkingBlock).signature).toMatch(/^[A-Za-z0-9+/]{20,}={0,2}$/);
    expect(text).toMatchObject({ type: 'text', text: 'Let me read it.' });
    expect(toolUse).toMatchObject({ type: 'tool_use', id: 'toolu_read', input: { file_path: 'a.txt' } });

    const ofBlock0 = events.filter((e) => 'index' in e && e.index === 0);
    expect(ofBlock0[0]).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    const deltaTypes = ofBlock0.flatMap((e) => (e.type === 'content_block_delta' ? [e.delta.type] : []));
    expect(deltaTypes.filter((t) => t === 'thinking_delta').length).toBeGreaterThan(1);
    expect(deltaTypes.at(-1)).toBe('signature_delta');
    expect(ofBlock0.at(-1)?.type).toBe('content_block_stop');
  });

  it('sends the blocks whole without streaming, and counts the thinking in output_tokens', async () => {
    const thinkingOnly = await startServer({
      replies: [{ content: [{ type: 'thinking', thinking: 'x'.repeat(400) }] }],
    });
    const textOnly = await startServer({ replies: [{ content: [] }] });
    const params = { model: MODEL, max_tokens: 2048, thinking: adaptive, messages: [ask] };
    const thought = await clientFor(thinkingOnly).messages.create(params);
    expect(thought.content).toEqual([{ type: 'thinking', thinking: 'x'.repeat(400), signature: expect.any(String) }]);
    const empty = await clientFor(textOnly).messages.create(params);
    expect(thought.usage.output_tokens - empty.usage.output_tokens).toBeGreaterThanOrEqual(99);
  });

  it('accepts the thinking sent back unchanged, and refuses it with one character changed', async () => {
    const server = await startServer(thinkingSession);
    const { message } = await streamTurn0(server);
    const reply = await clientFor(server)
      .messages.stream(followUp(message.content) as Anthropic.MessageStreamParams)
      .finalMessage();
    expect(reply.content).toMatchObject([{ type: 'text', text: 'It says hello.' }]);

    const thinking = message.content[0] as Anthropic.ThinkingBlock;
    const changed = { ...thinking, thinking: thinking.thinking.replace('read', 'reed') };
    const answer = await answerTo(server, followUp([changed, ...message.content.slice(1)]));
    expect(answer).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      message: 'messages.1.content.0: Invalid `signature` in `thinking` block',
    });
  });

  it('refuses a made-up signature, an empty one, and one another server made', async () => {
    const server = await startServer(thinkingSession);
    const other = await startServer(thinkingSession);
    const { message } = await streamTurn0(server);
    const { message: fromOther } = await streamTurn0(other);
    const thinking = message.content[0] as Anthropic.ThinkingBlock;
    const rest = message.content.slice(1);
    const signatures = ['EqQBCkYIBxgCKkA0c2lnbmVk', '', (fromOther.content[0] as Anthropic.ThinkingBlock).signature];
    for (const signature of signatures) {
      expect(await answerTo(server, followUp([{ ...thinking, signature }, ...rest]))).toMatchObject({
        status: 400,
        message: 'messages.1.content.0: Invalid `signature` in `thinking` block',
      });
    }
    const { signature: _dropped, ...unsigned } = thinking;
    expect((await answerTo(server, followUp([unsigned, ...rest]))).message).toBe(
      'messages.1.content.0.thinking.signature: Field required',
    );
  });

  it('accepts thinking across servers that share a key', async () => {
    const first = await startServer(thinkingSession, { thinkingKey: 'shared' });
    const second = await startServer(thinkingSession, { thinkingKey: 'shared' });
    const { message } = await streamTurn0(first);
    expect((await answerTo(second, followUp(message.content))).status).toBe(200);
  });

  it('sends redacted thinking whole in content_block_start, and refuses it changed', async () => {
    const server = await startServer({
      replies: [
        {
          content: [
            { type: 'redacted_thinking', data: 'secret reasoning' },
            { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'a.txt' } },
          ],
        },
        { content: [{ type: 'text', text: 'done' }] },
      ],
    });
    const { message, events } = await streamTurn0(server);
    const redacted = message.content[0] as Anthropic.RedactedThinkingBlock;
    expect(redacted).toEqual({ type: 'redacted_thinking', data: expect.stringMatching(/^[A-Za-z0-9+/]+={0,2}$/) });
    expect(events.find((e) => e.type === 'content_block_start' && e.index === 0)).toMatchObject({
      content_block: { type: 'redacted_thinking', data: redacted.data },
    });
    expect(events.some((e) => e.type === 'content_block_delta' && e.index === 0)).toBe(false);
    expect((await answerTo(server, followUp(message.content))).status).toBe(200);

    const flipped = redacted.data.startsWith('A') ? `B${redacted.data.slice(1)}` : `A${redacted.data.slice(1)}`;
    for (const data of [flipped, 'bm90IGZyb20gdGhlIHNlcnZlcg==']) {
      expect(await answerTo(server, followUp([{ ...redacted, data }, message.content[1]]))).toMatchObject({
        status: 400,
        message: 'messages.1.content.0: Invalid `data` in `redacted_thinking` block',
      });
    }
  });

  it("with display 'omitted', sends the thinking empty but signed, and still bills it", async () => {
    const server = await startServer(thinkingSession);
    const { message } = await streamTurn0(server, { thinking: { type: 'adaptive', display: 'omitted' } });
    expect(message.content[0]).toEqual({ type: 'thinking', thinking: '', signature: expect.any(String) });
    expect(message.usage.output_tokens).toBeGreaterThanOrEqual(Math.ceil(THOUGHT.length / 4));
    expect((await answerTo(server, followUp(message.content))).status).toBe(200);
  });

  it('ends a stream cut mid-thought before the signature, leaving the client unsigned thinking', async () => {
    const server = await startServer({
      ...thinkingSession,
      faults: [{ turn: 0, attempt: 1, kind: 'stream_error', midBlock: true, errorType: 'overloaded_error' }],
    });
    const events: Anthropic.MessageStreamEvent[] = [];
    const stream = clientFor(server).messages.stream({
      model: MODEL,
      max_tokens: 2048,
      thinking: adaptive,
      messages: [ask],
    });
    stream.on('streamEvent', (event) => events.push(event));
    await expect(stream.finalMessage()).rejects.toThrow(/Overloaded/);
    expect(stream.currentMessage?.content).toEqual([{ type: 'thinking', thinking: THOUGHT, signature: '' }]);
    expect(events.map((e) => (e.type === 'content_block_delta' ? e.delta.type : e.type))).not.toContain(
      'signature_delta',
    );
    expect(events.some((e) => e.type === 'content_block_stop')).toBe(false);
  });

  it('refuses to answer with thinking a request that did not turn thinking on', async () => {
    const server = await startServer(thinkingSession);
    for (const thinking of [undefined, { type: 'disabled' }]) {
      const answer = await answerTo(server, { model: MODEL, max_tokens: 2048, messages: [ask], thinking });
      expect(answer.status).toBe(400);
      expect(answer.message).toMatch(/reply for turn 0 .* holds thinking, but the request does not turn thinking on/);
    }
  });

  it('refuses a script whose redacted thinking is empty or whose compaction summary thinks', async () => {
    await expect(
      ScriptedModelServer.start({ replies: [{ content: [{ type: 'redacted_thinking', data: '' }] }] }),
    ).rejects.toThrow(/replies\.0\.content\.0\.data/);
    await expect(
      ScriptedModelServer.start({
        replies: [],
        compactions: { replies: [{ content: [{ type: 'thinking', thinking: 'hmm' }] }] },
      }),
    ).rejects.toThrow(/can only hold text blocks/);
  });
});

describe('a tool loop with thinking on', () => {
  const withoutThinking = [
    { type: 'text', text: 'Let me read it.' },
    { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'a.txt' } },
  ];

  it('accepts an assistant message without thinking under adaptive thinking: the model may skip it', async () => {
    const server = await startServer(thinkingSession);
    expect((await answerTo(server, followUp(withoutThinking))).status).toBe(200);
  });

  it('with manual thinking, refuses a tool loop whose assistant turn does not start with its thinking', async () => {
    const server = await startServer(thinkingSession);
    const manual = { thinking: { type: 'enabled', budget_tokens: 1024 } };
    const answer = await answerTo(server, followUp(withoutThinking, manual));
    expect(answer.status).toBe(400);
    expect(answer.message).toBe(
      'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. ' +
        'When `thinking` is enabled, a final `assistant` message must start with a thinking block ' +
        '(preceeding the lastmost set of `tool_use` and `tool_result` blocks). ' +
        'We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. ' +
        'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking',
    );

    // The thinking kept in front: accepted, and only the turn's first assistant message must think.
    const { message } = await streamTurn0(server, { thinking: { type: 'enabled', budget_tokens: 1024 } });
    const kept = followUp(message.content, manual);
    expect((await answerTo(server, kept)).status).toBe(200);
    const secondStep = {
      ...kept,
      messages: [
        ...kept.messages,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_again', name: 'Read', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_again', content: 'hello' }] },
      ],
    };
    expect(validateMessagesRequest(secondStep)).toBeUndefined();
    // A conversation that has moved on past the loop makes no demand on it.
    const movedOn = { ...kept, messages: [...kept.messages.slice(0, 1), { role: 'assistant', content: 'hi' }, ask] };
    expect(validateMessagesRequest(movedOn)).toBeUndefined();
  });
});

describe('thinking and output_config parameters', () => {
  async function problemOf(extra: Record<string, unknown>, headers: Record<string, string> = {}) {
    const ok = { content: [{ type: 'text' as const, text: 'ok' }] };
    const server = await startServer({ replies: [ok, ok] });
    const answer = await answerTo(
      server,
      { model: MODEL, max_tokens: 4096, messages: [ask], tools, ...extra },
      headers,
    );
    return answer.status === 200 ? undefined : answer.message;
  }

  it('takes a manual budget of at least 1024 tokens, below max_tokens', async () => {
    expect(await problemOf({ thinking: { type: 'enabled', budget_tokens: 1024 } })).toBeUndefined();
    expect(await problemOf({ thinking: { type: 'enabled', budget_tokens: 1023 } })).toBe(
      'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
    );
    const tooBig =
      '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at ' +
      'https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
    expect(await problemOf({ thinking: { type: 'enabled', budget_tokens: 4096 } })).toBe(tooBig);
    expect(await problemOf({ thinking: { type: 'enabled', budget_tokens: 8000 } })).toBe(tooBig);
    // Interleaved thinking spreads the budget over the turn, so it may exceed max_tokens.
    const interleaved = { 'anthropic-beta': 'context-management-2025-06-27, interleaved-thinking-2025-05-14' };
    expect(await problemOf({ thinking: { type: 'enabled', budget_tokens: 8000 } }, interleaved)).toBeUndefined();
    expect(await problemOf({ thinking: { type: 'enabled' } })).toBe('thinking.enabled.budget_tokens: Field required');
    expect(await problemOf({ thinking: { type: 'enabled', budget_tokens: 2048.5 } })).toBe(
      'thinking.enabled.budget_tokens: Input should be a valid integer',
    );
  });

  it('takes adaptive (with a display), disabled and between_tools, and refuses anything else', async () => {
    for (const thinking of [
      { type: 'adaptive' },
      { type: 'adaptive', display: 'summarized' },
      { type: 'adaptive', display: 'omitted' },
      { type: 'adaptive', display: 'updates' },
      { type: 'enabled', budget_tokens: 2048, display: 'omitted' },
      { type: 'disabled' },
      { type: 'between_tools' },
    ]) {
      expect(await problemOf({ thinking })).toBeUndefined();
    }
    expect(await problemOf({ thinking: { type: 'on' } })).toBe(
      "thinking: Input tag 'on' found using 'type' does not match any of the expected tags: " +
        "'enabled', 'disabled', 'between_tools', 'adaptive'",
    );
    expect(await problemOf({ thinking: {} })).toBe("thinking: Unable to extract tag using discriminator 'type'");
    expect(await problemOf({ thinking: { type: 'adaptive', display: 'full' } })).toBe(
      "thinking.adaptive.display: Input should be 'summarized', 'omitted' or 'updates'",
    );
    expect(await problemOf({ thinking: { type: 'disabled', budget_tokens: 2048 } })).toBe(
      'thinking.disabled.budget_tokens: Extra inputs are not permitted',
    );
  });

  it('takes each effort level and refuses any other', async () => {
    for (const effort of ['low', 'medium', 'high', 'xhigh', 'max']) {
      expect(await problemOf({ thinking: adaptive, output_config: { effort } })).toBeUndefined();
    }
    expect(await problemOf({ output_config: { effort: 'extreme' } })).toBe(
      "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
    );
  });

  it('forces a tool with adaptive thinking, not with manual thinking', async () => {
    for (const tool_choice of [{ type: 'any' }, { type: 'tool', name: 'Read' }]) {
      expect(await problemOf({ thinking: adaptive, tool_choice })).toBeUndefined();
      expect(await problemOf({ thinking: { type: 'enabled', budget_tokens: 2048 }, tool_choice })).toBe(
        'Thinking may not be enabled when tool_choice forces tool use.',
      );
    }
  });

  it("accepts Claude Code's context_management and a system message inside messages", async () => {
    const claudeCodeLike = {
      thinking: { type: 'adaptive', display: 'updates' },
      output_config: { effort: 'medium' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    };
    const environment = '# Environment\nYou are in /work.';
    expect(await problemOf({ ...claudeCodeLike, messages: [ask, { role: 'system', content: environment }] })).toBe(
      undefined,
    );
    const loop = followUp(
      [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'a.txt' } }],
      claudeCodeLike,
    );
    const [first, ...rest] = loop.messages;
    const withSystem = [first, { role: 'system', content: [{ type: 'text', text: environment }] }, ...rest];
    expect(await problemOf({ ...loop, messages: withSystem })).toBeUndefined();

    // It must follow a user turn: not open the conversation, not follow the model's message.
    const system = { role: 'system', content: environment };
    expect(await problemOf({ messages: [system, ask] })).toBe(
      'messages.0: a `system` message must come right after a `user` message',
    );
    const afterAssistant = [...loop.messages.slice(0, 2), system, loop.messages[2]];
    expect(await problemOf({ ...loop, messages: afterAssistant })).toBe(
      'messages.2: a `system` message must come right after a `user` message',
    );
  });
});

describe('conversations that hold thinking elsewhere', () => {
  it('finds the turn of a trimmed conversation by the signed reply it ends with', async () => {
    const read = (id: string) => ({ type: 'tool_use' as const, id, name: 'Read', input: { file_path: 'a.txt' } });
    const server = await startServer({
      replies: [
        { content: [{ type: 'thinking', thinking: 'first look' }, read('toolu_a')] },
        { content: [{ type: 'thinking', thinking: 'second look' }, read('toolu_b')] },
        { content: [{ type: 'text', text: 'turn 2' }] },
      ],
    });
    const client = clientFor(server);
    const messages: Anthropic.MessageParam[] = [ask];
    for (const id of ['toolu_a', 'toolu_b']) {
      const reply = await client.messages.create({ model: MODEL, max_tokens: 2048, thinking: adaptive, messages });
      messages.push({ role: 'assistant', content: reply.content });
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'hello' }] });
    }
    // The oldest exchange dropped: one assistant message left, but the conversation is on turn 2.
    const trimmed = [{ role: 'user' as const, content: 'Earlier messages omitted.' }, ...messages.slice(3)];
    const reply = await client.messages.create({
      model: MODEL,
      max_tokens: 2048,
      thinking: adaptive,
      messages: trimmed,
    });
    expect(reply.content).toMatchObject([{ type: 'text', text: 'turn 2' }]);
    expect(server.requests.map((r) => r.turn)).toEqual([0, 1, 2]);
  });

  it('counts their tokens and summarises them', async () => {
    const server = await startServer(thinkingSession);
    const { message } = await streamTurn0(server);
    const messages = followUp(message.content).messages as Anthropic.MessageParam[];
    const client = clientFor(server);
    const counted = await client.messages.countTokens({ model: MODEL, messages, thinking: adaptive });
    expect(counted.input_tokens).toBeGreaterThan(Math.ceil(THOUGHT.length / 4));

    const summary = await client.messages.create({
      model: MODEL,
      max_tokens: 2048,
      thinking: adaptive,
      messages: [
        ...messages,
        { role: 'assistant', content: 'It says hello.' },
        { role: 'user', content: COMPACTION_PROMPT_MARKER },
      ],
    });
    expect(summary.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('<summary>') });
    expect(server.compactionRequests()).toHaveLength(1);
  });
});
