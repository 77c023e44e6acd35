import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import * as path from 'node:path';
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
}

/**
 * Run ripgrep with `args` and collect its output. Rejects with an AbortError (after rg is gone)
 * when the signal fires. `--no-config` keeps a user's RIPGREP_CONFIG_PATH (which may name
 * `--pre` commands) out of a read-only tool.
 */
export async function runRipgrep(rg: string, args: string[], options: RipgrepOptions): Promise<RipgrepRun> {
  const maxBytes = options.maxOutputBytes ?? 32 * 1024 * 1024;
  if (options.signal.aborted) throw abortError();
  return new Promise<RipgrepRun>((resolve, reject) => {
    const child = spawn(rg, ['--no-config', ...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let truncated = false;
    let aborted = false;
    let settled = false;

    const kill = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const onAbort = () => {
      aborted = true;
      kill();
    };
    options.signal.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      if (truncated) return;
      stdout.push(chunk);
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxBytes) {
        truncated = true;
        kill();
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
    child.on('error', (error) => {
      if (settled) return;
      settle();
      kill();
      reject(aborted ? abortError() : error);
    });
    child.on('close', (code) => {
      if (settled) return;
      settle();
      if (aborted) return reject(abortError());
      let text = Buffer.concat(stdout).toString('utf8');
      // A cut may split the last line; drop the partial line.
      if (truncated) text = text.slice(0, Math.max(0, text.lastIndexOf('\n') + 1));
      resolve({ stdout: text, stderr: Buffer.concat(stderr).toString('utf8'), exitCode: code, truncated });
    });
  });
}

/** Split rg's line output, dropping the final empty line and the './' prefix rg adds for path '.'. */
export function outputLines(stdout: string): string[] {
  const lines = stdout.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.startsWith('./') ? line.slice(2) : line));
}
