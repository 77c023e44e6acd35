import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import type {
  BuildSystemPromptInput,
  LoadAgentDefinitionInput,
  CallModelInput,
  CommitTranscriptInput,
  CompactInput,
  PermissionSettings,
  RunToolInput,
} from '../shared/activity-types';
import { loadPermissionSettings, loadSettingsLayers } from './permission-settings';
import type { LoadSettingsInput, LoadSettingsResult } from '../shared/activity-types';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultBashEnv } from './tools';
import { callModel } from './call-model';
import { compactConversation } from './compact';
import { FileContentStore } from './store/content-store';
import type { ContentStore } from './store/content-store';
import { TranscriptStore } from './store/transcript-store';
import { runTool } from './run-tool';
import { runHooks } from './hooks';
import type { RunHooksInput } from '../shared/hooks';
import { SandboxEngine } from './sandbox/engine';
import { buildSystemPrompt } from './system-prompt';
import { loadAgentDefinition } from './agent-definitions';
import { seedConversation } from './seed-conversation';
import type { SeedConversationInput } from './seed-conversation';
import { awaitTaskRuns, earlierRunsPage, loadBatchTasks, prepareWorktree, priorTaskRuns } from './batch';

/** What the activities need from the outside world; tests pass their own (the seed's QueryDeps). */
export interface ActivityDeps {
  /** Called per model call, so a missing API key fails that call with a clear message. */
  anthropic: () => Anthropic;
  /**
   * This worker's data folder (`<DURABLE_AGENT_HOME>/store`): the tool journal, saved large results,
   * the registry of running commands, and the content store unless `contentStore` names another.
   */
  storeDir: string;
  /**
   * The content store (transcripts, tool results, system prompts), which every worker of a job must
   * share: the worker's `openContentStore` (a folder, or S3). Defaults to the folder `storeDir`.
   */
  contentStore?: ContentStore;
  clock?: () => Date;
  /** Environment Bash starts from; defaults to `defaultBashEnv(process.env)` (an allowlist, no credentials). */
  toolEnv?: NodeJS.ProcessEnv;
  /**
   * The worker's sandbox for Bash. Defaults to bubblewrap from PATH, hiding `storeDir` besides the
   * built-in credential places; the worker passes one that hides its whole data folder and TLS files.
   */
  sandbox?: SandboxEngine;
  streamIdleMs?: number;
  /** Test hook, see `RunToolDeps.crashAfterJournal`. */
  crashAfterJournal?: string;
  /**
   * Where a batch task that names a `repo` gets its workspace made (`<root>/<batch>/<task>`).
   * Defaults to `DURABLE_AGENT_WORKTREES`, else `durable-agent-worktrees` in the home directory:
   * outside the data folder, which the sandbox hides from Bash.
   */
  worktreeRoot?: string;
  /** The queue of this worker's host (`hostTaskQueue`), which `claimWorkspace` hands to a job. */
  hostQueue?: string;
}

/**
 * Tell a starting job which host holds its workspace: the queue of this worker's host, when the
 * workspace is a folder here. When it is not, the call fails and is retried, and the retry may reach
 * a worker of the host that has it; a job whose workspace no worker has ends \`setup_failed\`.
 */
async function claimWorkspace(
  hostQueue: string | undefined,
  input: { workspace: string },
): Promise<{ hostQueue?: string }> {
  const stat = await fs.promises.stat(input.workspace).catch(() => undefined);
  if (!stat?.isDirectory()) {
    throw ApplicationFailure.create({
      message: `the workspace ${input.workspace} is not a folder on ${os.hostname()} (${hostQueue ?? 'no host queue'})`,
      type: 'workspace_not_here',
    });
  }
  return hostQueue ? { hostQueue } : {};
}

/** The default of `ActivityDeps.worktreeRoot`. */
export function defaultWorktreeRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.DURABLE_AGENT_WORKTREES?.trim() || path.join(os.homedir(), 'durable-agent-worktrees');
}

/** The activities of an `agentSession`, bound to their dependencies. */
export function createActivities(deps: ActivityDeps) {
  const store = deps.contentStore ?? new FileContentStore(deps.storeDir);
  const dataDir = deps.storeDir;
  const transcripts = new TranscriptStore(store);
  const clock = deps.clock ?? (() => new Date());
  const toolEnv = deps.toolEnv ?? defaultBashEnv(process.env);
  const sandbox = deps.sandbox ?? new SandboxEngine({ workerPrivatePaths: [deps.storeDir] });
  return {
    callModel: (input: CallModelInput) =>
      callModel({ anthropic: deps.anthropic, store, transcripts, dataDir, streamIdleMs: deps.streamIdleMs }, input),
    compactConversation: (input: CompactInput) =>
      compactConversation(
        { anthropic: deps.anthropic, store, transcripts, dataDir, streamIdleMs: deps.streamIdleMs },
        input,
      ),
    runTool: (input: RunToolInput) =>
      runTool({ store, dataDir, toolEnv, sandbox, crashAfterJournal: deps.crashAfterJournal }, input),
    runHooks: (input: RunHooksInput) => runHooks({ store, toolEnv, sandbox }, input),
    buildSystemPrompt: (input: BuildSystemPromptInput) => buildSystemPrompt({ store, clock, toolEnv }, input),
    seedConversation: (input: SeedConversationInput) => seedConversation({ store, transcripts }, input),
    commitTranscript: async (input: CommitTranscriptInput) =>
      transcripts.append(input.transcript, await transcripts.resolve(input.append)),
    loadSettings: async (input: LoadSettingsInput): Promise<LoadSettingsResult> => {
      const homeDir = os.homedir();
      try {
        return { layers: await loadSettingsLayers(input.workspace, { sources: input.sources, homeDir }), homeDir };
      } catch (error) {
        throw ApplicationFailure.create({
          message: error instanceof Error ? error.message : String(error),
          type: 'invalid_settings',
          nonRetryable: true,
        });
      }
    },
    claimWorkspace: (input: { workspace: string }) => claimWorkspace(deps.hostQueue, input),
    loadAgentDefinition: (input: LoadAgentDefinitionInput) => loadAgentDefinition(os.homedir(), input),
    loadBatchTasks: (input: { ref: string; from: number; count: number }) => loadBatchTasks(store, input),
    priorTaskRuns,
    earlierRunsPage: (input: Parameters<typeof earlierRunsPage>[1]) => earlierRunsPage(store, input),
    awaitTaskRuns,
    // The clone is on this host: the job is told so, and its tools come here.
    prepareWorktree: async (input: Parameters<typeof prepareWorktree>[1]) => ({
      ...(await prepareWorktree(deps.worktreeRoot ?? defaultWorktreeRoot(), input)),
      ...(deps.hostQueue ? { hostQueue: deps.hostQueue } : {}),
    }),
    loadPermissionSettings: async (input: { workspace: string }): Promise<PermissionSettings> => {
      try {
        return await loadPermissionSettings(input.workspace);
      } catch (error) {
        // A broken settings file will not mend itself on retry: the job ends saying what to fix.
        throw ApplicationFailure.create({
          message: error instanceof Error ? error.message : String(error),
          type: 'invalid_settings',
          nonRetryable: true,
        });
      }
    },
  };
}
