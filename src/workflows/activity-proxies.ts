import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { hookTimeoutSec } from '../shared/hooks';
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
  // A compaction is a model call like any other, but fewer attempts: the loop counts a failed
  // compaction and goes on without it rather than waiting out twenty retries.
  const compaction = proxyActivities<Pick<Activities, 'compactConversation'>>({
    startToCloseTimeout: timeouts.modelStartToCloseMs,
    heartbeatTimeout: timeouts.modelHeartbeatMs,
    retry: {
      initialInterval: timeouts.modelRetryInitialMs,
      backoffCoefficient: 2,
      maximumInterval: 60_000,
      maximumAttempts: Math.min(4, timeouts.modelRetryMaxAttempts),
      // A reply with no summary in it is the model's answer, not a passing fault: count it, move on.
      nonRetryableErrorTypes: ['prompt_too_long', 'compaction_failed'],
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
  // All of an event's hooks run in one activity, in parallel: it may take as long as the slowest.
  const hookStub = (key: string, input: Parameters<Activities['runHooks']>[0]) =>
    proxyActivities<Pick<Activities, 'runHooks'>>({
      activityId: `hook-${key}`,
      startToCloseTimeout: Math.max(...input.hooks.map((hook) => hookTimeoutSec(hook))) * 1000 + 60_000,
      heartbeatTimeout: timeouts.toolHeartbeatMs,
      // A retry runs the hooks again; that only happens when a worker died mid-run.
      retry: { initialInterval: 1_000, maximumAttempts: 3 },
    });
  return {
    callModel: model.callModel,
    compactConversation: compaction.compactConversation,
    buildSystemPrompt: local.buildSystemPrompt,
    commitTranscript: local.commitTranscript,
    loadPermissionSettings: local.loadPermissionSettings,
    loadSettings: local.loadSettings,
    runTool: (...args: Parameters<Activities['runTool']>) => toolStub(args[0].toolUse.id).runTool(...args),
    runHooks: (input: Parameters<Activities['runHooks']>[0], key: string) => hookStub(key, input).runHooks(input),
  };
}

export type SessionActivities = ReturnType<typeof sessionActivities>;
