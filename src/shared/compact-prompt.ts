/**
 * The words of a compaction: what the model is asked when the conversation is summarised
 * (autocompact and reactive compaction), and what it reads afterwards in place of the
 * conversation. Shared by the compaction activity and the scripted model server, which
 * recognises a compaction request by the marker its last user message begins with.
 */

/** The first words of every compaction request's last user message; the scripted model server keys on it. */
export const COMPACTION_PROMPT_MARKER = 'Your task is to create a detailed summary of the conversation so far';

/** The instruction sent after the conversation when it is compacted. */
export const COMPACTION_PROMPT = `${COMPACTION_PROMPT_MARKER}, so that the work can go on from the summary alone once the earlier messages are gone. Do not call any tool: answer with text only.

Be thorough about technical detail: file paths, function names, commands, error messages and decisions made. Write the summary inside <summary></summary> tags, in these sections:

1. Primary Request and Intent: everything the user asked for, in detail, including later changes of direction.
2. Key Technical Concepts: technologies, frameworks, conventions and constraints that matter for the work.
3. Files and Code Sections: each file read, changed or created, why it matters, and the important code (full snippets where a later step depends on them).
4. Errors and fixes: what went wrong, how it was fixed, and any feedback the user gave about it.
5. Pending Tasks: what was asked for and is not done yet.
6. Current Work: precisely what was being worked on immediately before this summary, with file names and code.
7. Optional Next Step: the next step, only if it follows directly from the most recent request; quote the latest messages to show where the work stopped.`;

/** Opens the user message that stands in for the compacted part of the conversation. */
export function summaryMessageText(summary: string, keptMessages: number): string {
  const after =
    keptMessages > 0
      ? 'The most recent messages follow unchanged.'
      : 'Continue the task from where it stopped, without asking the user any further questions.';
  return (
    'This session continues an earlier conversation that was compacted to save context. ' +
    `The summary below covers the earlier part. ${after}\n\n${summary}`
  );
}

/** Stands in for a tool result that microcompact cleared. */
export const CLEARED_TOOL_RESULT =
  '[Old tool result cleared to save context. Run the tool again if you need this output.]';

/** Begins a compaction request whose oldest messages had to be left out to fit the context window. */
export const OMITTED_FOR_FIT =
  '[The oldest part of this conversation was left out of this summary request because it did not fit the context window.]';
