import fs from 'node:fs';
import path from 'node:path';
import { validateMessagesRequest } from '../src/model-server/validate';
import { NOT_RUN_RESULT, repairConversation } from '../src/shared/conversation-repair';
import type { Message } from '../src/shared/messages';
import { parseSessionJsonl, SessionFileError, toSessionEntries } from '../src/shared/session-jsonl';

const fixture = path.join(__dirname, 'fixtures/claude-code-session.jsonl');

/** What the API would say about this conversation followed by one more user message. */
const apiProblem = (messages: Message[]) =>
  validateMessagesRequest({
    model: 'claude-sonnet-5-5',
    max_tokens: 100,
    tools: [{ name: 'Read', input_schema: { type: 'object' } }],
    messages: [...messages, { role: 'user', content: 'next' }],
  });

describe('reading a session file Claude Code wrote', () => {
  test('the current branch, one message per reply, every call answered', () => {
    const parsed = parseSessionJsonl(fs.readFileSync(fixture, 'utf8'), fixture);
    expect(parsed.sessionId).toBe('7f3c2a10-5b7e-4d3a-9c1e-2f8b6d4a9e01');
    expect(parsed.cwd).toBe('/Users/dev/projects/shop');
    expect(parsed.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Find where the login is checked' }] },
      {
        role: 'assistant',
        content: [
          // Thinking, signed or not, is left out: only the API that signed it can check it.
          { type: 'text', text: 'Let me search for it.' },
          {
            type: 'tool_use',
            id: 'toolu_01GrepLogin',
            name: 'Grep',
            input: { pattern: 'login|auth', output_mode: 'files_with_matches' },
          },
          { type: 'tool_use', id: 'toolu_02GlobAuth', name: 'Glob', input: { pattern: 'src/**/auth*' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01GrepLogin', content: 'Found 1 file\nsrc/auth/login.ts' },
          // Found on the line that hangs off the other tool_use, its content list made text.
          { type: 'tool_result', tool_use_id: 'toolu_02GlobAuth', content: 'src/auth/login.ts\nsrc/auth/session.ts' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'The login check is in src/auth/login.ts.' }] },
      // The rewound branch ("Now fix it") is gone; the system line on the chain is passed through.
      { role: 'user', content: [{ type: 'text', text: 'Now explain it instead' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'It compares the password hash. Let me read it to be sure.' },
          {
            type: 'tool_use',
            id: 'toolu_03ReadLogin',
            name: 'Read',
            input: { file_path: '/Users/dev/projects/shop/src/auth/login.ts' },
          },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_03ReadLogin', content: NOT_RUN_RESULT, is_error: true }],
      },
    ]);
    expect(parsed.notes).toEqual(
      expect.arrayContaining([
        'thinking left out (2 blocks): only the API that signed it can check it',
        'unanswered tool calls answered as not run',
        'tool results found off the chain',
      ]),
    );
    expect(JSON.stringify(parsed.messages)).not.toContain('toolu_side01');
    expect(apiProblem(parsed.messages)).toBeUndefined();
  });

  test('a malformed line is named by its number, and a file without messages is refused', () => {
    const text = fs.readFileSync(fixture, 'utf8').split('\n');
    text.splice(3, 0, '{"type":"user","message":');
    expect(() => parseSessionJsonl(text.join('\n'), 'broken.jsonl')).toThrow(
      /^broken\.jsonl:4: not a JSON object \(.*\); a session file has one JSON object per line$/,
    );
    expect(() =>
      parseSessionJsonl('{"type":"user","uuid":"a","message":{"role":"assistant","content":"x"}}\n', 'f'),
    ).toThrow('f:1: a user entry whose message.role is assistant');
    expect(() => parseSessionJsonl('{"no":"type"}', 'f')).toThrow('f:1: not a session entry');
    expect(() => parseSessionJsonl('{"type":"summary","summary":"s","leafUuid":"x"}\n', 'f')).toThrow(SessionFileError);
  });
});

describe('repairing a conversation', () => {
  test('a valid conversation comes back unchanged', () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ];
    expect(repairConversation(messages)).toEqual({ messages, notes: [] });
  });

  test('orphan results go, roles alternate, results come first and in order', () => {
    const { messages, notes } = repairConversation([
      { role: 'assistant', content: [{ type: 'text', text: 'hello first' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nobody', content: 'x' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'Read', input: {} },
          { type: 'tool_use', id: 'b', name: 'NotOffered', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'note' },
          { type: 'tool_result', tool_use_id: 'b', content: 'B' },
          { type: 'tool_result', tool_use_id: 'a', content: 'A' },
        ],
      },
      { role: 'user', content: '   ' },
      { role: 'user', content: 'more' },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: expect.stringContaining('not available') }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'hello first' },
          { type: 'tool_use', id: 'a', name: 'Read', input: {} },
          { type: 'tool_use', id: 'b', name: 'NotOffered', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: 'A' },
          { type: 'tool_result', tool_use_id: 'b', content: 'B' },
          { type: 'text', text: 'note' },
          { type: 'text', text: 'more' },
        ],
      },
    ]);
    expect(notes.length).toBeGreaterThan(0);
    expect(apiProblem(messages.slice(0, -1).concat([messages.at(-1)!]))).toBeUndefined();
  });
});

describe('writing a session file', () => {
  test('lines chain by parentUuid; a compaction writes a boundary and the summary, and reading it back starts there', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const entries = toSessionEntries(
      [
        { message: { role: 'user', content: [{ type: 'text', text: 'first' }] }, timestamp: at },
        {
          message: { role: 'assistant', content: [{ type: 'text', text: 'one' }] },
          timestamp: at,
          model: 'm',
          usage: { input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
          stopReason: 'end_turn',
        },
        {
          message: { role: 'user', content: [{ type: 'text', text: 'summary' }] },
          timestamp: at,
          compactSummary: true,
        },
        { message: { role: 'assistant', content: [{ type: 'text', text: 'two' }] }, timestamp: at },
      ],
      { sessionId: 'job-1', cwd: '/ws', version: '1.0.0', uuid: (n) => `u${n}` },
    );
    expect(entries.map((e) => [e.type, e.uuid, e.parentUuid])).toEqual([
      ['user', 'u0', null],
      ['assistant', 'u1', 'u0'],
      ['system', 'u2', null],
      ['user', 'u3', 'u2'],
      ['assistant', 'u4', 'u3'],
    ]);
    expect(entries[2]).toMatchObject({ subtype: 'compact_boundary', logicalParentUuid: 'u1' });
    expect(entries[3]).toMatchObject({ isCompactSummary: true, sessionId: 'job-1', cwd: '/ws', isSidechain: false });
    expect(entries[1]).toMatchObject({ message: { model: 'm', usage: { output_tokens: 2 }, stop_reason: 'end_turn' } });
    const text = entries.map((e) => JSON.stringify(e)).join('\n');
    expect(parseSessionJsonl(text, 'x').messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'summary' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'two' }] },
    ]);
  });
});
