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
  '.claude',
  '.claude.json',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.bash_history',
  '.zsh_history',
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
 * Workspace paths kept read-only inside the sandbox, as Claude Code's sandbox does: each makes
 * something run later, outside the sandbox, when a person or a tool opens the repository (git
 * hooks and config, editor tasks, shell start-up files, agent settings, including this job's own
 * sandbox settings). `.durable-agent` holds the tool journal the worker trusts on retries. A path
 * the job lists in `filesystem.allowWrite` exactly is writable after all.
 */
export const WORKSPACE_PROTECTED_PATHS: readonly string[] = [
  '.git/hooks',
  '.git/config',
  '.gitconfig',
  '.gitmodules',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.ripgreprc',
  '.mcp.json',
  '.vscode',
  '.idea',
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.claude/commands',
  '.claude/agents',
  '.durable-agent',
];
