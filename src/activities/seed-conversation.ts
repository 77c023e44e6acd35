import { isDeepStrictEqual } from 'node:util';
import { ApplicationFailure } from '@temporalio/common';
import { repairConversation } from '../shared/conversation-repair';
import type { ResumeFrom } from '../shared/session';
import type { PendingBlock, TranscriptRef } from '../shared/transcript';
import { emptyTranscript } from '../shared/transcript';
import { ContentNotFoundError } from './store/content-store';
import type { ContentStore } from './store/content-store';
import type { TranscriptStore } from './store/transcript-store';

export type SeedConversationInput = Pick<ResumeFrom, 'transcript' | 'messages'>;

/** Where a resumed job's conversation starts. */
export interface SeededConversation {
  /** The conversation up to its last assistant message: the transcript the job appends to. */
  transcript: TranscriptRef;
  /**
   * What the conversation's last user message held (tool results by reference, text), so the
   * job's prompt joins it: the API wants the roles to alternate.
   */
  carry: PendingBlock[];
  /** Characters of the conversation, for the first context estimate. */
  chars: number;
  /** What had to change to make the conversation valid for the API. */
  notes: string[];
}

/**
 * The conversation a `--resume`/`--resume-from` job continues, in the store and valid for the
 * API. A finished job's transcript is reused as it is (its segments are shared, not copied)
 * unless it needs repair; one given inline, or needing repair, is written as a new chain that
 * keeps the link to what an earlier compaction summarised.
 */
export async function seedConversation(
  deps: { store: ContentStore; transcripts: TranscriptStore },
  input: SeedConversationInput,
): Promise<SeededConversation> {
  const segments = input.transcript ? await loadSegments(deps.transcripts, input.transcript) : [];
  const loaded = input.messages ?? segments.flatMap((segment) => segment.messages);
  const { messages, notes } = repairConversation(loaded);
  const lastAssistant = messages.map((message) => message.role).lastIndexOf('assistant');
  const kept = messages.slice(0, lastAssistant + 1);
  const trailing = messages.slice(lastAssistant + 1);

  let transcript: TranscriptRef | undefined;
  if (!input.messages && isDeepStrictEqual(kept, loaded.slice(0, kept.length))) {
    // The stored chain already ends there when the trailing user messages fill whole segments.
    let count = 0;
    for (const segment of segments) {
      count += segment.messages.length;
      if (count === kept.length) transcript = { head: segment.ref, messageCount: count };
      if (count >= kept.length) break;
    }
    if (kept.length === 0) transcript = emptyTranscript();
  }
  if (!transcript) {
    const compactedFrom = segments[0]?.compactedFrom;
    transcript =
      compactedFrom !== undefined && compactedFrom !== null
        ? await deps.transcripts.restartAfterCompaction({ head: compactedFrom, messageCount: 0 }, kept)
        : await deps.transcripts.append(emptyTranscript(), kept);
  }

  const carry: PendingBlock[] = [];
  for (const message of trailing) {
    // Only user messages follow the last assistant message.
    if (message.role !== 'user') continue;
    const blocks =
      typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
    for (const block of blocks) {
      if (block.type === 'text') carry.push(block);
      else {
        // By reference: a large result must not pass through the workflow's history.
        const ref = await deps.store.put(block);
        carry.push({
          type: 'tool_result_ref',
          tool_use_id: block.tool_use_id,
          ref,
          is_error: block.is_error === true,
          chars: block.content.length,
        });
      }
    }
  }
  return { transcript, carry, chars: JSON.stringify(messages).length, notes };
}

async function loadSegments(transcripts: TranscriptStore, transcript: TranscriptRef) {
  try {
    return await transcripts.segments(transcript.head);
  } catch (error) {
    if (!(error instanceof ContentNotFoundError)) throw error;
    // Another store than the one the conversation was written to will not grow it on retry.
    throw ApplicationFailure.create({
      message:
        `the conversation to resume (${error.ref}) is not in this worker's store at ${error.location}: ` +
        'resume where the store holding it is shared with the workers (the same DURABLE_AGENT_STORE, or the same ' +
        'DURABLE_AGENT_HOME)',
      type: 'resume_conversation_missing',
      nonRetryable: true,
    });
  }
}
