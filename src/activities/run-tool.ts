import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { RunToolInput, ToolRunResult } from '../shared/activity-types';
import { toolResultChars, type ToolResultBlock } from '../shared/messages';
import { jobSandboxOrDefault } from '../shared/sandbox';
import { classifyToolUse } from '../shared/tool-definition';
import type { ToolOutcome } from '../shared/tool-definition';
import { getToolDefinition } from '../shared/tools';
import { withInputRefsResolved } from '../shared/tool-input-refs';
import type { SandboxEngine } from './sandbox/engine';
import type { ContentStore } from './store/content-store';
import { GroupRegistry } from './store/group-registry';
import { workspaceHome } from './store/workspace-home';
import { resumeCommand } from './command-resume';
import { ownerAttempt, ToolJournal } from './tool-journal';
import type { CommandRecord, FileChange, JournalEntry } from './tool-journal';
import { thisHost, type CommandFiles, type CommandGroup } from './tools/command-run';
import { executeTool } from './tools';
import { saveResult, storeLargeResult } from './tools/large-result';
import { stateOf } from './tools/read-state';
import { recoveredFile, removeAbandonedCopies } from './tools/replace-file';

export interface RunToolDeps {
  store: ContentStore;
  /**
   * This worker's own data folder (`<DURABLE_AGENT_HOME>/store`): the tool journal, saved large
   * results and the registry of running commands, all of the workspaces on this host; local even
   * when the content store is shared.
   */
  dataDir: string;
  /** The environment Bash starts from: an allowlist of the worker's variables, no credentials. */
  toolEnv: NodeJS.ProcessEnv;
  /** The worker's sandbox; each call runs under its job's policy (the default when the input has none). */
  sandbox: SandboxEngine;
  /**
   * Test hook: SIGKILL this worker right after the journal records this tool_use_id as completed,
   * before Temporal hears of it — the window the journal exists for.
   */
  crashAfterJournal?: string;
  /** Test hook: what runs the tool (`executeTool` unless a test needs a tool that behaves otherwise). */
  execute?: typeof executeTool;
}

const PREVIEW_CHARS = 300;

/**
 * How often a running call heartbeats, whatever the tool: well inside the 30 s heartbeat timeout
 * (a sort of a huge Glob or Grep listing, a Read of a huge file on a slow file system report
 * nothing themselves), and often enough that a cancellation, which only a heartbeat's answer
 * brings, reaches the call within about a second of the worker's throttle.
 */
export const TOOL_HEARTBEAT_MS = 1_000;

/** How often a background command heartbeats after its first minute: a third of the 30 s timeout. */
export const BACKGROUND_HEARTBEAT_MS = 10_000;
/** How long a background command heartbeats every second first, so that a quick TaskStop is quick. */
const BACKGROUND_BRISK_MS = 60_000;

/** The tools that replace a file, and record its hashes before they do. */
const FILE_TOOLS: ReadonlySet<string> = new Set(['Write', 'Edit', 'MultiEdit']);

/**
 * Phase 4, one call: run the tool the model asked for, exactly once. A retry whose earlier attempt
 * finished returns the recorded result; one whose earlier attempt died mid-run does not run a
 * side-effecting call again but tells the model what happened, except a Write or Edit, whose file
 * says whether it happened. Read-only calls are not journaled: they simply run again. The call
 * heartbeats from here, every TOOL_HEARTBEAT_MS, for as long as it runs.
 */
export async function runTool(deps: RunToolDeps, input: RunToolInput): Promise<ToolRunResult> {
  const ctx = Context.current();
  // The latest progress a tool reported (Bash's output so far) is what each heartbeat carries.
  let details: unknown = { tool: input.toolUse.name };
  const started = Date.now();
  let lastBeat = started;
  // A background command may run for hours with nothing to report: after its first minute (an
  // attempt that adopts one after a worker restart has had it) it heartbeats every
  // BACKGROUND_HEARTBEAT_MS instead of every second, 360 billable actions an hour instead of 3,600.
  // The price is that TaskStop or the job's end reaches it within that time instead of a second.
  const slow = (now: number) =>
    input.background !== undefined && (ctx.info.attempt > 1 || now - started >= BACKGROUND_BRISK_MS);
  // Never slower than a third of the job's heartbeat timeout (a job may set it short).
  const slowMs = Math.min(BACKGROUND_HEARTBEAT_MS, (ctx.info.heartbeatTimeoutMs ?? 30_000) / 3);
  // Bash reports progress every second besides the timer's tick: one heartbeat a second is enough
  // (a tenth off, so that two one-second sources do not make it one in two).
  const beat = () => {
    const now = Date.now();
    if (now - lastBeat < Math.max(TOOL_HEARTBEAT_MS, slow(now) ? slowMs : 0) * 0.9) return;
    lastBeat = now;
    try {
      ctx.heartbeat(details);
    } catch {
      // A failing heartbeat must not stop the tool; cancellation arrives through the signal.
    }
  };
  // The first heartbeat comes after TOOL_HEARTBEAT_MS, not at the start: most calls (Read, Grep,
  // Edit) end well before it, and a heartbeat they sent would cost a server write (on Temporal
  // Cloud a billable action) and about 1.5 ms of the call, for nothing: liveness is the heartbeat
  // timeout's (30 s), and an abort reaches a call that outlives the first second with its heartbeats.
  const timer = setInterval(beat, TOOL_HEARTBEAT_MS);
  try {
    return await runToolOnce(deps, input, (progress) => {
      details = progress ?? details;
      beat();
    });
  } finally {
    clearInterval(timer);
  }
}

async function runToolOnce(
  deps: RunToolDeps,
  input: RunToolInput,
  heartbeat: (details?: unknown) => void,
): Promise<ToolRunResult> {
  const ctx = Context.current();
  const { sessionKey } = input;
  const journal = await ToolJournal.open(deps.dataDir, input.workspace, sessionKey);
  const recorded = await journal.read(input.toolUse.id);
  if (recorded?.status === 'completed') {
    // The content store may be another worker's; the journal carries the block itself.
    await deps.store.put(recorded.block);
    return recorded.result;
  }
  // Only a call that still has to run needs the fields the model call kept by reference.
  const toolUse = {
    ...input.toolUse,
    input: await withInputRefsResolved(deps.store, input.toolUse.input, input.toolUse.id),
  };

  let sandboxed: boolean | undefined;
  const { attempt } = ctx.info;
  const policy = jobSandboxOrDefault(input.sandbox);
  // A background command is journaled even when read-only: its output files and its group are
  // what the next attempt adopts, and what the model reads while it runs.
  const readOnly = !input.background && classifyToolUse(getToolDefinition(toolUse.name), toolUse.input).readOnly;
  const run = async (onStart?: StartedEntry) =>
    (deps.execute ?? executeTool)(toolUse.name, toolUse.input, {
      workspace: input.workspace,
      signal: ctx.cancellationSignal,
      heartbeat,
      env: deps.toolEnv,
      sandbox: { engine: deps.sandbox, policy },
      sessionKey,
      onCommandStart: (facts) => {
        sandboxed = facts.sandboxed;
      },
      ...(input.background ? { background: true } : {}),
      readState: input.readState ?? {},
      readDenyRules: input.readDenyRules ?? [],
      ...(input.gitGuard === true ? { gitGuard: true } : {}),
      dataHome: await workspaceHome(deps.dataDir, input.workspace),
      ...(onStart ? { beforeFileChange: (fileChange) => journal.write({ ...onStart, fileChange }) } : {}),
      ...(onStart?.command === null ? { command: commandHooks(journal, onStart, () => sandboxed ?? false) } : {}),
      registerGroup: (group) => registerGroup(group, onStart ? journal.entryFile(toolUse.id) : undefined),
    });
  const registry = new GroupRegistry(deps.dataDir);
  const registerGroup = async (group: CommandGroup, journalEntry: string | undefined) =>
    registry.add({
      ...(await thisHost()),
      ...group,
      workerPid: process.pid,
      ...(journalEntry ? { journalEntry } : {}),
      ...(ctx.info.workflowExecution
        ? {
            namespace: ctx.info.workflowNamespace,
            workflowId: ctx.info.workflowExecution.workflowId,
            runId: ctx.info.workflowExecution.runId,
          }
        : {}),
      activityId: ctx.info.activityId,
      attempt,
    });

  // A background command's output, copied where the model may Read it while it runs and after.
  const copier = input.background
    ? outputCopier(
        journal.commandFiles(toolUse.id),
        input.workspace,
        await workspaceHome(deps.dataDir, input.workspace),
        input.background.outputPath,
      )
    : undefined;
  try {
    return await finishCall(await runOrResume());
  } finally {
    await copier?.stop();
  }

  async function runOrResume(): Promise<ToolOutcome> {
    let outcome: ToolOutcome | undefined;
    if (readOnly) {
      outcome = await cancellable(ctx, run(), { readOnly: true });
    } else if (recorded?.status === 'started' && toolUse.name === 'Bash' && recorded.command) {
      // Undefined when the recorded command never started: then it runs below, as a fresh call.
      sandboxed = recorded.command.sandboxed;
      outcome = await cancellable(
        ctx,
        resumeCommand({
          entry: { ...recorded, command: recorded.command },
          journal,
          attempt,
          signal: ctx.cancellationSignal,
          heartbeat,
          heartbeatMs: TOOL_HEARTBEAT_MS,
          policy,
          registerGroup: (group) => registerGroup(group, journal.entryFile(toolUse.id)),
          releasePlaceholders: (paths) => deps.sandbox.releaseLeftovers(paths),
        }),
      );
      // A resumed command's long output is saved as a fresh call's is (executeTool does that there).
      if (outcome)
        outcome = await storeLargeResult(
          'Bash',
          outcome,
          input.workspace,
          await workspaceHome(deps.dataDir, input.workspace),
        );
    } else if (recorded?.status === 'started' && !(toolUse.name === 'Bash' && recorded.command === null)) {
      // (A Bash whose group was never recorded never started its command: it simply runs now.)
      outcome = await afterInterruption(recorded, toolUse.name, input.workspace);
    }
    if (outcome === undefined) {
      const started: StartedEntry = {
        status: 'started',
        toolUseId: toolUse.id,
        name: toolUse.name,
        startedAt: new Date().toISOString(),
        attempt,
        // null until the tool is about to replace its file: an entry left so says it never did.
        ...(FILE_TOOLS.has(toolUse.name) ? { fileChange: null } : {}),
        // null until the command's process group exists: an entry left so says it never started.
        ...(toolUse.name === 'Bash' ? { command: null } : {}),
      };
      await journal.write(started);
      outcome = await cancellable(ctx, run(started));
    }
    return outcome;
  }

  async function finishCall(outcome: ToolOutcome): Promise<ToolRunResult> {
    // The last of a background command's output is copied before its files are let go.
    await copier?.stop();
    const block: ToolResultBlock = {
      type: 'tool_result',
      tool_use_id: toolUse.id,
      // The API rejects empty text; an empty result still has to say so.
      content: outcome.blocks ?? (outcome.content === '' ? '(no output)' : outcome.content),
      ...(outcome.isError ? { is_error: true } : {}),
    };
    const result: ToolRunResult = {
      toolUseId: toolUse.id,
      isError: outcome.isError,
      ref: await deps.store.put(block),
      preview: outcome.content.length > PREVIEW_CHARS ? `${outcome.content.slice(0, PREVIEW_CHARS)}…` : outcome.content,
      chars: toolResultChars(block.content),
      ...(outcome.fileStates?.length ? { fileStates: outcome.fileStates } : {}),
      ...(sandboxed !== undefined ? { sandboxed } : {}),
    };
    if (!readOnly) {
      await refuseIfSuperseded(journal, toolUse.id, attempt);
      await journal.write({ status: 'completed', toolUseId: toolUse.id, name: toolUse.name, result, block });
      if (toolUse.name === 'Bash') await journal.removeCommandFiles(toolUse.id).catch(() => undefined);
    }
    if (deps.crashAfterJournal === toolUse.id) process.kill(process.pid, 'SIGKILL');
    return result;
  }
}

/** How often a background command's output is copied for the model, when it has grown. */
const BACKGROUND_COPY_MS = 2_000;

/**
 * Copy a running command's captured output (its first part and the rest kept for saving) to
 * `relative`, in the data folder and the workspace (`saveResult`), whenever it has grown; `stop`
 * makes a last copy and ends the copying.
 */
function outputCopier(files: CommandFiles, workspace: string, dataHome: string, relative: string) {
  let copied = -1;
  let running: Promise<void> = Promise.resolve();
  const copy = async () => {
    const parts = await Promise.all(
      [files.output, files.more].map((file) => readFile(file).catch(() => Buffer.alloc(0))),
    );
    const bytes = Buffer.concat(parts);
    if (bytes.length === copied) return;
    copied = bytes.length;
    await saveResult(workspace, dataHome, relative, bytes.toString('utf8')).catch(() => undefined);
  };
  const timer = setInterval(() => {
    running = running.then(copy);
  }, BACKGROUND_COPY_MS);
  let stopped: Promise<void> | undefined;
  return {
    stop: () => {
      stopped ??= (async () => {
        clearInterval(timer);
        await running;
        await copy();
      })();
      return stopped;
    },
  };
}

type StartedEntry = JournalEntry & { status: 'started' };

/**
 * What Bash gets for a journaled call: its command's files beside the entry, a record of its
 * process group written before the command starts, and whether this attempt still owns the call.
 */
function commandHooks(journal: ToolJournal, started: StartedEntry, sandboxed: () => boolean) {
  const attempt = started.attempt ?? 0;
  return {
    files: journal.commandFiles(started.toolUseId),
    record: async (group: CommandGroup) => {
      await refuseIfSuperseded(journal, started.toolUseId, attempt);
      const command: CommandRecord = {
        ...(await thisHost()),
        ...group,
        attempt,
        workerPid: process.pid,
        sandboxed: sandboxed(),
      };
      await journal.write({ ...started, command });
    },
    stillOwner: async () => {
      const entry = await journal.read(started.toolUseId);
      return entry?.status !== 'started' || (ownerAttempt(entry) ?? attempt) === attempt;
    },
  };
}

/**
 * A later attempt took this call over (this one was cut off from the server, and the server
 * retried it): this attempt's result must not be journaled over the owner's, and the server will
 * not take it either.
 */
async function refuseIfSuperseded(journal: ToolJournal, toolUseId: string, attempt: number): Promise<void> {
  const entry = await journal.read(toolUseId);
  const owner = entry?.status === 'started' ? ownerAttempt(entry) : undefined;
  if (entry?.status === 'completed' || (owner !== undefined && owner > attempt)) {
    throw ApplicationFailure.create({
      type: 'superseded',
      nonRetryable: true,
      message: `attempt ${attempt} of tool call ${toolUseId} was superseded by ${entry?.status === 'completed' ? 'a finished attempt' : `attempt ${owner}`}; its result is not used`,
    });
  }
}

/**
 * How long a cancelled read-only call may take to stop before it is given up on. A tool that does
 * not notice the signal (a Read blocked on a FIFO, a sort of a huge listing) would otherwise hold an
 * abort until it ends; a read-only one changes nothing, so leaving it to finish unheard is safe. A
 * side-effecting call is always waited for: the abort's answer must come after it stopped.
 */
export const ABANDON_READ_ONLY_AFTER_MS = 1_000;

/** A cancelled call rejects with the cancellation, whatever the tool threw on its way out. */
async function cancellable<T extends ToolOutcome | undefined>(
  ctx: Context,
  running: Promise<T>,
  options: { readOnly?: boolean } = {},
): Promise<T> {
  const signal = ctx.cancellationSignal;
  let abandon: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const abandoned = options.readOnly
    ? new Promise<never>((_, reject) => {
        onAbort = () => {
          abandon = setTimeout(() => reject(signal.reason ?? new Error('cancelled')), ABANDON_READ_ONLY_AFTER_MS);
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      })
    : undefined;
  // The tool's own outcome, if it ends after being given up on, is dropped, not left unhandled.
  running.catch(() => undefined);
  try {
    return await (abandoned ? Promise.race([running, abandoned]) : running);
  } catch (error) {
    if (signal.aborted) throw signal.reason ?? error;
    throw error;
  } finally {
    clearTimeout(abandon);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The answer for a side-effecting call an earlier attempt started and never finished, or
 * undefined when it is safe to simply run it now. A Write or Edit that recorded its file change
 * is judged by the file: it holds the intended content (done: the answer it would have given),
 * or still the old one (not done: run it now); a Write or Edit that never got as far as its
 * replacement is run now too. Anything else may have partly run: the model is told.
 */
async function afterInterruption(
  recorded: JournalEntry & { status: 'started' },
  name: string,
  workspace: string,
): Promise<ToolOutcome | undefined> {
  const started = recorded.unreadable
    ? `(its journal entry, written ${recorded.startedAt}, could not be read: ${recorded.unreadable})`
    : `(started ${recorded.startedAt})`;
  if (!recorded.unreadable && FILE_TOOLS.has(name) && recorded.fileChange !== undefined) {
    if (recorded.fileChange === null) return undefined;
    const change: FileChange = recorded.fileChange;
    // Killed between writing its temporary copy and renaming it: the copy is not the user's file.
    await removeAbandonedCopies(workspace, change.path, change.after);
    const now = await recoveredFile(workspace, change.path);
    if (now?.hash === change.after && now.stats) {
      return {
        content: change.content,
        isError: false,
        fileStates: [{ key: change.stateKey, state: stateOf(now.stats, change.partial) }],
      };
    }
    if (now !== undefined && now.hash === change.before) return undefined;
    const shown = path.relative(workspace, change.path) || change.path;
    return {
      isError: true,
      content:
        `The ${name} call was interrupted by a worker failure ${started} and was not run again: ${shown} now ` +
        'holds neither its content from before the call nor the content the call meant to write, so something ' +
        'else changed it meanwhile. Read it again before changing it.',
    };
  }
  return {
    isError: true,
    content:
      `The ${name} call was interrupted by a worker failure ${started} and may have partly run. ` +
      'It was not run again automatically: check its effects before retrying it.',
  };
}
