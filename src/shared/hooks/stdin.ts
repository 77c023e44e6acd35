/**
 * The JSON a hook reads on stdin, with Claude Code's field names (hooks reference, "Common input
 * fields" and each event's "input" section).
 */

/** What every event's input carries about the session. */
export interface HookSessionFacts {
  /** `session_id`: durable-agent's session key. */
  sessionId: string;
  /**
   * `transcript_path`. durable-agent keeps transcripts in its content store, not in a JSONL
   * file a hook could read, so this is empty unless the caller has a file to point at.
   */
  transcriptPath?: string;
  /** `cwd`: where the hook runs, the workspace. */
  cwd: string;
  /** `permission_mode`: the job's permission mode (`default`, `acceptEdits`, `plan`, ...). */
  permissionMode: string;
}

/** The event-specific part of the input. */
export type HookEventFacts =
  | { event: 'PreToolUse'; toolName: string; toolInput: unknown; toolUseId: string }
  | {
      event: 'PostToolUse';
      toolName: string;
      toolInput: unknown;
      toolUseId: string;
      /**
       * `tool_response`. Usually left out here and filled in by the activity from
       * `RunHooksInput.toolResponseRef`: the result text as the model saw it. (Claude Code gives
       * each tool's own result object; durable-agent's tools produce text.)
       */
      toolResponse?: unknown;
    }
  | {
      event: 'Stop';
      /** `stop_hook_active`: true when the model is already continuing because a Stop hook blocked. */
      stopHookActive: boolean;
      /** `last_assistant_message`: the text of the model's final reply. */
      lastAssistantMessage?: string;
    };

/** The stdin object for one event: the common fields, then the event's own. */
export function hookStdin(session: HookSessionFacts, facts: HookEventFacts): Record<string, unknown> {
  const common = {
    session_id: session.sessionId,
    transcript_path: session.transcriptPath ?? '',
    cwd: session.cwd,
    permission_mode: session.permissionMode,
    hook_event_name: facts.event,
  };
  switch (facts.event) {
    case 'PreToolUse':
      return { ...common, tool_name: facts.toolName, tool_input: facts.toolInput, tool_use_id: facts.toolUseId };
    case 'PostToolUse':
      return {
        ...common,
        tool_name: facts.toolName,
        tool_input: facts.toolInput,
        ...(facts.toolResponse !== undefined ? { tool_response: facts.toolResponse } : {}),
        tool_use_id: facts.toolUseId,
      };
    case 'Stop':
      return {
        ...common,
        stop_hook_active: facts.stopHookActive,
        ...(facts.lastAssistantMessage !== undefined ? { last_assistant_message: facts.lastAssistantMessage } : {}),
      };
  }
}
