import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { ToolResultContentBlock } from '../../shared/messages';
import type { ToolOutcome } from '../../shared/tool-definition';
import { ensureDirDurably, writeFileDurably } from '../store/durable-file';
import { workspaceHome } from '../store/workspace-home';
import { formatFileSize } from './file-size';
import { safeSlice } from './numbered-lines';
import { ensureWorkspaceDataDir, TOOL_RESULTS_DIR } from './workspace-data';
import { resolveWorkspacePath } from './workspace-path';

/** A successful result longer than this is stored in the workspace and replaced by a preview. */
export const LARGE_RESULT_CHARS = 50_000;
/** About this much of a stored result is shown in its place. */
export const LARGE_RESULT_PREVIEW_CHARS = 2_000;

/**
 * Claude Code's answer to a huge tool result: keep the whole text in a file the model can page
 * through with Read or search with Grep, and put only a preview in the conversation (which every
 * later model call resends). The file name is a hash of the content, so a retried call writes the
 * same file. Failures and short results pass through unchanged; so does anything when the result
 * cannot be stored, cut to LARGE_RESULT_CHARS instead.
 *
 * The file is kept in the data directory's folder for the workspace (`dataHome`), and copied into
 * the workspace when it is writable: the model is told the workspace path, and Read and Grep fall
 * back to the data directory's copy when the workspace's is missing (a read-only workspace, a
 * `git clean -fdx`).
 */
export async function storeLargeResult(
  toolName: string,
  outcome: ToolOutcome,
  workspace: string,
  dataHome?: string,
): Promise<ToolOutcome> {
  if (outcome.fullOutput !== undefined)
    return persistOutput(toolName, outcome, outcome.fullOutput, workspace, dataHome);
  const text = outcome.content;
  if (outcome.isError || text.length <= LARGE_RESULT_CHARS) return outcome;
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const relative = `${TOOL_RESULTS_DIR}/${toolName}-${digest}.txt`;
  let notice: string;
  try {
    await saveResult(workspace, dataHome, relative, text);
    notice =
      `[Output too large to show in full: the full output (${text.length} characters) was saved to ${relative}. ` +
      'Only its beginning is shown above. Read that file with Read (use offset and limit to page through it), or search it with Grep (with that file as path).]';
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ...outcome,
      content: `${safeSlice(text, LARGE_RESULT_CHARS)}\n...\n[Output cut at ${LARGE_RESULT_CHARS} of ${text.length} characters: it could not be saved to ${TOOL_RESULTS_DIR} (${reason}).]`,
    };
  }
  return { ...outcome, content: `${preview(text)}\n...\n${notice}` };
}

/**
 * Bash output over its inline limit, in Claude Code's form: the whole output saved (under the same
 * content-hash name, so a retry writes the same file) and a `<persisted-output>` preview naming it.
 * When it cannot be saved, the outcome's own text (the output's start, with a notice) stands.
 */
async function persistOutput(
  toolName: string,
  outcome: ToolOutcome,
  full: string,
  workspace: string,
  dataHome: string | undefined,
): Promise<ToolOutcome> {
  const { fullOutput: _saved, ...rest } = outcome;
  const digest = createHash('sha256').update(full).digest('hex').slice(0, 16);
  const relative = `${TOOL_RESULTS_DIR}/${toolName}-${digest}.txt`;
  try {
    await saveResult(workspace, dataHome, relative, full);
  } catch {
    return rest;
  }
  return {
    ...rest,
    content:
      `<persisted-output>\nOutput too large (${formatFileSize(Buffer.byteLength(full))}). Full output saved to: ${relative}\n\n` +
      `Preview (first 2KB):\n${preview(full)}\n...\n</persisted-output>`,
  };
}

/**
 * A result that fits the 50,000-character rule but not the turn's budget for all its results
 * together (several large results in one turn): stored the same way, with its own notice.
 * `storeRoot` is the content store's folder, under which the workspace's data folder lies.
 */
export async function setAsideForTurnBudget<Content extends string | ToolResultContentBlock[]>(
  content: Content,
  workspace: string,
  storeRoot?: string,
): Promise<Content | string> {
  // An image or a document cannot be paged through with Read: it goes in as it is.
  if (typeof content !== 'string') return content;
  const text: string = content;
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const relative = `${TOOL_RESULTS_DIR}/result-${digest}.txt`;
  try {
    const dataHome = storeRoot === undefined ? undefined : await workspaceHome(storeRoot, workspace);
    await saveResult(workspace, dataHome, relative, text);
  } catch {
    // Not storable: the result goes in whole, as it would have without the budget.
    return text;
  }
  return (
    `${preview(text)}\n...\n[This turn's tool results were too large to show together: the full output of this ` +
    `call (${text.length} characters) was saved to ${relative}. Read that file with Read (offset and limit page ` +
    'through it), or search it with Grep.]'
  );
}

/** True when `relative` (a workspace-relative path from resolveWorkspacePath) is a stored result. */
export function isStoredResult(relative: string): boolean {
  return relative.startsWith(`${TOOL_RESULTS_DIR}/`);
}

/** The start of `text`, ending at a line break when one falls in the second half of the preview. */
function preview(text: string): string {
  const head = safeSlice(text, LARGE_RESULT_PREVIEW_CHARS);
  const lineEnd = head.lastIndexOf('\n');
  return lineEnd >= LARGE_RESULT_PREVIEW_CHARS / 2 ? head.slice(0, lineEnd) : head;
}

/**
 * Keep `text` at `relative` in the workspace's data folder and, where it can be written, in the
 * workspace. Succeeds when either copy was written: the data folder's is the one that lasts, the
 * workspace's is what Bash can see.
 */
export async function saveResult(workspace: string, dataHome: string | undefined, relative: string, text: string) {
  if (dataHome === undefined) return saveInWorkspace(workspace, relative, text);
  await saveFile(path.join(dataHome, relative), text);
  // The workspace copy is only a convenience: read-only, full or refused, nothing is lost.
  await saveInWorkspace(workspace, relative, text).catch(() => undefined);
}

/**
 * The file a Read or Grep of a stored result should open: the workspace's copy when it is there,
 * else the data folder's. Returns the data folder to run the tool against (it has the workspace's
 * layout, so the path the model wrote and every path shown stay the same), or undefined.
 */
export async function storedResultFallback(
  workspace: string,
  dataHome: string | undefined,
  input: string,
): Promise<{ root: string; relative: string } | undefined> {
  if (dataHome === undefined) return undefined;
  const target = await resolveWorkspacePath(workspace, input).catch(() => undefined);
  if (!target?.ok) return undefined;
  if (target.relative !== TOOL_RESULTS_DIR && !isStoredResult(target.relative)) return undefined;
  if (await lstat(target.absolute).catch(() => undefined)) return undefined;
  if (!(await lstat(path.join(dataHome, target.relative)).catch(() => undefined))) return undefined;
  return { root: dataHome, relative: target.relative };
}

/**
 * Write `text` to `relative` under the workspace atomically and durably, so a crash never leaves
 * a half-written result under the final name. The data folder gets a `.gitignore` of `*` so it
 * keeps itself out of git (and out of Glob and Grep). Refuses, like every tool, a path that a
 * symlink leads out of the workspace.
 */
async function saveInWorkspace(workspace: string, relative: string, text: string): Promise<void> {
  const target = await resolveWorkspacePath(workspace, relative);
  if (!target.ok) throw new Error(target.error);
  await ensureWorkspaceDataDir(workspace);
  await mkdir(path.dirname(target.absolute), { recursive: true });
  await saveFile(target.absolute, text);
}

/** Write a result file unless it already holds `text` (a retried call stores the same result). */
async function saveFile(file: string, text: string): Promise<void> {
  const existing = await readFile(file, 'utf8').catch(() => undefined);
  if (existing === text) return;
  await ensureDirDurably(path.dirname(file));
  await writeFileDurably(file, text);
}
