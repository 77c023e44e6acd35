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
 * The environment Bash gets when the caller gives none: this process's, minus credentials. The
 * model can print anything it can read, and whatever it prints lands in the workflow history.
 */
export function defaultBashEnv(source: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && !isSecretEnvName(name)) env[name] = value;
  }
  return env;
}
