import { ActivityFailure, patched } from '@temporalio/workflow';
import { mergeRules } from '../shared/permissions';
import type { PermissionContext } from '../shared/permissions';
import { DEFAULT_MAX_TOKENS } from '../shared/recovery';
import type { SessionInput } from '../shared/session';
import { TOOL_DEFINITIONS } from '../shared/tools';
import type { SessionActivities } from './activity-proxies';
import type { SessionControl } from './session-control';

/** Everything a turn needs besides the State: fixed for the life of the job (but for added rules). */
export interface Session {
  input: SessionInput;
  sessionKey: string;
  systemPromptRef: string;
  tools: string[];
  maxTokens: number;
  activities: SessionActivities;
  control: SessionControl;
  /** Undefined only for jobs started before permissions existed (their histories replay without). */
  permissions: PermissionContext | undefined;
}

export type Prepared = { kind: 'ready'; session: Session } | { kind: 'failed'; detail: string };

/**
 * Start-up, before the first turn: the system prompt (workspace, git, CLAUDE.md) and the
 * permission settings of the workspace merged with the job's own. Done once; continue-as-new
 * carries both over.
 */
export async function prepareSession(
  input: SessionInput,
  sessionKey: string,
  activities: SessionActivities,
  control: SessionControl,
): Promise<Prepared> {
  const base = {
    input,
    sessionKey,
    tools: input.tools ?? TOOL_DEFINITIONS.map((tool) => tool.name),
    maxTokens: input.maxTokens ?? DEFAULT_MAX_TOKENS,
    activities,
    control,
  };
  if (input.resume) {
    return {
      kind: 'ready',
      session: { ...base, systemPromptRef: input.resume.systemPromptRef, permissions: input.resume.permissions },
    };
  }
  try {
    const { ref } = await activities.buildSystemPrompt({
      workspace: input.workspace,
      model: input.model,
      appendSystemPrompt: input.appendSystemPrompt,
    });
    let permissions: PermissionContext | undefined;
    if (patched('permission-settings')) {
      const settings = await activities.loadPermissionSettings({ workspace: input.workspace });
      const own = input.permissions;
      permissions = {
        mode: own?.mode ?? settings.defaultMode ?? 'default',
        rules: mergeRules(settings.rules, { allow: own?.allow, ask: own?.ask, deny: own?.deny }),
        workspace: input.workspace,
      };
    }
    return { kind: 'ready', session: { ...base, systemPromptRef: ref, permissions } };
  } catch (error) {
    // A job that cannot start (workspace missing on the worker, broken settings file) still ends
    // with a Terminal that says why.
    if (!(error instanceof ActivityFailure)) throw error;
    return { kind: 'failed', detail: error.cause?.message ?? error.message };
  }
}
