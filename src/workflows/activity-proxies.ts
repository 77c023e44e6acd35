import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { SessionTimeouts } from '../shared/session';

type Activities = ReturnType<typeof createActivities>;

/**
 * Activity stubs with this session's timeouts. Tool calls get one stub per `tool_use_id` so the
 * activity id names the call (and shows up as such in the Temporal UI and history).
 */
export function sessionActivities(timeouts: SessionTimeouts) {
  const model = proxyActivities<Pick<Activities, 'callModel'>>({
    startToCloseTimeout: timeouts.modelStartToCloseMs,
    heartbeatTimeout: timeouts.modelHeartbeatMs,
    retry: {
      initialInterval: timeouts.modelRetryInitialMs,
      backoffCoefficient: 2,
      maximumInterval: 60_000,
      maximumAttempts: timeouts.modelRetryMaxAttempts,
    },
  });
  const local = proxyActivities<
    Pick<Activities, 'buildSystemPrompt' | 'commitTranscript' | 'loadPermissionSettings' | 'loadSettings'>
  >({
    startToCloseTimeout: 60_000,
    retry: { initialInterval: 1_000, maximumAttempts: 10 },
  });
  const toolStub = (toolUseId: string) =>
    proxyActivities<Pick<Activities, 'runTool'>>({
      activityId: `tool-${toolUseId}`,
      // Bash may run for ten minutes; the heartbeat, not this, detects a dead worker.
      startToCloseTimeout: 20 * 60_000,
      heartbeatTimeout: timeouts.toolHeartbeatMs,
      retry: { initialInterval: 1_000, maximumAttempts: 5 },
    });
  return {
    callModel: model.callModel,
    buildSystemPrompt: local.buildSystemPrompt,
    commitTranscript: local.commitTranscript,
    loadPermissionSettings: local.loadPermissionSettings,
    loadSettings: local.loadSettings,
    runTool: (...args: Parameters<Activities['runTool']>) => toolStub(args[0].toolUse.id).runTool(...args),
  };
}

export type SessionActivities = ReturnType<typeof sessionActivities>;
