import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../worker/package-root';
import { runCommand } from '../../worker/spawner';

/**
 * Settings that win over a repository's own `.git/config` and that keep commands which look
 * read-only from running a program the repository names: `core.fsmonitor` runs on every `git
 * status`; the signature programs run on `git log --show-signature`, `--pretty=%G?` (and `%GG`,
 * `%GS`, `%GK`) and `verify-commit`. `gpg.program` and `gpg.openpgp.program` set the same program,
 * and the last one git reads wins, which is this command-line scope; an empty value makes git
 * fail, `false` makes every signature count as unverified. The price: the agent's git cannot sign
 * commits either ("gpg failed to sign the data" where signing is required).
 */
const GIT_OVERRIDES: ReadonlyArray<readonly [string, string]> = [
  ['core.fsmonitor', 'false'],
  ['log.showSignature', 'false'],
  ['gpg.program', 'false'],
  ['gpg.openpgp.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.ssh.defaultKeyCommand', 'false'],
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

/**
 * Set by the worker for a command that runs outside the sandbox: the shim then also empties the
 * repository's own filter drivers for the read-only subcommands (see `git-shim/git`).
 */
export const NO_REPOSITORY_FILTERS_ENV = 'DURABLE_AGENT_GIT_NO_REPO_FILTERS';

/**
 * Set by the worker when the job has a Bash deny or ask rule: the shim then refuses to run git in
 * a repository whose own config names a program for git to run (see `git-shim/git`).
 */
export const GIT_GUARD_ENV = 'DURABLE_AGENT_GIT_GUARD';

/**
 * `env` with the git shim first on PATH and the git overrides set. `shim` is the shim's folder
 * (default `gitShimDir()`); `sandboxed` says whether the command runs in the sandbox.
 */
export function withGitHardening(
  env: NodeJS.ProcessEnv,
  options: { sandboxed: boolean; shim?: string | undefined },
): NodeJS.ProcessEnv {
  const shim = 'shim' in options ? options.shim : gitShimDir();
  const pathValue = [shim, env.PATH].filter(Boolean).join(path.delimiter);
  const hardened: NodeJS.ProcessEnv = { ...env, ...gitOverrideEnv(), ...(pathValue ? { PATH: pathValue } : {}) };
  if (options.sandboxed) delete hardened[NO_REPOSITORY_FILTERS_ENV];
  else hardened[NO_REPOSITORY_FILTERS_ENV] = '1';
  return hardened;
}

const DRIVER_KEY = /^filter\.(.+)\.(clean|smudge|process|required)$/;

/**
 * `-c` pairs that switch off the filter drivers this repository's own config defines (the
 * user's global ones, git-lfs for example, are left alone). A clean filter runs on `git status`;
 * an empty command is git's "no filter", and `required=false` keeps git from failing for the
 * want of one (git-crypt marks its filter required). Reading config runs nothing. Fails (throws)
 * when the config cannot be read: the caller must then not run git at all, rather than run it
 * with the repository's filters.
 */
export async function repositoryFilterOverrides(
  workspace: string,
  env: NodeJS.ProcessEnv,
): Promise<Array<[string, string]>> {
  return filterOverridesFor(await repositoryConfigNames(workspace, env));
}

/**
 * The names the repository's own config sets (local and worktree scopes, includes followed), as
 * git prints them (section and name in lower case). Reading config runs nothing; throws when the
 * config cannot be read.
 */
export async function repositoryConfigNames(workspace: string, env: NodeJS.ProcessEnv): Promise<Set<string>> {
  const { stdout } = await runCommand('git', ['config', '--list', '--name-only', '--show-scope', '--includes'], {
    cwd: workspace,
    env,
    timeout: 10_000,
  });
  const names = new Set<string>();
  for (const line of stdout.split('\n')) {
    const [scope, key] = line.split('\t');
    if ((scope === 'local' || scope === 'worktree') && key !== undefined) names.add(key);
  }
  return names;
}

/** `-c` pairs that switch off the filter drivers among `names` (see {@link repositoryFilterOverrides}). */
export function filterOverridesFor(names: ReadonlySet<string>): Array<[string, string]> {
  const drivers = new Set<string>();
  for (const key of names) {
    const driver = DRIVER_KEY.exec(key)?.[1];
    if (driver !== undefined) drivers.add(driver);
  }
  return [...drivers].flatMap((driver): Array<[string, string]> => [
    [`filter.${driver}.clean`, ''],
    [`filter.${driver}.smudge`, ''],
    [`filter.${driver}.process`, ''],
    [`filter.${driver}.required`, 'false'],
  ]);
}
