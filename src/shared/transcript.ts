import type { TextBlock, ToolResultBlock } from './messages';

/**
 * A content address in the transcript store, `sha256:<hex>`. The workflow holds references;
 * the content itself never enters workflow history more than once (DESIGN.md invariant 4).
 */
export type ContentRef = string;

/**
 * The conversation so far, as the workflow sees it: the head of a chain of segments kept in the
 * transcript store. Each segment holds the messages appended by one model call and a link to the
 * previous segment, so a model call's input is one reference however long the transcript grows.
 */
export interface TranscriptRef {
  head: ContentRef | null;
  messageCount: number;
}

export const emptyTranscript = (): TranscriptRef => ({ head: null, messageCount: 0 });

/** A tool result whose full content sits in the store; the model call resolves it. */
export interface ToolResultRef {
  type: 'tool_result_ref';
  tool_use_id: string;
  ref: ContentRef;
  is_error: boolean;
  /**
   * Over the turn's tool-result budget: the model call stores the content in the workspace and
   * sends a preview and the file's path instead.
   */
  aside?: boolean;
  /** Length of the result's content, for the context estimate (absent in older jobs). */
  chars?: number;
}

/**
 * A queued user message whose text sits in the store (sent with `durable-agent send --file`); the
 * model call puts the text back.
 */
export interface TextRef {
  type: 'text_ref';
  ref: ContentRef;
  chars: number;
}

export type PendingBlock = TextBlock | ToolResultBlock | ToolResultRef | TextRef;

/**
 * A user message that waits for the next model call to be written into the transcript: tool
 * results of the turn that just ended, queued user input, recovery prompts.
 */
export interface PendingUserMessage {
  role: 'user';
  content: PendingBlock[];
}
