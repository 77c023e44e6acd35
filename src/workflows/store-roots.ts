import type { State } from '../shared/session';
import type { ContentRef } from '../shared/transcript';

/** A content address anywhere in a text (the store's own pattern, unanchored). */
const REF_IN_TEXT = /sha256:[0-9a-f]{64}/g;

/**
 * What a running job still needs from the content store, as `durable-agent prune` asks for it:
 * the transcript head (its segments reach everything before it through `prev`), every tool result
 * still waiting in `pending` to be written into the transcript, and the system prompt. `turnState`
 * is the State of the turn in progress when it is newer than the loop's (after the model replied,
 * while the tools run or wait for approval): its head is the reply the next turn builds on.
 *
 * Any other reference a State holds counts too, so a field added later that keeps one (the
 * context bookkeeping, say) cannot have its content pruned from under a running job.
 */
export function storeRoots(state: State, systemPromptRef: ContentRef | undefined, turnState?: State): ContentRef[] {
  const roots = new Set<ContentRef>();
  for (const each of turnState ? [state, turnState] : [state]) {
    if (each.transcript.head !== null) roots.add(each.transcript.head);
    for (const message of each.pending) {
      for (const block of message.content) if (block.type === 'tool_result_ref') roots.add(block.ref);
    }
    for (const ref of JSON.stringify(each).match(REF_IN_TEXT) ?? []) roots.add(ref);
  }
  if (systemPromptRef !== undefined) roots.add(systemPromptRef);
  return [...roots];
}
