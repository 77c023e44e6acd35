/**
 * Compaction requests: recognising them, and the summary the scripted model writes when the
 * session scripts none. A compaction request is an ordinary Messages API call whose last user
 * message begins with `COMPACTION_PROMPT_MARKER`; it is answered outside the scripted turns.
 */
import { COMPACTION_PROMPT_MARKER } from '../shared/compact-prompt';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The request's messages that are objects (anything else was refused by validation). */
export function requestMessages(body: unknown): Json[] {
  const messages = isObject(body) ? body.messages : undefined;
  return Array.isArray(messages) ? messages.filter(isObject) : [];
}

/** The content blocks of a message; string content is one text block. */
export function contentBlocks(content: unknown): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isObject) : [];
}

/** The texts of a message's text blocks. */
export function messageTexts(message: Json | undefined): string[] {
  return contentBlocks(message?.content).flatMap((b) =>
    b.type === 'text' && typeof b.text === 'string' ? [b.text] : [],
  );
}

function isCompactionPrompt(text: string): boolean {
  return text.trimStart().startsWith(COMPACTION_PROMPT_MARKER);
}

/** True when the request asks for a summary: a text block of its last (user) message begins with the marker. */
export function isCompactionRequest(body: unknown): boolean {
  const last = requestMessages(body).at(-1);
  return last?.role === 'user' && messageTexts(last).some(isCompactionPrompt);
}

/** The line that names one compaction in a summary the server wrote; unique per compaction. */
export function referenceLine(index: number, turn: number): string {
  return `Compaction reference: #${index + 1}, summarising the conversation up to turn ${turn}.`;
}

const REFERENCE_LINE = /^Compaction reference: #\d+, .*$/m;

/**
 * What identifies a summary when it comes back in a later request, whatever the agent wrapped it
 * in: the reference line when it has one, else the text inside `<summary>` and the whole text.
 */
export function summaryFingerprints(text: string): string[] {
  const line = REFERENCE_LINE.exec(text)?.[0];
  if (line) return [line];
  const inner = /<summary>([\s\S]*?)<\/summary>/.exec(text)?.[1]?.trim();
  return [inner, text.trim()].filter((t): t is string => Boolean(t));
}

function clip(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** What a summary is written from. */
export interface SummaryFacts {
  index: number;
  turn: number;
  /** The user's original request: carried over from the summary this conversation continues from, if any. */
  primaryRequest: string;
  messages: Json[];
}

/** The first user request of a conversation that does not continue from a summary. */
export function firstUserRequest(messages: Json[]): string {
  const first = messages.find((m) => m.role === 'user');
  const text = messageTexts(first)
    .filter((t) => !isCompactionPrompt(t))
    .join('\n');
  return clip(text) || '(no text)';
}

function toolCalls(messages: Json[]): Json[] {
  return messages
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => contentBlocks(m.content).filter((b) => b.type === 'tool_use'));
}

function filesTouched(calls: Json[]): string[] {
  const files = new Set<string>();
  for (const call of calls) {
    const input = isObject(call.input) ? call.input : {};
    for (const key of ['file_path', 'path', 'notebook_path']) {
      if (typeof input[key] === 'string') files.add(input[key]);
    }
  }
  return [...files].slice(0, 8);
}

function lastText(messages: Json[], role: string, skip: (text: string) => boolean): string | undefined {
  for (const message of [...messages].reverse()) {
    if (message.role !== role) continue;
    const text = messageTexts(message)
      .filter((t) => !skip(t))
      .join('\n');
    if (text.trim() !== '') return clip(text);
  }
  return undefined;
}

/**
 * The summary the scripted model writes for a compaction: the seven sections a compaction prompt
 * asks for, with short content derived from the conversation, wrapped in `<summary>`, and the
 * reference line that makes it unique.
 */
export function writeSummary(facts: SummaryFacts): string {
  const { messages } = facts;
  const calls = toolCalls(messages);
  const names = [...new Set(calls.map((c) => String(c.name)))];
  const files = filesTouched(calls);
  const errors = messages
    .flatMap((m) => contentBlocks(m.content))
    .filter((b) => b.type === 'tool_result' && b.is_error === true).length;
  // The first user message may be an earlier summary; it is no pending task.
  const laterMessages = messages.slice(messages.findIndex((m) => m.role === 'user') + 1);
  const pending = lastText(laterMessages, 'user', isCompactionPrompt);
  const current = lastText(messages, 'assistant', () => false);
  // The reference line comes first, so a summary clipped when quoted later still carries it.
  return [
    '<summary>',
    referenceLine(facts.index, facts.turn),
    '1. Primary Request and Intent:',
    `   ${facts.primaryRequest}`,
    '2. Key Technical Concepts:',
    `   - Tools used: ${names.length > 0 ? names.join(', ') : 'none'}.`,
    '3. Files and Code Sections:',
    ...(files.length > 0 ? files.map((f) => `   - ${f}`) : ['   - None recorded.']),
    '4. Errors and fixes:',
    `   - ${errors} of ${calls.length} tool calls reported an error.`,
    '5. Pending Tasks:',
    `   - ${pending ?? 'None stated.'}`,
    '6. Current Work:',
    `   ${current ?? 'No assistant text yet.'}`,
    '7. Optional Next Step:',
    `   Continue from turn ${facts.turn}.`,
    '</summary>',
  ].join('\n');
}
