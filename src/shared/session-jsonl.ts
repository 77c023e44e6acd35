/**
 * Claude Code's session JSONL (`~/.claude/projects/<project>/<session>.jsonl`): one entry per
 * line, user and assistant messages chained by `parentUuid`, among bookkeeping lines (summaries,
 * system lines, file-history snapshots, sidechains of subagents). `export` writes it; `run
 * --resume-from` reads it, whether this project or Claude Code wrote it. Pure functions only.
 */
import type {
  AssistantContentBlock,
  AssistantMessage,
  Message,
  ToolResultBlock,
  Usage,
  UserContentBlock,
} from './messages';
import { repairConversation } from './conversation-repair';
import type { RepairedConversation } from './conversation-repair';

/** Fields every conversation line carries. */
interface EntryEnvelope {
  uuid: string;
  parentUuid: string | null;
  isSidechain: false;
  userType: 'external';
  cwd: string;
  sessionId: string;
  version?: string;
  timestamp: string;
}

export interface UserEntry extends EntryEnvelope {
  type: 'user';
  message: { role: 'user'; content: string | UserContentBlock[] };
  /** On the summary that opens the conversation after a compaction. */
  isCompactSummary?: true;
  isVisibleInTranscriptOnly?: true;
}

export interface AssistantEntry extends EntryEnvelope {
  type: 'assistant';
  message: {
    type: 'message';
    role: 'assistant';
    model?: string;
    content: AssistantContentBlock[];
    stop_reason?: string | null;
    usage?: Usage;
  };
}

/** Where the conversation was compacted: the next line is the summary, and the chain restarts. */
export interface CompactBoundaryEntry extends Omit<EntryEnvelope, 'parentUuid'> {
  type: 'system';
  subtype: 'compact_boundary';
  parentUuid: null;
  /** The last message before the compaction. */
  logicalParentUuid: string | null;
  content: 'Conversation compacted';
  isMeta: false;
  level: 'info';
  compactMetadata: { trigger: 'auto' };
}

export type SessionEntry = UserEntry | AssistantEntry | CompactBoundaryEntry;

/** One message of a transcript to export, with what is known about it besides its content. */
export interface ExportedMessage {
  message: Message;
  /** ISO 8601. */
  timestamp: string;
  /** Assistant messages: the model that wrote it and its call's usage, when known. */
  model?: string;
  usage?: Usage;
  stopReason?: string | null;
  /** This message opens the chain a compaction restarted (it holds the summary). */
  compactSummary?: boolean;
}

export interface ExportContext {
  sessionId: string;
  cwd: string;
  version?: string;
  /** A unique id for the n-th line (deterministic ids make an export reproducible). */
  uuid: (n: number) => string;
}

/**
 * The session entries of a transcript, oldest first: each message one line chained to the one
 * before; a compaction writes a `compact_boundary` line whose chain restarts (parentUuid null,
 * `logicalParentUuid` the message before), followed by the summary as an `isCompactSummary`
 * user message, as Claude Code writes them.
 */
export function toSessionEntries(messages: readonly ExportedMessage[], context: ExportContext): SessionEntry[] {
  const entries: SessionEntry[] = [];
  let parent: string | null = null;
  const envelope = (timestamp: string) => ({
    uuid: context.uuid(entries.length),
    isSidechain: false as const,
    userType: 'external' as const,
    cwd: context.cwd,
    sessionId: context.sessionId,
    ...(context.version ? { version: context.version } : {}),
    timestamp,
  });
  for (const exported of messages) {
    if (exported.compactSummary && entries.length > 0) {
      const boundary: CompactBoundaryEntry = {
        ...envelope(exported.timestamp),
        parentUuid: null,
        logicalParentUuid: parent,
        type: 'system',
        subtype: 'compact_boundary',
        content: 'Conversation compacted',
        isMeta: false,
        level: 'info',
        compactMetadata: { trigger: 'auto' },
      };
      entries.push(boundary);
      parent = boundary.uuid;
    }
    const { message } = exported;
    const entry: SessionEntry =
      message.role === 'user'
        ? {
            ...envelope(exported.timestamp),
            parentUuid: parent,
            type: 'user',
            message: { role: 'user', content: message.content },
            ...(exported.compactSummary ? { isCompactSummary: true, isVisibleInTranscriptOnly: true } : {}),
          }
        : {
            ...envelope(exported.timestamp),
            parentUuid: parent,
            type: 'assistant',
            message: {
              type: 'message',
              role: 'assistant',
              ...(exported.model ? { model: exported.model } : {}),
              content: message.content,
              ...(exported.stopReason !== undefined ? { stop_reason: exported.stopReason } : {}),
              ...(exported.usage ? { usage: exported.usage } : {}),
            },
          };
    entries.push(entry);
    parent = entry.uuid;
  }
  return entries;
}

/** A session file that cannot be read as a conversation; `line` is 1-based. */
export class SessionFileError extends Error {
  override readonly name = 'SessionFileError';
  constructor(
    readonly source: string,
    readonly line: number | undefined,
    problem: string,
  ) {
    super(`${source}${line !== undefined ? `:${line}` : ''}: ${problem}`);
  }
}

/** A conversation read from a session file. */
export interface ParsedSession extends RepairedConversation {
  /** The file's own session id and workspace, from its last message (when it has them). */
  sessionId?: string;
  cwd?: string;
}

type Json = Record<string, unknown>;

interface RawEntry {
  line: number;
  json: Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isConversation = (json: Json) => json.type === 'user' || json.type === 'assistant';
/** Claude Code writes an API error it showed as an assistant message of this model; the model never said it. */
const SYNTHETIC_MODEL = '<synthetic>';

/**
 * The conversation in a session file, as the API will take it. The current branch is the one
 * that ends at the file's last user or assistant message: the chain of `parentUuid`s from there
 * back to a root (a compaction boundary is one, so the model sees the summary and what came
 * after, as in Claude Code). Lines that are not messages (summaries, system lines, file-history
 * snapshots), sidechains (subagents) and Claude Code's own error notices are left out. The blocks
 * of one reply, which Claude Code writes one line each under the same `message.id`, become one
 * message; the result is then repaired (see `repairConversation`).
 */
export function parseSessionJsonl(text: string, source: string): ParsedSession {
  const entries = readEntries(text, source);
  const main = entries.filter((entry) => isConversation(entry.json) && entry.json.isSidechain !== true);
  const leaf = main.at(-1);
  if (!leaf) throw new SessionFileError(source, undefined, 'no user or assistant message in the file');

  const byUuid = new Map<string, RawEntry>();
  for (const entry of entries) if (typeof entry.json.uuid === 'string') byUuid.set(entry.json.uuid, entry);
  const chain: RawEntry[] = [];
  const visited = new Set<RawEntry>();
  for (let entry: RawEntry | undefined = leaf; entry && !visited.has(entry);) {
    visited.add(entry);
    chain.push(entry);
    const parent: unknown = entry.json.parentUuid;
    entry = typeof parent === 'string' ? byUuid.get(parent) : undefined;
  }
  chain.reverse();

  // A reply's blocks that sit off the chain (another line of the same message.id) belong to it.
  const byMessageId = new Map<string, RawEntry[]>();
  for (const entry of main) {
    const id = messageId(entry.json);
    if (id && entry.json.type === 'assistant') byMessageId.set(id, [...(byMessageId.get(id) ?? []), entry]);
  }
  const taken = new Set<RawEntry>();
  const messages: Message[] = [];
  for (const entry of chain) {
    if (!isConversation(entry.json) || entry.json.isSidechain === true || taken.has(entry)) continue;
    const id = messageId(entry.json);
    const group = entry.json.type === 'assistant' && id ? (byMessageId.get(id) ?? [entry]) : [entry];
    for (const member of group) {
      if (taken.has(member)) continue;
      taken.add(member);
      const message = toMessage(member, source);
      if (message) messages.push(message);
    }
  }

  // Results written on another branch of a parallel call still answer it: tool_use ids are unique.
  const knownResults = new Map<string, ToolResultBlock>();
  for (const entry of main) {
    if (entry.json.type !== 'user' || taken.has(entry)) continue;
    const message = toMessage(entry, source);
    if (message?.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) if (block.type === 'tool_result') knownResults.set(block.tool_use_id, block);
  }

  // Thinking is left out: its signature can be checked only by the API that wrote it (a file
  // from another account, model or provider, or one edited by hand, would be refused whole), and
  // the model needs no earlier turn's thinking to go on from a new prompt.
  let thinkingBlocks = 0;
  const withoutThinking = messages.map((message): Message => {
    if (message.role !== 'assistant') return message;
    const content = message.content.filter((block) => block.type !== 'thinking' && block.type !== 'redacted_thinking');
    thinkingBlocks += message.content.length - content.length;
    return { ...message, content };
  });
  const repaired = repairConversation(withoutThinking, { knownResults });
  if (thinkingBlocks > 0) {
    repaired.notes.push(
      `thinking left out (${thinkingBlocks} block${thinkingBlocks === 1 ? '' : 's'}): only the API that signed it can check it`,
    );
  }
  if (repaired.messages.length === 0) {
    throw new SessionFileError(source, undefined, 'the current branch holds no message with content');
  }
  const last = leaf.json;
  return {
    ...repaired,
    ...(typeof last.sessionId === 'string' ? { sessionId: last.sessionId } : {}),
    ...(typeof last.cwd === 'string' ? { cwd: last.cwd } : {}),
  };
}

function readEntries(text: string, source: string): RawEntry[] {
  const entries: RawEntry[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new SessionFileError(
        source,
        index + 1,
        `not a JSON object (${(error as Error).message}); a session file has one JSON object per line`,
      );
    }
    if (!isObject(json) || typeof json.type !== 'string') {
      throw new SessionFileError(source, index + 1, 'not a session entry: each line needs a "type" field');
    }
    if (isConversation(json) && json.isSidechain !== true) checkMessage(json, source, index + 1);
    entries.push({ line: index + 1, json });
  }
  return entries;
}

function checkMessage(json: Json, source: string, line: number): void {
  const message = json.message;
  if (!isObject(message)) throw new SessionFileError(source, line, `a ${String(json.type)} entry without a "message"`);
  if (message.role !== json.type) {
    throw new SessionFileError(
      source,
      line,
      `a ${String(json.type)} entry whose message.role is ${String(message.role)}`,
    );
  }
  const content = message.content;
  if (typeof content !== 'string' && !Array.isArray(content)) {
    throw new SessionFileError(source, line, 'message.content must be a string or a list of content blocks');
  }
  if (Array.isArray(content) && !content.every((block) => isObject(block) && typeof block.type === 'string')) {
    throw new SessionFileError(source, line, 'every content block needs a "type"');
  }
  if (json.uuid !== undefined && typeof json.uuid !== 'string') {
    throw new SessionFileError(source, line, '"uuid" must be a string');
  }
}

function messageId(json: Json): string | undefined {
  const id = isObject(json.message) ? json.message.id : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** A line's message in this project's shapes; undefined for what the model must not see. */
function toMessage(entry: RawEntry, source: string): Message | undefined {
  const message = entry.json.message as Json;
  if (entry.json.type === 'assistant') {
    if (message.model === SYNTHETIC_MODEL || entry.json.isApiErrorMessage === true) return undefined;
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    const content = (blocks as Json[]).flatMap((block) => assistantBlock(block, source, entry.line));
    return { role: 'assistant', content } satisfies AssistantMessage;
  }
  if (typeof message.content === 'string') return { role: 'user', content: message.content };
  return { role: 'user', content: (message.content as Json[]).flatMap(userBlock) };
}

function assistantBlock(block: Json, source: string, line: number): AssistantContentBlock[] {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? [{ type: 'text', text: block.text }] : [];
    case 'tool_use':
      if (typeof block.id !== 'string' || typeof block.name !== 'string') {
        throw new SessionFileError(source, line, 'a tool_use block needs a string "id" and "name"');
      }
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} }];
    case 'thinking':
      return typeof block.thinking === 'string'
        ? [
            {
              type: 'thinking',
              thinking: block.thinking,
              signature: typeof block.signature === 'string' ? block.signature : '',
            },
          ]
        : [];
    case 'redacted_thinking':
      return typeof block.data === 'string' ? [{ type: 'redacted_thinking', data: block.data }] : [];
    default:
      // Server tool blocks (web search and the like) need their own results and betas; as history
      // they are left out, with a word where they were.
      return [{ type: 'text', text: `[${String(block.type)} block not carried over]` }];
  }
}

function userBlock(block: Json): UserContentBlock[] {
  if (block.type === 'text') return typeof block.text === 'string' ? [{ type: 'text', text: block.text }] : [];
  if (block.type === 'tool_result') {
    if (typeof block.tool_use_id !== 'string') return [];
    return [
      {
        type: 'tool_result',
        tool_use_id: block.tool_use_id,
        content: resultText(block.content),
        ...(block.is_error === true ? { is_error: true } : {}),
      },
    ];
  }
  return [{ type: 'text', text: `[${String(block.type)} not carried over]` }];
}

/** A tool result's content as text: text parts as they are, anything else (an image) named. */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      isObject(part) && part.type === 'text' && typeof part.text === 'string'
        ? part.text
        : `[${isObject(part) ? String(part.type) : 'content'} not carried over]`,
    )
    .join('\n');
}
