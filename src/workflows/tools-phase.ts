import type { ToolUseBlock } from '../shared/messages';
import type { State } from '../shared/session';
import { inputRefsOf } from '../shared/tool-input-refs';
import { runTools } from './run-tools';
import type { ToolResultEntry } from './run-tools';
import type { Session } from './session';
import { gateAndRun } from './tool-gate';
import { launchAgent } from './agent-phase';
import type { TurnEffects } from './tool-gate';

export interface ToolsPhaseOutcome {
  results: ToolResultEntry[];
  aborted: boolean;
  effects: TurnEffects;
}

/** Phase 4: every tool_use of the reply, gated by permissions, scheduled, results in request order. */
export async function runToolsPhase(
  session: Session,
  state: State,
  toolUseBlocks: ToolUseBlock[],
): Promise<ToolsPhaseOutcome> {
  const { control, activities } = session;
  const turn = state.turnCount;
  const effects: TurnEffects = {
    readFileState: state.readFileState,
    todos: state.todos,
    denials: [...state.denials],
    unsandboxedCommands: state.unsandboxedCommands ?? 0,
    hookFeedback: [],
    wakeup: state.wakeup,
    crons: state.crons,
  };
  const outcome = await control.runAbortable(() =>
    runTools(toolUseBlocks, {
      runTool: (toolUse) =>
        gateAndRun(toolUse, {
          sessionKey: session.sessionKey,
          workspace: session.input.workspace,
          control,
          permissions: () => session.permissions,
          addAllowRule: (rule) => {
            if (!session.permissions) return;
            const rules = session.permissions.rules;
            session.permissions = { ...session.permissions, rules: { ...rules, allow: [...rules.allow, rule] } };
            const summary = control.permissionSummary;
            if (summary) {
              control.permissionSummary = {
                ...summary,
                rules: [...summary.rules, { list: 'allow', rule, source: 'approve --always' }],
              };
            }
          },
          settings: session.input.permissions,
          sandbox: session.sandbox,
          runTool: activities.runTool,
          ...(session.hooks ? { hooks: session.hooks } : {}),
          effects,
          offered: session.tools,
          ...(control.background ? { background: control.background } : {}),
          launchAgent: (toolUse) => launchAgent(session, state, toolUse),
        }),
      onStart: (toolUse) => {
        control.runningTools.set(toolUse.id, toolUse.name);
        for (const ref of inputRefsOf(toolUse.input)) control.inFlightInputRefs.add(ref);
        control.record({
          turn,
          kind: 'tool_call',
          toolUseId: toolUse.id,
          name: toolUse.name,
          input: JSON.stringify(toolUse.input),
        });
      },
      onFinish: (toolUse, result, preview) => {
        control.runningTools.delete(toolUse.id);
        for (const ref of inputRefsOf(toolUse.input)) control.inFlightInputRefs.delete(ref);
        control.record({
          turn,
          kind: 'tool_result',
          toolUseId: toolUse.id,
          name: toolUse.name,
          isError: result.is_error ?? false,
          preview,
          // Where the whole result is, for a follower that prints it whole (stream-json).
          ...(result.type === 'tool_result_ref' ? { ref: result.ref } : {}),
          ...(effects.denials.some((denial) => denial.toolUseId === toolUse.id) ? { denied: true } : {}),
        });
      },
      isAborted: () => control.abortRequested,
    }),
  );
  return { ...outcome, effects };
}
