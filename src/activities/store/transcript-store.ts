import type { Message, ToolResultBlock, UserContentBlock } from '../../shared/messages';
import type { ContentRef, PendingUserMessage, TranscriptRef } from '../../shared/transcript';
import type { FileContentStore } from './content-store';

/** One link of a transcript chain: the messages one model call added, and the link before. */
interface Segment {
  prev: ContentRef | null;
  messages: Message[];
}

/**
 * Transcripts as chains of segments in the content store. Appending writes one small segment;
 * reading walks the chain back to the start.
 */
export class TranscriptStore {
  constructor(private readonly store: FileContentStore) {}

  async append(transcript: TranscriptRef, messages: Message[]): Promise<TranscriptRef> {
    if (messages.length === 0) return transcript;
    const head = await this.store.put({ prev: transcript.head, messages } satisfies Segment);
    return { head, messageCount: transcript.messageCount + messages.length };
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

  /** Turns pending messages into API messages, fetching tool results kept by reference. */
  async resolve(pending: PendingUserMessage[]): Promise<Message[]> {
    const messages: Message[] = [];
    for (const message of pending) {
      const content: UserContentBlock[] = [];
      for (const block of message.content) {
        if (block.type === 'tool_result_ref') content.push(await this.store.get<ToolResultBlock>(block.ref));
        else content.push(block);
      }
      messages.push({ role: 'user', content });
    }
    return messages;
  }
}
