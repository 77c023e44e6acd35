import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../worker/package-root';

const run = promisify(execFile);

/**
 * Settings that win over a repository's own `.git/config` and that keep commands which look
 * read-only from running a program the repository names: `core.fsmonitor` runs on every `git
 * status`, `log.showSignature` makes `git log` run `gpg.program`.
 */
const GIT_OVERRIDES: ReadonlyArray<readonly [string, string]> = [
  ['core.fsmonitor', 'false'],
  ['log.showSignature', 'false'],
];

/**
 * Environment variables that pass `GIT_OVERRIDES` to every git a command starts (submodules
 * included). `GIT_CONFIG_COUNT`/`_KEY_n`/`_VALUE_n` rank above every config file. `extra` adds
 * more pairs (the filter drivers of one repository).
 */
export function gitOverrideEnv(extra: ReadonlyArray<readonly [string, string]> = []): Record<string, string> {
  const pairs = [...GIT_OVERRIDES, ...extra];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(pairs.length), GIT_TERMINAL_PROMPT: '0' };
  pairs.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

let shimDir: string | null | undefined;

/**
 * The folder of the `git` shim (see `git-shim/git`) that goes first on the PATH of the agent's
 * commands; undefined when the package was installed without it.
 */
export function gitShimDir(): string | undefined {
  if (shimDir === undefined) {
    const dir = path.join(packageRoot(), 'src', 'activities', 'sandbox', 'git-shim');
    shimDir = fs.existsSync(path.join(dir, 'git')) ? dir : null;
  }
  return shimDir ?? undefined;
}

/** `env` with the git shim first on PATH and the git overrides set. */
export function withGitHardening(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const shim = gitShimDir();
  const pathValue = [shim, env.PATH].filter(Boolean).join(path.delimiter);
  return { ...env, ...gitOverrideEnv(), ...(pathValue ? { PATH: pathValue } : {}) };
}

const DRIVER_KEY = /^filter\.(.+)\.(clean|smudge|process)$/;

/**
 * `-c` pairs that switch off the filter drivers this repository's own config defines (the
 * user's global ones, git-lfs for example, are left alone). A clean filter runs on `git status`;
 * an empty command is git's "no filter". Reading config runs nothing.
 */
export async function repositoryFilterOverrides(
  workspace: string,
  env: NodeJS.ProcessEnv,
): Promise<Array<[string, string]>> {
  try {
    const { stdout } = await run('git', ['config', '--list', '--name-only', '--show-scope', '--includes'], {
      cwd: workspace,
      env,
      timeout: 10_000,
    });
    const overrides: Array<[string, string]> = [];
    for (const line of stdout.split('\n')) {
      const [scope, key] = line.split('\t');
      if ((scope === 'local' || scope === 'worktree') && key && DRIVER_KEY.test(key)) overrides.push([key, '']);
    }
    return overrides;
  } catch {
    return [];
  }
}
