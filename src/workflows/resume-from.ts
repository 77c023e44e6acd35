import { ActivityFailure } from '@temporalio/workflow';
import { CHARS_PER_TOKEN, initialContextState } from '../shared/context/context-state';
import type { State } from '../shared/session';
import type { Session } from './session';

/** Guards the start of a job that continues an earlier conversation (`run --resume`, `--resume-from`). */
export const RESUME_FROM_PATCH = 'resume-from';

/**
 * The first State of a job that continues a conversation: its transcript is that conversation,
 * and the prompt waits after whatever its last user message held. The first context estimate
 * counts the conversation, so a long one is compacted before the first call rather than after a
 * refusal.
 */
export async function seededState(
  session: Session,
  state: State,
): Promise<{ kind: 'ready'; state: State } | { kind: 'failed'; detail: string }> {
  const from = session.input.resumeFrom;
  if (!from) return { kind: 'ready', state };
  try {
    const seeded = await session.activities.seedConversation({
      ...(from.transcript ? { transcript: from.transcript } : {}),
      ...(from.messages ? { messages: from.messages } : {}),
    });
    const count = seeded.transcript.messageCount;
    session.control.record({
      turn: state.turnCount,
      kind: 'notice',
      text: `resumed from ${from.source}: ${count} message(s)${seeded.notes.length ? `; ${seeded.notes.join('; ')}` : ''}`,
    });
    const prompt = state.pending.flatMap((message) => message.content);
    return {
      kind: 'ready',
      state: {
        ...state,
        transcript: seeded.transcript,
        pending: [{ role: 'user', content: [...seeded.carry, ...prompt] }],
        ...(session.contextPipeline
          ? {
              context: {
                ...initialContextState(),
                lastTokens: Math.round(seeded.chars / CHARS_PER_TOKEN),
                lastRequestChars: seeded.chars,
              },
            }
          : {}),
      },
    };
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    return { kind: 'failed', detail: error.cause?.message ?? error.message };
  }
}
