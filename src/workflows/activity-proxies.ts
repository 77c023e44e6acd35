import { ActivityCancellationType, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { hookTimeoutSec } from '../shared/hooks';
import { modelStartToCloseMs } from '../shared/session';
import type { SessionTimeouts } from '../shared/session';
import { modelTaskQueue } from '../shared/task-queues';
import { activitySummary, toolCallLabel } from './progress-details';

type Activities = ReturnType<typeof createActivities>;

/** A background command's activity: a week, with an hour to spare (its Bash limit is the week). */
const BACKGROUND_START_TO_CLOSE_MS = 7 * 24 * 3_600_000 + 3_600_000;

/**
 * Jobs recorded before this patch cancelled their tool and hook activities with `TRY_CANCEL`: an
 * abort resolved at once, and the Terminal could be written while a Bash still ran. Newer jobs wait
 * until the activity has stopped (`WAIT_CANCELLATION_COMPLETED`), so the Terminal comes after the
 * tools. Asked right before each such activity is scheduled, so a job that started on older code
 * keeps its old behaviour while it replays and takes the new one from its next tool call on.
 */
export const ABORT_WAITS_FOR_TOOLS_PATCH = 'abort-waits-for-tools';

/** How a tool or hook activity is cancelled: after it stopped, for every job that is not an old replay. */
function toolCancellationType(): ActivityCancellationType {
  return patched(ABORT_WAITS_FOR_TOOLS_PATCH)
    ? ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
    : ActivityCancellationType.TRY_CANCEL;
}

/**
 * Jobs recorded before this patch scheduled their model calls (`callModel`, `compactConversation`)
 * on the job's own task queue, where each streaming reply held one of the worker's tool slots for
 * its whole stream. Newer jobs schedule them on the job's model queue (`modelTaskQueue`), which
 * every worker polls with its own slot count and the server's rate limit. Asked right before each
 * model call is scheduled, like {@link ABORT_WAITS_FOR_TOOLS_PATCH}: an old job replays its old
 * commands and sends its next model call to the model queue.
 */
export const MODEL_TASK_QUEUE_PATCH = 'model-task-queue';

/** Where a model call goes: the job's model queue, unless this is the replay of an older job. */
function modelCallQueue(): Pick<ActivityOptions, 'taskQueue'> {
  return patched(MODEL_TASK_QUEUE_PATCH) ? { taskQueue: modelTaskQueue(workflowInfo().taskQueue) } : {};
}

/**
 * Activity stubs with this session's timeouts. Every call gets a summary naming its turn and what
 * it does (`turn 3 · Read src/auth/login.ts`), which the Temporal UI shows on the activity. Tool
 * calls get one stub per `tool_use_id` so the activity id names the call too.
 */
/**
 * Guards workspace affinity: a new job first asks which host holds its workspace
 * (`claimWorkspace`), then sends its tool calls, hooks and workspace reads to that host's queue.
 * Jobs recorded before it sent them to the job's own queue, and replay so; asked once, at the start.
 */
export const WORKSPACE_AFFINITY_PATCH = 'workspace-affinity';

/** Where a job's workspace work goes: the queue of the host that holds the workspace, once known. */
export interface WorkspaceRoute {
  hostQueue?: string;
}

export function sessionActivities(timeouts: SessionTimeouts, turn: () => number = () => 0, route: WorkspaceRoute = {}) {
  const onHost = (): Pick<ActivityOptions, 'taskQueue'> => (route.hostQueue ? { taskQueue: route.hostQueue } : {});
  // Each call's start-to-close timeout comes from its max_tokens (`modelStartToCloseMs`).
  const modelOptions: ActivityOptions = {
    heartbeatTimeout: timeouts.modelHeartbeatMs,
    retry: {
      initialInterval: timeouts.modelRetryInitialMs,
      backoffCoefficient: 2,
      maximumInterval: 60_000,
      maximumAttempts: timeouts.modelRetryMaxAttempts,
    },
  };
  // A compaction is a model call like any other, but fewer attempts: the loop counts a failed
  // compaction and goes on without it rather than waiting out twenty retries.
  const compactionOptions: ActivityOptions = {
    heartbeatTimeout: timeouts.modelHeartbeatMs,
    retry: {
      initialInterval: timeouts.modelRetryInitialMs,
      backoffCoefficient: 2,
      maximumInterval: 60_000,
      maximumAttempts: Math.min(4, timeouts.modelRetryMaxAttempts),
      // A reply with no summary in it is the model's answer, not a passing fault: count it, move on.
      nonRetryableErrorTypes: ['prompt_too_long', 'compaction_failed'],
    },
  };
  const localOptions: ActivityOptions = {
    startToCloseTimeout: 60_000,
    retry: { initialInterval: 1_000, maximumAttempts: 10 },
  };
  // The store's (transcripts) go to any worker; the workspace's (settings, system prompt) to its host.
  const local = (what: string) =>
    proxyActivities<Pick<Activities, 'commitTranscript' | 'seedConversation'>>({ ...localOptions, summary: what });
  const inWorkspace = (what: string) =>
    proxyActivities<
      Pick<Activities, 'buildSystemPrompt' | 'loadPermissionSettings' | 'loadSettings' | 'loadAgentDefinition'>
    >({
      ...localOptions,
      ...onHost(),
      summary: what,
    });
  // A worker of another host may take the claim first: its retries, a second apart, reach the others.
  // A job told its host (a batch task in the clone a worker made) asks that host alone.
  const claim = () =>
    proxyActivities<Pick<Activities, 'claimWorkspace'>>({
      ...onHost(),
      startToCloseTimeout: 30_000,
      retry: { initialInterval: 500, backoffCoefficient: 1.5, maximumInterval: 2_000, maximumAttempts: 6 },
      summary: 'setup · find the host of the workspace',
    });
  const toolStub = (input: Parameters<Activities['runTool']>[0]) =>
    proxyActivities<Pick<Activities, 'runTool'>>({
      ...onHost(),
      activityId: `tool-${input.toolUse.id}`,
      summary: activitySummary(turn(), toolCallLabel(input.toolUse, input.workspace)),
      // Bash may run for ten minutes; the heartbeat, not this, detects a dead worker.
      startToCloseTimeout: 20 * 60_000,
      heartbeatTimeout: timeouts.toolHeartbeatMs,
      retry: { initialInterval: 1_000, maximumAttempts: 5 },
      cancellationType: toolCancellationType(),
    });
  // A background command runs as long as it runs (the job stops it when it ends): its heartbeat, not
  // a start-to-close timeout, tells a dead worker, whose successor on the host adopts the command.
  const backgroundStub = (input: Parameters<Activities['runTool']>[0]) =>
    proxyActivities<Pick<Activities, 'runTool'>>({
      ...onHost(),
      activityId: `background-${input.toolUse.id}`,
      summary: activitySummary(turn(), `background ${toolCallLabel(input.toolUse, input.workspace)}`),
      startToCloseTimeout: BACKGROUND_START_TO_CLOSE_MS,
      heartbeatTimeout: timeouts.toolHeartbeatMs,
      retry: { initialInterval: 1_000, maximumAttempts: 5 },
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
  // All of an event's hooks run in one activity, in parallel: it may take as long as the slowest.
  const hookStub = (key: string, input: Parameters<Activities['runHooks']>[0]) =>
    proxyActivities<Pick<Activities, 'runHooks'>>({
      ...onHost(),
      activityId: `hook-${key}`,
      summary: activitySummary(turn(), hookLabel(input)),
      startToCloseTimeout: Math.max(...input.hooks.map((hook) => hookTimeoutSec(hook))) * 1000 + 60_000,
      heartbeatTimeout: timeouts.toolHeartbeatMs,
      // A retry runs the hooks again; that only happens when a worker died mid-run.
      retry: { initialInterval: 1_000, maximumAttempts: 3 },
      cancellationType: toolCancellationType(),
    });
  const setup = (what: string) => `setup · ${what}`;
  return {
    callModel: (input: Parameters<Activities['callModel']>[0]) =>
      proxyActivities<Pick<Activities, 'callModel'>>({
        ...modelOptions,
        ...modelCallQueue(),
        // Long enough for the longest reply the call may ask for (max-output recovery asks for 64k).
        startToCloseTimeout: modelStartToCloseMs(timeouts, input.maxTokens),
        summary: activitySummary(turn(), `model ${input.model}`),
      }).callModel(input),
    compactConversation: (input: Parameters<Activities['compactConversation']>[0]) =>
      proxyActivities<Pick<Activities, 'compactConversation'>>({
        ...compactionOptions,
        ...modelCallQueue(),
        startToCloseTimeout: modelStartToCloseMs(timeouts, input.maxSummaryTokens),
        summary: activitySummary(turn(), `compact (${input.trigger}) · model ${input.model}`),
      }).compactConversation(input),
    buildSystemPrompt: (input: Parameters<Activities['buildSystemPrompt']>[0]) =>
      inWorkspace(setup('system prompt')).buildSystemPrompt(input),
    commitTranscript: (input: Parameters<Activities['commitTranscript']>[0]) =>
      local(activitySummary(turn(), 'save the transcript')).commitTranscript(input),
    loadPermissionSettings: (input: Parameters<Activities['loadPermissionSettings']>[0]) =>
      inWorkspace(setup('permission settings')).loadPermissionSettings(input),
    loadSettings: (input: Parameters<Activities['loadSettings']>[0]) =>
      inWorkspace(setup('settings')).loadSettings(input),
    claimWorkspace: (input: Parameters<Activities['claimWorkspace']>[0]) => claim().claimWorkspace(input),
    loadAgentDefinition: (input: Parameters<Activities['loadAgentDefinition']>[0]) =>
      inWorkspace(activitySummary(turn(), `agent definition ${input.name}`)).loadAgentDefinition(input),
    seedConversation: (input: Parameters<Activities['seedConversation']>[0]) =>
      local(setup('resumed conversation')).seedConversation(input),
    runTool: (input: Parameters<Activities['runTool']>[0]) => toolStub(input).runTool(input),
    runBackgroundTool: (input: Parameters<Activities['runTool']>[0]) => backgroundStub(input).runTool(input),
    runHooks: (input: Parameters<Activities['runHooks']>[0], key: string) => hookStub(key, input).runHooks(input),
  };
}

/** A hook activity in a few words: the event, and the tool it is about. */
function hookLabel(input: Parameters<Activities['runHooks']>[0]): string {
  const tool = input.stdin.tool_name;
  const count = input.hooks.length === 1 ? '' : ` (${input.hooks.length} hooks)`;
  return `hook ${input.event}${typeof tool === 'string' ? ` ${tool}` : ''}${count}`;
}

export type SessionActivities = ReturnType<typeof sessionActivities>;
