import type { Message, ToolResultBlock, UserContentBlock } from '../../shared/messages';
import type { ContentRef, PendingUserMessage, ToolResultRef, TranscriptRef } from '../../shared/transcript';
import type { ContentStore } from './content-store';

/** One link of a transcript chain: the messages one model call added, and the link before. */
export interface Segment {
  prev: ContentRef | null;
  messages: Message[];
  /**
   * On the first segment after a compaction: the head of the chain that was summarised. Loading
   * stops at the compaction (the model sees the summary); an export can follow this link back.
   */
  compactedFrom?: ContentRef | null;
}

/**
 * Transcripts as chains of segments in the content store. Appending writes one small segment;
 * reading walks the chain back to the start, or to the last compaction.
 */
export class TranscriptStore {
  constructor(private readonly store: ContentStore) {}

  async append(transcript: TranscriptRef, messages: Message[]): Promise<TranscriptRef> {
    if (messages.length === 0) return transcript;
    const head = await this.store.put({ prev: transcript.head, messages } satisfies Segment);
    return { head, messageCount: transcript.messageCount + messages.length };
  }

  /** A new chain that replaces `compacted` by `messages` (a summary and the recent tail). */
  async restartAfterCompaction(compacted: TranscriptRef, messages: Message[]): Promise<TranscriptRef> {
    const head = await this.store.put({ prev: null, messages, compactedFrom: compacted.head } satisfies Segment);
    return { head, messageCount: messages.length };
  }

  async load(transcript: TranscriptRef): Promise<Message[]> {
    const segments: Segment[] = [];
    for (let ref = transcript.head; ref !== null;) {
      const segment = await this.store.get<Segment>(ref);
      segments.push(segment);
      ref = segment.prev;
    }
    return segments.reverse().flatMap((segment) => segment.messages);
  }

  /** The segments from `head` back to the start of its chain (or the last compaction), oldest first. */
  async segments(head: ContentRef | null): Promise<Array<Segment & { ref: ContentRef }>> {
    const segments: Array<Segment & { ref: ContentRef }> = [];
    for (let ref = head; ref !== null;) {
      const segment = await this.store.get<Segment>(ref);
      segments.push({ ...segment, ref });
      ref = segment.prev;
    }
    return segments.reverse();
  }

  /**
   * Turns pending messages into API messages, fetching tool results kept by reference. A result
   * marked `aside` (over the turn's budget) goes through `setAside`, which stores it where the
   * model can read it and returns the preview that takes its place.
   */
  async resolve(
    pending: PendingUserMessage[],
    setAside?: (block: ToolResultBlock, ref: ToolResultRef) => Promise<ToolResultBlock>,
  ): Promise<Message[]> {
    const messages: Message[] = [];
    for (const message of pending) {
      const content: UserContentBlock[] = [];
      for (const block of message.content) {
        if (block.type !== 'tool_result_ref') {
          content.push(block);
          continue;
        }
        const result = await this.store.get<ToolResultBlock>(block.ref);
        content.push(block.aside && setAside ? await setAside(result, block) : result);
      }
      messages.push({ role: 'user', content });
    }
    return messages;
  }
}
