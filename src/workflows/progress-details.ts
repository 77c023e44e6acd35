import { setCurrentDetails } from '@temporalio/workflow';
import type { ToolUseBlock } from '../shared/messages';
import type { SessionPhase } from '../shared/session';

/**
 * What a person looking at a job in the Temporal UI reads: a summary on each activity
 * (`turn 3 · Read src/auth/login.ts`) and the workflow's current details (phase and turn). Neither
 * is a command, so neither changes what a history replays.
 */

/** Longest summary kept: the UI shows it on one line. */
const SUMMARY_CHARS = 120;

function clip(text: string, max = SUMMARY_CHARS): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** A path as the model wrote it, shown relative to the workspace when it lies inside. */
function shownPath(file: unknown, workspace: string): string {
  if (typeof file !== 'string') return '';
  const root = workspace.endsWith('/') ? workspace : `${workspace}/`;
  return file.startsWith(root) ? file.slice(root.length) : file;
}

/** One tool call in a few words: the tool and what it acts on (a path, a pattern, a command). */
export function toolCallLabel(toolUse: Pick<ToolUseBlock, 'name' | 'input'>, workspace: string): string {
  const input = (toolUse.input ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const where = input.path !== undefined ? ` in ${shownPath(input.path, workspace)}` : '';
  let subject: string;
  switch (toolUse.name) {
    case 'Read':
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
      subject = shownPath(input.file_path, workspace);
      break;
    case 'Glob':
    case 'Grep':
      subject = `${text(input.pattern)}${where}`;
      break;
    case 'Bash':
      subject = text(input.command);
      break;
    case 'TodoWrite':
      subject = Array.isArray(input.todos) ? `${input.todos.length} todos` : '';
      break;
    default:
      subject = '';
  }
  return clip(subject ? `${toolUse.name} ${subject}` : toolUse.name);
}

/** An activity's summary: the turn it belongs to, then what it does. */
export function activitySummary(turn: number, what: string): string {
  return clip(`turn ${turn} · ${what}`);
}

const PHASE_WORDS: Record<SessionPhase, string> = {
  starting: 'starting',
  calling_model: 'calling the model',
  running_tools: 'running tools',
  waiting_for_approval: 'waiting for approval',
  running_hooks: 'running hooks',
  compacting: 'compacting the conversation',
  waiting_for_credentials: 'waiting for a worker with model credentials',
  sleeping: 'sleeping until its wake-up',
  waiting_for_background: 'waiting for a background command to end',
  waiting_for_input: 'answered; waiting for the next message',
  finished: 'finished',
};

/** What the job is doing now, as the UI's "current details" of the workflow show it. */
export interface ProgressView {
  phase: SessionPhase;
  turn: number;
  maxTurns: number | undefined;
  model: string;
  /** Calls parked for approval: tool name and clipped input. */
  waitingFor: Array<{ toolName: string; input: string }>;
  /** The Terminal's reason, once there is one. */
  outcome?: string;
  /** While sleeping: when the wake-up fires, and why it was set. */
  sleepingUntil?: string;
}

/** Markdown for the workflow's current details: phase and turn, and the parked calls if any. */
export function progressDetails(view: ProgressView): string {
  if (view.phase === 'finished' && view.outcome) return `**${view.outcome}** after ${view.turn} turns`;
  const limit = view.maxTurns !== undefined ? ` of ${view.maxTurns}` : '';
  const doing =
    view.phase === 'calling_model'
      ? `calling ${view.model}`
      : view.phase === 'sleeping' && view.sleepingUntil
        ? `sleeping until ${view.sleepingUntil}`
        : PHASE_WORDS[view.phase];
  const lines = [`**turn ${view.turn}${limit}** · ${doing}`];
  for (const call of view.waitingFor) lines.push(`- ${clip(`${call.toolName} ${call.input}`)}`);
  return lines.join('\n');
}

/** Publish `view` as the workflow's current details (read by the UI through the metadata query). */
export function showProgress(view: ProgressView): void {
  setCurrentDetails(progressDetails(view));
}
