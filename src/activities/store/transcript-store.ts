import type { Message, ToolResultBlock, UserContentBlock } from '../../shared/messages';
import type { StoredUserMessage } from '../../shared/signal-payloads';
import type { ContentRef, PendingUserMessage, TextRef, ToolResultRef, TranscriptRef } from '../../shared/transcript';
import { ContentNotFoundError } from './content-store';
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
        if (block.type === 'text_ref') {
          content.push({ type: 'text', text: await this.queuedMessage(block) });
          continue;
        }
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

  /**
   * The text of a message sent by reference. Any client can signal a job, so the reference may
   * name nothing, or something that is not a message: the model is told a message was lost
   * rather than the job failing on every attempt.
   */
  private async queuedMessage(block: TextRef): Promise<string> {
    const stored = await this.store.get<StoredUserMessage>(block.ref).catch((error: unknown) => {
      if (error instanceof ContentNotFoundError) return undefined;
      throw error;
    });
    if (stored?.kind !== 'user-message' || typeof stored.text !== 'string') {
      return `[durable-agent: the user sent a message by reference (${block.ref}), but the store holds no message under it, so it is lost]`;
    }
    // The inbox's bounds counted the length the sender gave: a text of another length is not the
    // message they describe.
    if (stored.text.length !== block.chars) {
      return `[durable-agent: the user sent a message by reference (${block.ref}) said to be ${block.chars} characters long, but the stored text is ${stored.text.length}, so it was dropped]`;
    }
    return stored.text;
  }
}
