/** Names that are always withheld from commands the model runs. */
const SECRET_NAMES = new Set([
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'TEMPORAL_API_KEY',
  'PGPASSWORD',
  'MYSQL_PWD',
]);
/** Suffixes that mark a credential by convention (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, ...). */
const SECRET_SUFFIX = /(_API_KEY|_TOKEN|_SECRET|_SECRET_KEY|_SECRET_ACCESS_KEY|_PASSWORD)$/i;

/** True when an environment variable name looks like a credential. */
export function isSecretEnvName(name: string): boolean {
  return SECRET_NAMES.has(name) || SECRET_SUFFIX.test(name);
}

/**
 * The worker's variables a command the model runs may see: what a shell needs to find programs
 * and speak the user's language, nothing that configures the worker itself (its Temporal target,
 * its data folder, the paths of its TLS key) or a tool's credentials.
 */
const TOOL_ENV_NAMES = new Set(['PATH', 'HOME', 'LANG', 'LANGUAGE', 'TERM', 'USER', 'LOGNAME', 'SHELL', 'TZ']);

/**
 * The environment the model's commands get, built from an allowlist of `source`'s variables
 * (`PATH`, `HOME`, `LANG`, `LC_*`, `TERM`, `USER`, `LOGNAME`, `SHELL`, `TZ`) plus the names in
 * `extraNames` (the worker's `DURABLE_AGENT_TOOL_ENV`). A name that looks like a credential is
 * withheld even when listed: whatever a command can read, the model can print into the history.
 * `TMPDIR` is set per call, to the job's private temp folder.
 */
export function buildToolEnv(
  source: NodeJS.ProcessEnv = process.env,
  extraNames: readonly string[] = [],
): NodeJS.ProcessEnv {
  const extra = new Set(extraNames);
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || isSecretEnvName(name)) continue;
    if (TOOL_ENV_NAMES.has(name) || name.startsWith('LC_') || extra.has(name)) env[name] = value;
  }
  return env;
}

/** Names listed in `DURABLE_AGENT_TOOL_ENV` (commas or spaces between them). */
export function toolEnvNames(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.DURABLE_AGENT_TOOL_ENV ?? '').split(/[\s,]+/).filter(Boolean);
}

/**
 * The environment Bash gets when the caller gives none: `buildToolEnv` of this process's
 * environment and its `DURABLE_AGENT_TOOL_ENV`.
 */
export function defaultBashEnv(source: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return buildToolEnv(source, toolEnvNames(source));
}
