import { FileContentStore } from '../src/activities/store/content-store';
import { TranscriptStore } from '../src/activities/store/transcript-store';
import { seedConversation } from '../src/activities/seed-conversation';
import type { Message } from '../src/shared/messages';
import { emptyTranscript } from '../src/shared/transcript';
import { tempDir } from './support/harness';

const prompt: Message = { role: 'user', content: [{ type: 'text', text: 'Look at a' }] };
const call: Message = {
  role: 'assistant',
  content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a' } }],
};

describe('seeding a resumed conversation', () => {
  const store = new FileContentStore(tempDir('seed-store'));
  const transcripts = new TranscriptStore(store);

  test('a job that ended with results pending: its chain is reused up to the reply, the results carry over by reference', async () => {
    const reply = await transcripts.append(emptyTranscript(), [prompt, call]);
    const ended = await transcripts.append(reply, [
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'A'.repeat(1000) }] },
    ]);
    const seeded = await seedConversation({ store, transcripts }, { transcript: ended });
    expect(seeded.transcript).toEqual(reply);
    expect(seeded.notes).toEqual([]);
    expect(seeded.carry).toEqual([
      {
        type: 'tool_result_ref',
        tool_use_id: 't1',
        ref: expect.stringMatching(/^sha256:/),
        is_error: false,
        chars: 1000,
      },
    ]);
    const ref = (seeded.carry[0] as { ref: string }).ref;
    expect(await store.get(ref)).toEqual({ type: 'tool_result', tool_use_id: 't1', content: 'A'.repeat(1000) });
  });

  test('an inline conversation is written as a chain; an unanswered call is answered as not run', async () => {
    const seeded = await seedConversation({ store, transcripts }, { messages: [prompt, call] });
    expect(await transcripts.load(seeded.transcript)).toEqual([prompt, call]);
    expect(seeded.carry).toEqual([
      expect.objectContaining({ type: 'tool_result_ref', tool_use_id: 't1', is_error: true }),
    ]);
    expect(seeded.notes).toEqual(['unanswered tool calls answered as not run']);
  });

  test('a conversation missing from this store fails for good, saying where to resume', async () => {
    const missing = { head: `sha256:${'0'.repeat(64)}`, messageCount: 2 };
    await expect(seedConversation({ store, transcripts }, { transcript: missing })).rejects.toMatchObject({
      nonRetryable: true,
      message: expect.stringContaining("is not in this worker's store"),
    });
  });
});
