import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { InvalidArgumentError } from 'commander';
import { ContentNotFoundError } from '../activities/store/content-store';
import type { ContentStore } from '../activities/store/content-store';
import { TranscriptStore } from '../activities/store/transcript-store';
import type { Segment } from '../activities/store/transcript-store';
import type { AssistantContentBlock, Message } from '../shared/messages';
import { toSessionEntries } from '../shared/session-jsonl';
import type { ExportedMessage } from '../shared/session-jsonl';
import { isInputFieldRef, isStoredInputField } from '../shared/tool-input-refs';
import type { ContentRef } from '../shared/transcript';
import { packageRoot } from '../worker/package-root';
import { finishedJob, replyFacts } from './finished-job';
import { openContentStore } from './store-config';

export const EXPORT_FORMATS = ['jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function parseExportFormat(value: string): ExportFormat {
  if ((EXPORT_FORMATS as readonly string[]).includes(value)) return value as ExportFormat;
  throw new InvalidArgumentError(`--format ${value} is not known: use ${EXPORT_FORMATS.join(', ')}.`);
}

/**
 * A finished job's whole transcript as Claude Code session JSONL, one line per message: the
 * chains before each compaction first, each followed by a `compact_boundary` line and the
 * summary. Timestamps are when each message was written into the store (the segment's file
 * time; the job's start when that is unknown); model, usage and stop reason come from the job's
 * model calls in its Temporal history. `runId`: the conversation that ended in that run of the id
 * (a batch row's), not in its latest run.
 */
export async function exportTranscript(
  client: Client,
  id: string,
  env: NodeJS.ProcessEnv = process.env,
  runId?: string,
): Promise<{ text: string; lines: number }> {
  const job = await finishedJob(client, id, 'export', runId);
  const head = job.terminal.transcriptHead;
  if (!head) {
    throw new InvalidArgumentError(
      `job ${id} has no transcript: it ended ${job.terminal.reason} before its first model call` +
        `${job.terminal.detail ? ` (${job.terminal.detail})` : ''}.`,
    );
  }
  const store = await openContentStore(env);
  const transcripts = new TranscriptStore(store);
  const facts = await replyFacts(client, id, runId);
  const messages: ExportedMessage[] = [];
  for (const [index, chain] of (await chainsOf(transcripts, head, id)).entries()) {
    for (const [position, segment] of chain.entries()) {
      const written = (await store.writtenAt(segment.ref)) ?? job.startTime;
      const reply = facts.get(segment.ref);
      for (const [i, message] of segment.messages.entries()) {
        messages.push({
          message: await withInputsResolved(store, message),
          timestamp: (message.role === 'assistant' && reply?.at ? reply.at : written).toISOString(),
          ...(message.role === 'assistant' && reply
            ? { model: reply.model, usage: reply.usage, stopReason: reply.stopReason }
            : {}),
          ...(index > 0 && position === 0 && i === 0 ? { compactSummary: true } : {}),
        });
      }
    }
  }
  const entries = toSessionEntries(messages, {
    sessionId: id,
    cwd: job.input.workspace ?? '',
    version: packageVersion(),
    uuid: (n) => uuidFor(`${id}\n${head}\n${n}`),
  });
  return { text: entries.map((entry) => JSON.stringify(entry)).join('\n') + '\n', lines: entries.length };
}

/** Every chain of a transcript, oldest first: a compaction's first segment links the chain it summarised. */
async function chainsOf(
  transcripts: TranscriptStore,
  head: ContentRef,
  id: string,
): Promise<Array<Array<Segment & { ref: ContentRef }>>> {
  const chains: Array<Array<Segment & { ref: ContentRef }>> = [];
  try {
    for (let ref: ContentRef | null | undefined = head; ref;) {
      const chain = await transcripts.segments(ref);
      chains.unshift(chain);
      ref = chain[0]?.compactedFrom;
    }
  } catch (error) {
    if (!(error instanceof ContentNotFoundError)) throw error;
    throw new InvalidArgumentError(
      `the transcript of job ${id} is not in the store at ${error.location} (${error.ref} is missing): run export ` +
        "with the workers' store: the same DURABLE_AGENT_STORE, or where the workers' DURABLE_AGENT_HOME is (with " +
        'TEMPORAL_ADDRESS set and no DURABLE_AGENT_STORE, the store is on the worker machines), or the job was pruned.',
    );
  }
  return chains;
}

/** Tool inputs as the model wrote them: a field kept by reference gets its value back. */
async function withInputsResolved(store: ContentStore, message: Message): Promise<Message> {
  if (message.role !== 'assistant') return message;
  const content: AssistantContentBlock[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_use' || typeof block.input !== 'object' || block.input === null) {
      content.push(block);
      continue;
    }
    const input: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(block.input)) {
      const stored: unknown = isInputFieldRef(value) ? await store.get(value.$contentRef) : undefined;
      input[key] = isStoredInputField(stored) ? stored.value : value;
    }
    content.push({ ...block, input });
  }
  return { ...message, content };
}

/** A UUID-shaped id derived from `seed`, so exporting the same job twice gives the same file. */
function uuidFor(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

function packageVersion(): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version?: string })
      .version;
  } catch {
    return undefined;
  }
}
