/**
 * The scripted model server, driven by the real `@anthropic-ai/sdk`: if the SDK parses what the
 * server sends and rejects what it rejects, agent-loop tests against it mean something.
 */
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScriptedSession, ScriptedModelServer, type ScriptedSession } from '../src/model-server';

const MODEL = 'claude-test-model';
const servers: ScriptedModelServer[] = [];

async function startServer(session: ScriptedSession): Promise<ScriptedModelServer> {
  const server = await ScriptedModelServer.start(session);
  servers.push(server);
  return server;
}

function clientFor(server: ScriptedModelServer, maxRetries = 0): Anthropic {
  return new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries });
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Await a promise that must reject, and return the rejection. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** Like `rejectionOf`, narrowed to an API error with the given status. */
async function apiErrorOf(promise: Promise<unknown>, status: number): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(Anthropic.APIError);
  const apiError = error as InstanceType<typeof Anthropic.APIError>;
  expect(apiError.status).toBe(status);
  return apiError;
}

/** The body's `error.type` of an API error (the SDK keeps the whole JSON body in `.error`). */
function bodyErrorType(error: InstanceType<typeof Anthropic.APIError>): unknown {
  return (error.error as { error?: { type?: unknown } } | undefined)?.error?.type;
}

/** Raw POST for requests the SDK's types (or its auth handling) would not let us send. */
async function post(
  server: ScriptedModelServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'x-api-key': 'test' },
) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: res.status,
    headers: res.headers,
    json: (await res.json()) as { type: string; error: { type: string; message: string }; request_id?: string },
  };
}

const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello' }];
const toolUse = { type: 'tool_use' as const, id: 'toolu_01', name: 'Read', input: { path: 'a.txt' } };

describe('streaming', () => {
  it('streams a text reply that the SDK reassembles into the scripted content', async () => {
    const text = 'The quick brown fox jumps over the lazy dog, twice over. 🦊';
    const server = await startServer({ replies: [{ content: [{ type: 'text', text }] }] });
    const stream = clientFor(server).messages.stream({ model: MODEL, max_tokens: 100, messages: hello });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();

    expect(message.content).toEqual([{ type: 'text', text }]);
    expect(deltas.length).toBeGreaterThan(1);
    expect(message.id).toMatch(/^msg_/);
    expect(message.model).toBe(MODEL);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(1);
    expect(stream.request_id).toMatch(/^req_/);
  });

  it('reassembles tool_use input from several input_json_delta events', async () => {
    const input = { path: 'src/index.ts', lines: [1, 2, 3], options: { follow: true, note: 'ünïcödé' } };
    const server = await startServer({
      replies: [
        {
          content: [
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 'toolu_9', name: 'Read', input },
          ],
        },
      ],
    });
    const client = clientFor(server);

    const message = await client.messages.stream({ model: MODEL, max_tokens: 100, messages: hello }).finalMessage();
    expect(message.content[1]).toEqual({ type: 'tool_use', id: 'toolu_9', name: 'Read', input });
    expect(message.stop_reason).toBe('tool_use');

    // The raw event stream from create({ stream: true }) shows the wire protocol itself.
    const raw = await client.messages.create({ model: MODEL, max_tokens: 100, messages: hello, stream: true });
    const events: Anthropic.RawMessageStreamEvent[] = [];
    for await (const event of raw) events.push(event);
    expect(events[0]?.type).toBe('message_start');
    expect(events.at(-1)?.type).toBe('message_stop');
    const toolStart = events.find((e) => e.type === 'content_block_start' && e.index === 1);
    expect(toolStart).toMatchObject({ content_block: { type: 'tool_use', id: 'toolu_9', input: {} } });
    const partials = events.flatMap((e) =>
      e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' ? [e.delta.partial_json] : [],
    );
    expect(partials.length).toBeGreaterThan(1);
    expect(JSON.parse(partials.join(''))).toEqual(input);
    expect(events.find((e) => e.type === 'message_delta')).toMatchObject({
      delta: { stop_reason: 'tool_use', stop_sequence: null },
    });
  });

  it('honours an explicit stop_reason and usage override', async () => {
    const server = await startServer({
      replies: [
        {
          content: [{ type: 'text', text: 'cut' }],
          stop_reason: 'max_tokens',
          usage: { input_tokens: 7, cache_read_input_tokens: 3 },
        },
      ],
    });
    const message = await clientFor(server)
      .messages.stream({ model: MODEL, max_tokens: 1, messages: hello })
      .finalMessage();
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage).toMatchObject({
      input_tokens: 7,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 0,
    });
  });
});

/** Every raw event of a streamed reply, as `messages.create({ stream: true })` yields them. */
async function rawEvents(client: Anthropic, messages = hello): Promise<Anthropic.RawMessageStreamEvent[]> {
  const raw = await client.messages.create({ model: MODEL, max_tokens: 100, messages, stream: true });
  const events: Anthropic.RawMessageStreamEvent[] = [];
  for await (const event of raw) events.push(event);
  return events;
}

describe('stop reasons', () => {
  it('refusal: stop_details arrives with the stop_reason on message_delta, defaulting to null fields', async () => {
    const details = { type: 'refusal' as const, category: 'cyber', explanation: 'This could enable cyber harm.' };
    const server = await startServer({
      replies: [
        { content: [{ type: 'text', text: 'Hello..' }], stop_reason: 'refusal', stop_details: details },
        { content: [{ type: 'text', text: 'Hello..' }], stop_reason: 'refusal' },
      ],
    });
    const client = clientFor(server);
    const message = await client.messages.stream({ model: MODEL, max_tokens: 100, messages: hello }).finalMessage();
    expect(message.stop_reason).toBe('refusal');
    expect(message.stop_details).toEqual(details);
    expect(message.content).toEqual([{ type: 'text', text: 'Hello..' }]);

    const events = await rawEvents(client);
    expect(events[0]).toMatchObject({ message: { stop_reason: null, stop_details: null } });
    expect(events.find((e) => e.type === 'message_delta')).toMatchObject({
      delta: { stop_reason: 'refusal', stop_details: details },
    });

    const next: Anthropic.MessageParam[] = [
      ...hello,
      { role: 'assistant', content: 'x' },
      { role: 'user', content: 'y' },
    ];
    const bare = await client.messages.create({ model: MODEL, max_tokens: 100, messages: next });
    expect(bare.stop_details).toEqual({ type: 'refusal', category: null, explanation: null });
  });

  it('pause_turn and model_context_window_exceeded stream like any reply, stop_details null', async () => {
    const server = await startServer({
      replies: [
        { content: [{ type: 'text', text: 'Still searching.' }], stop_reason: 'pause_turn' },
        { content: [{ type: 'text', text: 'The window is full' }], stop_reason: 'model_context_window_exceeded' },
      ],
    });
    const client = clientFor(server);
    const paused = await client.messages.stream({ model: MODEL, max_tokens: 100, messages: hello }).finalMessage();
    expect(paused.stop_reason).toBe('pause_turn');
    expect(paused.stop_details).toBeNull();
    expect(paused.content).toEqual([{ type: 'text', text: 'Still searching.' }]);

    // pause_turn is continued by sending the reply back as the final message, as is.
    const continued = await client.messages
      .stream({ model: MODEL, max_tokens: 100, messages: [...hello, { role: 'assistant', content: paused.content }] })
      .finalMessage();
    expect(continued.stop_reason).toBe('model_context_window_exceeded');
    expect(continued.content).toEqual([{ type: 'text', text: 'The window is full' }]);
  });

  it('a tool_use cut by max_tokens streams its partial JSON, closes the block, then says max_tokens', async () => {
    const input = {
      file_path: 'src/app.ts',
      edits: [
        { old_string: 'alpha', new_string: 'beta' },
        { old_string: 'gamma', new_string: 'delta' },
      ],
    };
    const json = JSON.stringify(input);
    const partial_json = json.slice(0, json.indexOf('{"old_string":"gamma"') + '{"old_str'.length);
    const server = await startServer({
      replies: [
        {
          content: [
            { type: 'text', text: 'Applying both edits.' },
            { type: 'tool_use', id: 'toolu_cut', name: 'MultiEdit', input, partial_json },
          ],
          stop_reason: 'max_tokens',
        },
      ],
    });
    const client = clientFor(server);

    const events = await rawEvents(client);
    const types = events.map((e) => (e.type === 'content_block_delta' ? `delta:${e.index}` : e.type));
    expect(types.slice(-4)).toEqual(['delta:1', 'content_block_stop', 'message_delta', 'message_stop']);
    const partials = events.flatMap((e) =>
      e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' ? [e.delta.partial_json] : [],
    );
    expect(partials.join('')).toBe(partial_json);
    expect(events.find((e) => e.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'max_tokens' } });

    // What the SDK makes of it: its partial-JSON parser keeps the first edit and an empty second.
    const message = await client.messages.stream({ model: MODEL, max_tokens: 100, messages: hello }).finalMessage();
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content[1]).toEqual({
      type: 'tool_use',
      id: 'toolu_cut',
      name: 'MultiEdit',
      input: { file_path: 'src/app.ts', edits: [{ old_string: 'alpha', new_string: 'beta' }, {}] },
    });
  });

  it('a Bash call cut before its timeout reaches the SDK without one', async () => {
    const input = { command: 'npm test', timeout: 600000 };
    const server = await startServer({
      replies: [
        {
          content: [
            { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input, partial_json: '{"command":"npm test","tim' },
          ],
          stop_reason: 'max_tokens',
        },
        {
          content: [{ type: 'tool_use', id: 'toolu_empty', name: 'Bash', input, partial_json: '' }],
          stop_reason: 'model_context_window_exceeded',
        },
      ],
    });
    const client = clientFor(server);
    const cut = await client.messages.stream({ model: MODEL, max_tokens: 100, messages: hello }).finalMessage();
    expect(cut.content).toEqual([{ type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'npm test' } }]);

    // Cut before the first byte of input: the SDK shows an empty object.
    const next: Anthropic.MessageParam[] = [
      ...hello,
      { role: 'assistant', content: 'x' },
      { role: 'user', content: 'y' },
    ];
    const empty = await client.messages.stream({ model: MODEL, max_tokens: 100, messages: next }).finalMessage();
    expect(empty.stop_reason).toBe('model_context_window_exceeded');
    expect(empty.content).toEqual([{ type: 'tool_use', id: 'toolu_empty', name: 'Bash', input: {} }]);
  });

  it('refuses scripts the API could not produce', async () => {
    const cutBlock = { type: 'tool_use' as const, id: 't1', name: 'Bash', input: {}, partial_json: '{"comm' };
    await expect(
      ScriptedModelServer.start({
        replies: [{ content: [cutBlock, { type: 'text', text: 'after' }], stop_reason: 'max_tokens' }],
      }),
    ).rejects.toThrow(/replies\.0\.content\.0\.partial_json: only the last block of a reply can be cut off/);
    await expect(ScriptedModelServer.start({ replies: [{ content: [cutBlock] }] })).rejects.toThrow(
      /replies\.0\.stop_reason: a reply cut inside a tool_use needs stop_reason/,
    );
    await expect(
      ScriptedModelServer.start({
        replies: [
          {
            content: [{ type: 'text', text: 'x' }],
            stop_reason: 'end_turn',
            stop_details: { type: 'refusal', category: null, explanation: null },
          },
        ],
      }),
    ).rejects.toThrow(/replies\.0\.stop_details: stop_details needs stop_reason 'refusal'/);
  });
});

describe('non-streaming', () => {
  it('answers messages.create with the scripted Message', async () => {
    const server = await startServer({ replies: [{ content: [{ type: 'text', text: 'hi' }, toolUse] }] });
    const message = await clientFor(server).messages.create({ model: MODEL, max_tokens: 100, messages: hello });
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: 'hi' }, toolUse],
      stop_reason: 'tool_use',
      stop_sequence: null,
    });
    expect(message._request_id).toMatch(/^req_/);
  });

  it('answers count_tokens with a rough estimate', async () => {
    const server = await startServer({ replies: [] });
    const count = await clientFor(server).messages.countTokens({
      model: MODEL,
      messages: [{ role: 'user', content: 'x'.repeat(400) }],
    });
    expect(count.input_tokens).toBeGreaterThanOrEqual(100);
    expect(server.requests).toHaveLength(0); // count_tokens is not a turn
  });
});

describe('request validation', () => {
  const replies = [{ content: [toolUse] }, { content: [{ type: 'text' as const, text: 'done' }] }];

  async function expectInvalid(
    messages: Anthropic.MessageParam[],
    messagePattern: RegExp,
    extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {},
  ) {
    const server = await startServer({ replies });
    const error = await apiErrorOf(
      clientFor(server).messages.create({ model: MODEL, max_tokens: 10, messages, ...extra }),
      400,
    );
    expect(bodyErrorType(error)).toBe('invalid_request_error');
    expect(error.type).toBe('invalid_request_error');
    expect(error.apiMessage).toMatch(messagePattern);
    return error;
  }

  it('accepts a tool_use answered by a tool_result in the next user message', async () => {
    const server = await startServer({ replies });
    const message = await clientFor(server).messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [
        ...hello,
        { role: 'assistant', content: [toolUse] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01', content: 'file body' },
            { type: 'text', text: 'go on' },
          ],
        },
      ],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(server.requests.map((r) => [r.turn, r.attempt])).toEqual([[1, 1]]);
  });

  describe('images and documents inside a tool_result', () => {
    // A whole 2x2 PNG, and the same cut short.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==';
    const cutPng = Buffer.from(png, 'base64').subarray(0, 40).toString('base64');
    const pdf = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');
    const withResult = (content: unknown): Anthropic.MessageParam[] => [
      ...hello,
      { role: 'assistant', content: [toolUse] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content } as Anthropic.ToolResultBlockParam],
      },
    ];
    const image = (media_type: string, data: string) => ({
      type: 'image',
      source: { type: 'base64', media_type, data },
    });

    it('accepts a base64 image and a PDF document, as the API does', async () => {
      const server = await startServer({ replies });
      const message = await clientFor(server).messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: withResult([
          image('image/png', png),
          { type: 'text', text: 'PDF file read: a.pdf' },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } },
        ]),
      });
      expect(message.content).toEqual([{ type: 'text', text: 'done' }]);
    });

    it.each([
      [
        'an unsupported media type',
        image('image/bmp', png),
        /content\.0\.image\.source\.base64\.media_type: Input should be 'image\/jpeg'/,
      ],
      [
        'data that is not base64',
        image('image/png', 'not base64!'),
        /content\.0\.image\.source\.base64\.data: Invalid base64 data/,
      ],
      [
        'a media type the bytes do not match',
        image('image/jpeg', png),
        /Image does not match the provided media type image\/jpeg/,
      ],
      ['an image cut short', image('image/png', cutPng), /^Could not process image$/],
      [
        'a document that is not a PDF',
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: Buffer.from('hello').toString('base64') },
        },
        /document\.source\.base64\.data: The PDF specified was not valid\./,
      ],
    ])('refuses %s', async (_label, block, pattern) => {
      await expectInvalid(withResult([block]), pattern);
    });
  });

  it('accepts consecutive messages with the same role (the API merges them)', async () => {
    const server = await startServer({ replies: [...replies, { content: [{ type: 'text', text: 'merged ok' }] }] });
    const message = await clientFor(server).messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [
        ...hello,
        { role: 'user', content: 'and more' },
        { role: 'assistant', content: [toolUse] },
        { role: 'assistant', content: [{ type: 'text', text: 'let me look' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'x' }] },
        { role: 'user', content: 'thanks' },
      ],
    });
    // Two assistant messages in the request, so this is turn 2.
    expect(message.content).toEqual([{ type: 'text', text: 'merged ok' }]);
    expect(server.requests.map((r) => r.turn)).toEqual([2]);
  });

  it('rejects a tool_use without a tool_result in the next message', async () => {
    await expectInvalid(
      [...hello, { role: 'assistant', content: [toolUse] }, { role: 'user', content: 'no result here' }],
      /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01\./,
    );
  });

  it('rejects a tool_use as the last message', async () => {
    await expectInvalid([...hello, { role: 'assistant', content: [toolUse] }], /tool_use` ids were found without/);
  });

  it('rejects a tool_result whose id matches no tool_use of the previous assistant message', async () => {
    await expectInvalid(
      [
        ...hello,
        { role: 'assistant', content: [toolUse] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01', content: 'ok' },
            { type: 'tool_result', tool_use_id: 'toolu_bogus', content: 'ok' },
          ],
        },
      ],
      /^messages\.2\.content\.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_bogus\./,
    );
  });

  it('rejects a tool_result after an assistant message without tool_use', async () => {
    await expectInvalid(
      [
        ...hello,
        { role: 'assistant', content: 'plain' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'x' }] },
      ],
      /unexpected `tool_use_id`/,
    );
  });

  it('rejects text placed before the tool_result blocks', async () => {
    await expectInvalid(
      [
        ...hello,
        { role: 'assistant', content: [toolUse] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'first' },
            { type: 'tool_result', tool_use_id: 'toolu_01', content: 'ok' },
          ],
        },
      ],
      /^messages\.2: Did not find 1 `tool_result` block\(s\) at the beginning of this message/,
    );
  });

  it('rejects empty text blocks and empty string content', async () => {
    await expectInvalid(
      [{ role: 'user', content: [{ type: 'text', text: '' }] }],
      /text content blocks must be non-empty/,
    );
    await expectInvalid(
      [{ role: 'user', content: [{ type: 'text', text: 'ok' }] }],
      /system: text content blocks must be non-empty/,
      {
        system: [{ type: 'text', text: '' }],
      },
    );
    await expectInvalid(
      [
        { role: 'user', content: '' },
        { role: 'assistant', content: 'x' },
        { role: 'user', content: 'y' },
      ],
      /^messages\.0: all messages must have non-empty content/,
    );
  });

  it('rejects an assistant message with empty content unless it is the final one (a prefill)', async () => {
    // What an agent loop gets by writing a reply that came back empty into its transcript.
    await expectInvalid(
      [...hello, { role: 'assistant', content: [] }, { role: 'user', content: 'go on' }],
      /^messages\.1: all messages must have non-empty content except for the optional final assistant message$/,
    );
    await expectInvalid(
      [...hello, { role: 'assistant', content: '' }, { role: 'user', content: 'go on' }],
      /^messages\.1: all messages must have non-empty content/,
    );
    // The prefill counts as the turn's first assistant message, so turn 1 answers it.
    const server = await startServer({
      replies: [{ content: [{ type: 'text', text: 'unused' }] }, { content: [{ type: 'text', text: 'prefilled' }] }],
    });
    const message = await clientFor(server).messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [...hello, { role: 'assistant', content: [] }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'prefilled' }]);
  });

  it('rejects whitespace-only text, and a final assistant message ending in whitespace', async () => {
    await expectInvalid(
      [...hello, { role: 'assistant', content: [{ type: 'text', text: '\n\n' }] }, { role: 'user', content: 'and?' }],
      /^messages: text content blocks must contain non-whitespace text$/,
    );
    await expectInvalid(
      [{ role: 'user', content: '   ' }],
      /^messages: text content blocks must contain non-whitespace text$/,
    );
    await expectInvalid(
      [...hello, { role: 'assistant', content: [{ type: 'text', text: 'Let me think ' }] }],
      /^messages: final assistant content cannot end with trailing whitespace$/,
    );
    // The same text is fine once something follows it.
    const server = await startServer({ replies });
    const message = await clientFor(server).messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [...hello, { role: 'assistant', content: 'Let me think ' }, { role: 'user', content: 'go on' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'done' }]);
  });

  it('rejects tool_use ids that do not fit the pattern or repeat, and inputs that are not objects', async () => {
    const answered = (id: string): Anthropic.MessageParam => ({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }],
    });
    await expectInvalid(
      [
        ...hello,
        { role: 'assistant', content: [{ ...toolUse, id: 'functions.Bash:0' }] },
        answered('functions.Bash:0'),
      ],
      /^messages\.1\.content\.0\.tool_use\.id: String should match pattern '\^\[a-zA-Z0-9_-\]\+\$'$/,
    );
    await expectInvalid(
      [
        ...hello,
        { role: 'assistant', content: [toolUse] },
        answered('toolu_01'),
        { role: 'assistant', content: [{ type: 'text', text: 'again' }, toolUse] },
        answered('toolu_01'),
      ],
      /^messages\.3\.content\.1: `tool_use` ids must be unique$/,
    );
    await expectInvalid(
      [...hello, { role: 'assistant', content: [{ ...toolUse, input: 'ls' }] }, answered('toolu_01')],
      /^messages\.1\.content\.0\.tool_use\.input: Input should be a valid dictionary$/,
    );
  });

  it('rejects more than 4 cache_control blocks and accepts 4', async () => {
    const cc = { type: 'ephemeral' as const };
    const tools: Anthropic.Tool[] = [
      { name: 'A', input_schema: { type: 'object' }, cache_control: cc },
      { name: 'B', input_schema: { type: 'object' }, cache_control: cc },
    ];
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: 'sys', cache_control: cc }];
    const messages = (n: number): Anthropic.MessageParam[] => [
      {
        role: 'user',
        content: Array.from({ length: n }, (_, i) => ({ type: 'text' as const, text: `part ${i}`, cache_control: cc })),
      },
    ];
    await expectInvalid(messages(2), /^A maximum of 4 blocks with cache_control may be provided\. Found 5\.$/, {
      tools,
      system,
    });

    const server = await startServer({ replies: [{ content: [{ type: 'text', text: 'ok' }] }] });
    const message = await clientFor(server).messages.create({
      model: MODEL,
      max_tokens: 10,
      tools,
      system,
      messages: messages(1),
    });
    expect(message.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('rejects missing model, max_tokens and messages, and a body that is not JSON', async () => {
    const server = await startServer({ replies });
    const cases: Array<[unknown, RegExp]> = [
      [{ max_tokens: 1, messages: hello }, /^model: Field required$/],
      [{ model: MODEL, messages: hello }, /^max_tokens: Field required$/],
      [{ model: MODEL, max_tokens: 1 }, /^messages: Field required$/],
      [{ model: MODEL, max_tokens: 1, messages: [] }, /^messages: at least one message is required$/],
      ['{not json', /error parsing the body/],
    ];
    for (const [body, pattern] of cases) {
      const res = await post(server, '/v1/messages', body);
      expect(res.status).toBe(400);
      expect(res.json.type).toBe('error');
      expect(res.json.error.type).toBe('invalid_request_error');
      expect(res.json.error.message).toMatch(pattern);
      expect(res.json.request_id).toBe(res.headers.get('request-id'));
    }
  });

  it('requires an x-api-key or authorization header', async () => {
    const server = await startServer({ replies });
    const body = { model: MODEL, max_tokens: 1, messages: hello };
    const missing = await post(server, '/v1/messages', body, {});
    expect(missing.status).toBe(401);
    expect(missing.json.error.type).toBe('authentication_error');
    const bearer = await post(server, '/v1/messages', body, { authorization: 'Bearer anything' });
    expect(bearer.status).toBe(200);
  });

  it('answers unknown routes with not_found_error', async () => {
    const server = await startServer({ replies });
    const res = await post(server, '/v1/complete', {});
    expect(res.status).toBe(404);
    expect(res.json.error.type).toBe('not_found_error');
  });
});

describe('faults', () => {
  const reply = { content: [{ type: 'text' as const, text: 'first block' }, toolUse] };

  it('returns http faults as APIError with status, body type and retry-after', async () => {
    const server = await startServer({
      replies: [reply],
      faults: [
        { turn: 0, attempt: 1, kind: 'http', status: 529, errorType: 'overloaded_error' },
        { turn: 0, attempt: 2, kind: 'http', status: 429, errorType: 'rate_limit_error', retryAfterSeconds: 7 },
        { turn: 0, attempt: 3, kind: 'http', status: 500, errorType: 'api_error', message: 'boom' },
      ],
    });
    const client = clientFor(server);
    const params = { model: MODEL, max_tokens: 10, messages: hello };

    const overloaded = await apiErrorOf(client.messages.create(params), 529);
    expect(bodyErrorType(overloaded)).toBe('overloaded_error');
    expect(overloaded.apiMessage).toBe('Overloaded');
    expect(overloaded.requestID).toMatch(/^req_/);

    const limited = await apiErrorOf(client.messages.stream(params).finalMessage(), 429);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('7');

    const internal = await apiErrorOf(client.messages.create(params), 500);
    expect(internal).toBeInstanceOf(Anthropic.InternalServerError);
    expect(internal.apiMessage).toBe('boom');

    expect(await client.messages.create(params)).toMatchObject({ content: reply.content });
  });

  it('answers 402, 408, 409 and 422 with the SDK class for each status, and error codes in details', async () => {
    const server = await startServer({
      replies: [reply],
      faults: [
        { turn: 0, attempt: 1, kind: 'http', status: 402, errorType: 'billing_error' },
        { turn: 0, attempt: 2, kind: 'http', status: 408, errorType: 'timeout_error' },
        { turn: 0, attempt: 3, kind: 'http', status: 409, errorType: 'conflict_error' },
        { turn: 0, attempt: 4, kind: 'http', status: 422, errorType: 'invalid_request_error', message: 'bad' },
        {
          turn: 0,
          attempt: 5,
          kind: 'http',
          status: 429,
          errorType: 'rate_limit_error',
          errorCode: 'enforced_spend_limit_reached',
        },
      ],
    });
    const client = clientFor(server);
    const params = { model: MODEL, max_tokens: 10, messages: hello };
    const billing = await apiErrorOf(client.messages.stream(params).finalMessage(), 402);
    expect(billing).toBeInstanceOf(Anthropic.PaymentRequiredError);
    expect(billing.type).toBe('billing_error');
    expect(billing.apiMessage).toMatch(/credit balance is too low/);
    expect(await apiErrorOf(client.messages.create(params), 408)).toBeInstanceOf(Anthropic.RequestTimeoutError);
    expect(await apiErrorOf(client.messages.create(params), 409)).toBeInstanceOf(Anthropic.ConflictError);
    expect(await apiErrorOf(client.messages.create(params), 422)).toBeInstanceOf(Anthropic.UnprocessableEntityError);
    const capped = await apiErrorOf(client.messages.create(params), 429);
    expect(capped.errorCode).toBe('enforced_spend_limit_reached');
    expect(capped.constructor.name).toBe('EnforcedSpendLimitReachedError');
  });

  it('maps stream_error types to their documented status on a non-streaming request', async () => {
    const server = await startServer({
      replies: [reply],
      faults: [
        { turn: 0, attempt: 1, kind: 'stream_error', errorType: 'conflict_error' },
        { turn: 0, attempt: 2, kind: 'stream_error', errorType: 'timeout_error' },
        { turn: 0, attempt: 3, kind: 'stream_error', errorType: 'billing_error' },
      ],
    });
    const client = clientFor(server);
    const params = { model: MODEL, max_tokens: 10, messages: hello };
    await apiErrorOf(client.messages.create(params), 409);
    expect(await apiErrorOf(client.messages.create(params), 504)).toBeInstanceOf(Anthropic.GatewayTimeoutError);
    await apiErrorOf(client.messages.create(params), 402);
  });

  it('carries an error code on a mid-stream error event too', async () => {
    const server = await startServer({
      replies: [reply],
      faults: [
        { turn: 0, attempt: 1, kind: 'stream_error', errorType: 'api_error', errorCode: 'cmek_key_unreachable' },
      ],
    });
    const error = await rejectionOf(
      clientFor(server).messages.stream({ model: MODEL, max_tokens: 10, messages: hello }).finalMessage(),
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBeUndefined();
    expect((error as InstanceType<typeof Anthropic.APIError>).errorCode).toBe('cmek_key_unreachable');
  });

  it("answers one attempt with another reply (reply fault), later attempts with the turn's own", async () => {
    const server = await startServer({
      replies: [reply],
      faults: [
        { turn: 0, attempt: 1, kind: 'reply', reply: { content: [] } },
        {
          turn: 0,
          attempt: 2,
          kind: 'reply',
          reply: { content: [{ type: 'text', text: 'No.' }], stop_reason: 'refusal' },
        },
      ],
    });
    const client = clientFor(server);
    const params = { model: MODEL, max_tokens: 10, messages: hello };
    const empty = await client.messages.stream(params).finalMessage();
    expect([empty.content, empty.stop_reason]).toEqual([[], 'end_turn']);
    const refused = await client.messages.create(params);
    expect([refused.content, refused.stop_reason]).toEqual([[{ type: 'text', text: 'No.' }], 'refusal']);
    expect((await client.messages.create(params)).content).toEqual(reply.content);
    // A reply fault is checked like any scripted reply.
    await expect(
      ScriptedModelServer.start({
        replies: [],
        faults: [{ turn: 0, attempt: 1, kind: 'reply', reply: { content: [{ type: 'txt', text: 'x' }] } }],
      } as unknown as ScriptedSession),
    ).rejects.toThrow(/faults\.0\.reply\.content\.0/);
  });

  it('surfaces a mid-stream error event as an overloaded_error after the first block', async () => {
    const server = await startServer({
      replies: [reply],
      faults: [{ turn: 0, attempt: 1, kind: 'stream_error', afterBlocks: 1, errorType: 'overloaded_error' }],
    });
    const stream = clientFor(server).messages.stream({ model: MODEL, max_tokens: 10, messages: hello });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const error = await rejectionOf(stream.finalMessage());
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(bodyErrorType(error as InstanceType<typeof Anthropic.APIError>)).toBe('overloaded_error');
    expect(text).toBe('first block');
  });

  it('turns a stream_error on a non-streaming request into the matching HTTP error', async () => {
    const server = await startServer({
      replies: [reply],
      faults: [{ turn: 0, attempt: 1, kind: 'stream_error', errorType: 'overloaded_error' }],
    });
    const error = await apiErrorOf(
      clientFor(server).messages.create({ model: MODEL, max_tokens: 10, messages: hello }),
      529,
    );
    expect(bodyErrorType(error)).toBe('overloaded_error');
  });

  it('surfaces a dropped connection as a connection error, streaming or not', async () => {
    const server = await startServer({
      replies: [reply],
      faults: [
        { turn: 0, attempt: 1, kind: 'drop', afterBlocks: 1 },
        { turn: 0, attempt: 2, kind: 'drop' },
      ],
    });
    const client = clientFor(server);
    const params = { model: MODEL, max_tokens: 10, messages: hello };

    const midStream = await rejectionOf(client.messages.stream(params).finalMessage());
    expect(midStream).toBeInstanceOf(Anthropic.AnthropicError);
    expect(midStream).not.toBeInstanceOf(Anthropic.APIError); // no HTTP status: the body was cut, not refused
    expect(String((midStream as Error).message)).toMatch(/terminated|closed|socket/i);

    const beforeResponse = await rejectionOf(client.messages.create(params));
    expect(beforeResponse).toBeInstanceOf(Anthropic.APIConnectionError);
  });

  it('fails loudly with 400 when the script has no reply for the turn', async () => {
    const server = await startServer({ name: 'short-script', replies: [{ content: [toolUse] }] });
    const error = await apiErrorOf(
      clientFor(server).messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: [
          ...hello,
          { role: 'assistant', content: [toolUse] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'ok' }] },
        ],
      }),
      400,
    );
    expect(bodyErrorType(error)).toBe('invalid_request_error');
    expect(error.apiMessage).toMatch(/scripted session `short-script` has no reply for turn 1/);
  });
});

describe('turns, attempts and timing', () => {
  it('counts attempts per turn across retries, manual and by the SDK', async () => {
    const server = await startServer({
      replies: [{ content: [toolUse] }, { content: [{ type: 'text', text: 'done' }] }],
      faults: [
        { turn: 0, attempt: 1, kind: 'http', status: 529, errorType: 'overloaded_error' },
        { turn: 1, attempt: 1, kind: 'http', status: 429, errorType: 'rate_limit_error', retryAfterSeconds: 0.01 },
      ],
    });
    const params = { model: MODEL, max_tokens: 10, messages: hello };
    await apiErrorOf(clientFor(server).messages.create(params), 529);
    const first = await clientFor(server).messages.create(params); // a manual retry gets the same turn-0 reply
    expect(first.content).toEqual([toolUse]);

    const next: Anthropic.MessageParam[] = [
      ...hello,
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'ok' }] },
    ];
    const second = await clientFor(server, 2).messages.create({ ...params, messages: next }); // SDK retries the 429
    expect(second.content).toEqual([{ type: 'text', text: 'done' }]);

    expect(server.requests.map((r) => [r.turn, r.attempt])).toEqual([
      [0, 1],
      [0, 2],
      [1, 1],
      [1, 2],
    ]);
    // The last one really is the SDK's own retry, with the credentials the SDK sends.
    expect(server.requests[3]?.headers['x-stainless-retry-count']).toBe('1');
    expect(server.requests[3]?.headers.authorization ?? server.requests[3]?.headers['x-api-key']).toBeTruthy();
    expect(server.requests[3]?.body.messages).toHaveLength(3);
  });

  it('records a request before answering it (hang), and survives the client aborting', async () => {
    const server = await startServer({
      replies: [{ content: [{ type: 'text', text: 'late' }] }],
      faults: [{ turn: 0, attempt: 1, kind: 'hang' }],
    });
    const controller = new AbortController();
    const pending = rejectionOf(
      clientFor(server).messages.create(
        { model: MODEL, max_tokens: 10, messages: hello },
        { signal: controller.signal },
      ),
    );
    const recorded = await server.waitForRequest(0, 1);
    expect(recorded.body.messages).toEqual(hello);
    controller.abort();
    expect(await pending).toBeInstanceOf(Anthropic.APIUserAbortError);

    const retry = await clientFor(server).messages.create({ model: MODEL, max_tokens: 10, messages: hello });
    expect(retry.content).toEqual([{ type: 'text', text: 'late' }]);
    await expect(server.waitForRequest(5, 1, 20)).rejects.toThrow(
      /no request for turn 5 attempt 1 within 20ms \(seen: 0\/1, 0\/2\)/,
    );
  });

  it('waitForStreamStarted resolves while a slow turn is still streaming', async () => {
    const text = 'slow and steady wins the race';
    const server = await startServer({ replies: [{ content: [{ type: 'text', text }] }], slowTurns: { 0: 40 } });
    const stream = clientFor(server).messages.stream({ model: MODEL, max_tokens: 10, messages: hello });
    let finished = false;
    const done = stream.finalMessage().then((m) => ((finished = true), m));
    const started = Date.now();
    await server.waitForStreamStarted(0);
    expect(finished).toBe(false);
    const message = await done;
    expect(message.content).toEqual([{ type: 'text', text }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5 * 40); // several delayed frames
  });

  it('keeps serving after a client aborts mid-stream', async () => {
    const server = await startServer({
      replies: [{ content: [{ type: 'text', text: 'a fairly long answer' }] }],
      chunkDelayMs: 30,
    });
    const client = clientFor(server);
    const stream = client.messages.stream({ model: MODEL, max_tokens: 10, messages: hello });
    const aborted = rejectionOf(stream.finalMessage());
    await server.waitForStreamStarted(0);
    stream.abort();
    expect(await aborted).toBeInstanceOf(Anthropic.APIUserAbortError);
    const again = await client.messages.stream({ model: MODEL, max_tokens: 10, messages: hello }).finalMessage();
    expect(again.content).toEqual([{ type: 'text', text: 'a fairly long answer' }]);
  });

  it('close() ends hanging and streaming requests and rejects pending waits', async () => {
    const server = await ScriptedModelServer.start({
      replies: [{ content: [{ type: 'text', text: 'never finished streaming' }] }],
      chunkDelayMs: 10_000,
      faults: [{ turn: 0, attempt: 2, kind: 'hang' }],
    });
    const client = clientFor(server);
    const params = { model: MODEL, max_tokens: 10, messages: hello };
    const streaming = rejectionOf(client.messages.stream(params).finalMessage());
    await server.waitForStreamStarted(0);
    const hanging = rejectionOf(client.messages.create(params));
    await server.waitForRequest(0, 2);
    const waiting = rejectionOf(server.waitForRequest(3));

    await server.close();
    await server.close(); // idempotent
    expect(await streaming).toBeInstanceOf(Anthropic.AnthropicError);
    expect(await hanging).toBeInstanceOf(Anthropic.APIConnectionError);
    expect(String(await waiting)).toMatch(/closed/);
  });
});

describe('scripted sessions', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'model-server-test-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function writeJson(name: string, value: unknown): string {
    const path = join(dir, name);
    writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
    return path;
  }

  it('loads a valid session and names it after the file', async () => {
    const path = writeJson('demo-script.json', {
      replies: [{ content: [{ type: 'text', text: 'from file' }] }],
      faults: [{ turn: 0, attempt: 1, kind: 'http', status: 529, errorType: 'overloaded_error' }],
      slowTurns: { '0': 1 },
    });
    const session = loadScriptedSession(path);
    expect(session.name).toBe('demo-script');
    const server = await startServer(session);
    await apiErrorOf(clientFor(server).messages.create({ model: MODEL, max_tokens: 1, messages: hello }), 529);
    const message = await clientFor(server)
      .messages.stream({ model: MODEL, max_tokens: 1, messages: hello })
      .finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'from file' }]);
  });

  it('names the file and the bad field on invalid input', () => {
    const path = writeJson('bad.json', {
      replies: [{ content: [{ type: 'txt', text: 'typo' }] }, { content: [], stopReason: 'end_turn' }],
      faults: [{ turn: 0, attempt: 0, kind: 'drop' }],
    });
    const error = rejectionSync(() => loadScriptedSession(path));
    expect(error).toContain(path);
    expect(error).toContain('replies.0.content.0');
    expect(error).toMatch(/replies\.1.*stopReason/);
    expect(error).toContain('faults.0.attempt');
  });

  it('reports unreadable and non-JSON files with their path', () => {
    const notJson = writeJson('broken.json', '{"replies": [');
    expect(rejectionSync(() => loadScriptedSession(notJson))).toMatch(
      new RegExp(`${escape(notJson)} is not valid JSON`),
    );
    const missing = join(dir, 'missing.json');
    expect(rejectionSync(() => loadScriptedSession(missing))).toContain(missing);
  });

  it('rejects an invalid in-memory session at start', async () => {
    const bad = {
      replies: [{ content: [{ type: 'tool_use', id: 't', name: 'X', input: 'not an object' }] }],
    } as unknown as ScriptedSession;
    await expect(ScriptedModelServer.start(bad)).rejects.toThrow(/replies\.0\.content\.0\.input/);
  });
});

function rejectionSync(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return String((error as Error).message);
  }
  throw new Error('expected a throw');
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
