/**
 * What every sandboxed command is denied without being told: the places credentials live, and the
 * files in a workspace that make something run later outside the sandbox.
 */

/**
 * Under the worker's home: hidden (unreadable) in every sandbox. Cloud and SSH keys, registry
 * tokens, password stores, and the shell start-up files people export API keys from. Claude
 * Code's own credentials are here too: a worker machine is often a developer's.
 */
export const HOME_CREDENTIAL_PLACES: readonly string[] = [
  '.ssh',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.config/op',
  '.config/rclone',
  '.config/containers/auth.json',
  '.config/git/credentials',
  '.docker',
  '.kube',
  '.gnupg',
  '.password-store',
  '.local/share/keyrings',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.pgpass',
  '.my.cnf',
  '.vault-token',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.terraform.d/credentials.tfrc.json',
  '.cache/huggingface/token',
  '.huggingface/token',
  '.m2/settings.xml',
  '.m2/settings-security.xml',
  '.gradle/gradle.properties',
  '.gem/credentials',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.s3cfg',
  '.boto',
  '.oci',
  '.kaggle',
  '.claude',
  '.claude.json',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  // What people typed, keys and passwords included.
  '.bash_history',
  '.zsh_history',
  '.python_history',
  '.psql_history',
  '.mysql_history',
  '.node_repl_history',
  '.sqlite_history',
];

/**
 * Top folders of the home shown whole for a `PATH` entry in them (a toolchain needs more than its
 * `bin`); for any other entry only the entry itself is shown (`~/.docker/bin`, not `~/.docker`).
 */
export const HOME_TOOLCHAIN_ROOTS: ReadonlySet<string> = new Set([
  '.cargo',
  '.rustup',
  '.pyenv',
  '.nvm',
  '.volta',
  '.bun',
  '.deno',
  '.sdkman',
  '.asdf',
  'go',
]);

/**
 * The worker's home folder is hidden as a whole (a list of secret files is never complete:
 * `~/.yarnrc`, `pip.conf`, `~/.terraformrc`, a fish config, `~/.bash_aliases`, ...). These places
 * in it are shown again, read-only, when they exist: toolchains and the caches builds read
 * (anything under them that `HOME_CREDENTIAL_PLACES` names stays hidden), and the user's git
 * config (identity, and filters such as git-lfs's). The folders of the command's `PATH` under the
 * home are shown too, and `allowRead` shows more (`"~"` the whole home, credentials still hidden).
 */
export const HOME_SHOWN_PLACES: readonly string[] = [
  '.gitconfig',
  '.config/git',
  ...HOME_TOOLCHAIN_ROOTS,
  '.local/bin',
  '.local/lib',
  '.m2/repository',
  '.gradle/caches',
  '.gradle/wrapper',
  '.cache',
  '.npm',
];

/**
 * Absolute paths hidden in every sandbox. `/run` holds the sockets of system services (the
 * Docker and containerd daemons, systemd, D-Bus): a read-only mount does not stop a connect(), and
 * a command running as root would be root to them. The rest are root's own files: a worker run
 * as root stays uid 0 in the sandbox (without capabilities, but the owner of them).
 */
export const SYSTEM_CREDENTIAL_PLACES: readonly string[] = [
  '/run',
  '/var/run',
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/shadow-',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssl/private',
  '/etc/letsencrypt',
  '/etc/kubernetes',
];

/** Host private keys in this folder are hidden too; the public halves and ssh_config are not. */
export const SSH_HOST_KEY_DIR = '/etc/ssh';
export const SSH_HOST_KEY = /^ssh_host_.*_key$/;

/**
 * Workspace entries kept read-only, whole, inside the sandbox, as Claude Code's sandbox does (the
 * list and why: `shared/protected-names.ts`). A missing one gets an empty placeholder folder for
 * the length of the command, so it cannot be created either. A path the job lists in
 * `filesystem.allowWrite` exactly is writable after all. The git directory has rules of its own
 * (`GIT_DIR_PROTECTED_ENTRIES`).
 */
export { WORKSPACE_PROTECTED_PATHS } from '../../shared/protected-names';

/** What a missing protected path is replaced with while a command runs. */
export type Placeholder = { type: 'directory' } | { type: 'file'; content: string };

/**
 * Inside a git directory the sandbox can write, what decides which programs git runs is
 * read-only: config, hooks, `commondir` (which sends git to another directory's config and hooks)
 * and `info` (whose attributes pick the diff and filter drivers); the rest (objects, refs, index, logs, locks) stays writable so that `git commit`
 * works. A missing entry is created for the length of the command with content that means the
 * same to git as its absence: `commondir` holding "." names the git directory itself, an empty
 * config is no config.
 */
export const GIT_DIR_PROTECTED_ENTRIES: ReadonlyArray<{ name: string; placeholder: Placeholder }> = [
  { name: 'config', placeholder: { type: 'file', content: '' } },
  { name: 'config.worktree', placeholder: { type: 'file', content: '' } },
  { name: 'commondir', placeholder: { type: 'file', content: '.\n' } },
  { name: 'hooks', placeholder: { type: 'directory' } },
  { name: 'info', placeholder: { type: 'directory' } },
];
