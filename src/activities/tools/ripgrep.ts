import { constants } from 'node:fs';
import { access, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import type { JobSandbox } from '../../shared/sandbox';
import { spawnPiped, type PipedProcess } from '../../worker/spawner';
import type { PreparedCommand, SandboxEngine } from '../sandbox/engine';
import type { ToolContext } from './tool-context';
import { abortError } from './abort-error';
import { WORKSPACE_DATA_DIR } from './workspace-data';

/** Shown when `rg` is not on PATH. */
export const RIPGREP_MISSING =
  'ripgrep (rg) is not installed or not on PATH, so this tool cannot run. Install it (for example `apt-get install ripgrep` or `brew install ripgrep`) and try again.';

/** Directories of version-control metadata: never useful search results. */
export const VCS_DIRECTORY_GLOBS = ['!.git', '!.svn', '!.hg', '!.bzr', '!.jj'].map((glob) => `--glob=${glob}`);

/**
 * Every directory Glob and Grep skip. Passed after the caller's globs: with rg the last matching
 * glob wins, so no pattern can bring them back. A file inside one named as the search path is still
 * searched (rg always searches paths it is given).
 */
export const EXCLUDED_DIRECTORY_GLOBS = [...VCS_DIRECTORY_GLOBS, `--glob=!${WORKSPACE_DATA_DIR}`];

/**
 * ripgrep applies .gitignore files only inside a git repository unless told otherwise; Claude Code
 * honours them in any folder, and so do we.
 */
export const IGNORE_FLAGS = ['--no-require-git'];

/** Found executables by PATH value, so a changed PATH is searched afresh. */
const found = new Map<string, string>();

/** Absolute path of the `rg` executable on PATH, or undefined. A found path is cached. */
export async function findRipgrep(searchPath = process.env.PATH ?? ''): Promise<string | undefined> {
  const cached = found.get(searchPath);
  if (cached) return cached;
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'rg');
    try {
      await access(candidate, constants.X_OK);
      found.set(searchPath, candidate);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

export interface RipgrepRun {
  stdout: string;
  stderr: string;
  /** 0: matches, 1: none, 2: error (there may still be output). */
  exitCode: number | null;
  /** True when stdout passed `maxOutputBytes` and rg was stopped early. */
  truncated: boolean;
}

export interface RipgrepOptions {
  cwd: string;
  signal: AbortSignal;
  maxOutputBytes?: number;
  /** Run rg inside the job's Bash sandbox (see {@link RipgrepSandbox}); `cwd` is then ignored. */
  sandbox?: RipgrepSandbox;
}

/**
 * Where a folder search runs in the job's sandbox. rg walks the folders below the one the tool
 * opened by name: a folder swapped for a link in the meantime would take it outside the workspace.
 * In the sandbox, the opened folder itself is bound by its descriptor (no name looked up again),
 * and whatever a link below it leads to is only what the job's Bash could read anyway: the home,
 * the worker's data and the places Read deny rules name are hidden there.
 */
export interface RipgrepSandbox {
  engine: SandboxEngine;
  policy: JobSandbox;
  sessionKey: string;
  /** The workspace's real path. */
  workspace: string;
  /** The folder the tool opened: rg searches it as its working folder ('.'). */
  folder: FileHandle;
  readDenyRules: readonly string[];
}

/** Where the searched folder is bound inside the sandbox (the job's private /tmp). */
const SEARCH_MOUNT = '/tmp/.durable-agent-search';

/**
 * Run ripgrep with `args` and collect its output. Rejects with an AbortError (after rg is gone)
 * when the signal fires. `--no-config` keeps a user's RIPGREP_CONFIG_PATH (which may name
 * `--pre` commands) out of a read-only tool. rg starts from the worker's command helper
 * (`spawnPiped`), so its start does not copy the worker's memory; a helper that dies under it takes
 * rg along, and a search changes nothing, so it runs again from the worker.
 */
export async function runRipgrep(rg: string, args: string[], options: RipgrepOptions): Promise<RipgrepRun> {
  if (options.signal.aborted) throw abortError();
  const maxStdoutBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const prepared = options.sandbox ? await inSandbox(rg, args, options.sandbox) : undefined;
  if (options.signal.aborted) {
    await prepared?.release?.();
    throw abortError();
  }
  const start = (fromHelper: boolean) =>
    prepared
      ? spawnPiped(prepared.file, prepared.args, prepared.cwd, prepared.env, {
          maxStdoutBytes,
          passFd: (options.sandbox as RipgrepSandbox).folder.fd,
        })
      : spawnPiped(rg, ['--no-config', ...args], options.cwd, process.env, { fromHelper, maxStdoutBytes });
  try {
    const run = await collect(start(true), options, () => collect(start(false), options));
    // bubblewrap that could not set the sandbox up exits 1, which rg uses for "no match": a
    // search that never ran must not read as one that found nothing.
    if (prepared && /^bwrap: /m.test(run.stderr)) return { ...run, exitCode: 2, stdout: '' };
    return run;
  } finally {
    await prepared?.release?.();
  }
}

/**
 * rg's command line inside the sandbox, or undefined when the job's Bash is not sandboxed or this
 * worker has no sandbox: the search then runs as before, confined by the tool's own checks.
 */
async function inSandbox(
  rg: string,
  args: string[],
  where: RipgrepSandbox,
): Promise<(PreparedCommand & { cwd: string }) | undefined> {
  if (!where.policy.enabled) return undefined;
  const prepared = await where.engine.prepare({
    command: `exec ${[rg, '--no-config', ...args].map(shellQuote).join(' ')}`,
    workspace: where.workspace,
    sessionKey: where.sessionKey,
    policy: where.policy,
    readDenyRules: where.readDenyRules,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    // The folder's descriptor is the process's fd 3 (see spawnPiped's passFd).
    boundFolder: { fd: 3, dest: SEARCH_MOUNT },
  });
  if ('refused' in prepared) return undefined;
  if (!prepared.sandboxed) {
    await prepared.release?.();
    return undefined;
  }
  return { ...prepared, cwd: where.workspace };
}

/** `text` as one word for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

function collect(child: PipedProcess, options: RipgrepOptions, again?: () => Promise<RipgrepRun>): Promise<RipgrepRun> {
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  return new Promise<RipgrepRun>((resolve, reject) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let truncated = false;
    let aborted = false;
    let settled = false;

    const onAbort = () => {
      aborted = true;
      child.kill();
    };
    options.signal.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      if (truncated) return;
      stdout.push(chunk);
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxBytes) {
        truncated = true;
        child.kill();
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderrBytes < 64 * 1024) stderr.push(chunk);
      stderrBytes += chunk.length;
    });
    const settle = () => {
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
    };
    child.on('error', (error: Error) => {
      if (settled) return;
      settle();
      child.kill();
      reject(aborted ? abortError() : error);
    });
    child.on('lost', () => {
      if (settled) return;
      if (truncated) return finishWith(null);
      settle();
      if (aborted || options.signal.aborted) reject(abortError());
      else if (again) again().then(resolve, reject);
      else reject(new Error('ripgrep stopped with the process that ran it'));
    });
    // Stopped at the cap, its output is all there is, however it ended.
    const finishWith = (code: number | null) => {
      settle();
      if (aborted) return reject(abortError());
      let text = Buffer.concat(stdout).toString('utf8');
      // A cut may split the last line; drop the partial line.
      if (truncated) text = text.slice(0, Math.max(0, text.lastIndexOf('\n') + 1));
      resolve({ stdout: text, stderr: Buffer.concat(stderr).toString('utf8'), exitCode: code, truncated });
    };
    child.on('close', (code: number | null) => {
      if (!settled) finishWith(code);
    });
  });
}

/** Output kept of one run when the caller names no cap. */
const DEFAULT_MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

/** Split rg's line output, dropping the final empty line and the './' prefix rg adds for path '.'. */
export function outputLines(stdout: string): string[] {
  const lines = stdout.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.startsWith('./') ? line.slice(2) : line));
}

/** The job's sandbox for a search of the opened `folder`, when its Bash has one. */
export function searchSandbox(
  ctx: Pick<ToolContext, 'sandbox' | 'sessionKey' | 'workspace' | 'readDenyRules'>,
  folder: FileHandle,
): RipgrepSandbox | undefined {
  if (!ctx.sandbox?.policy.enabled) return undefined;
  return {
    engine: ctx.sandbox.engine,
    policy: ctx.sandbox.policy,
    sessionKey: ctx.sessionKey ?? 'one-shot',
    workspace: ctx.workspace,
    folder,
    readDenyRules: ctx.readDenyRules,
  };
}
