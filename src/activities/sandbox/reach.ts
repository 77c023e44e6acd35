import path from 'node:path';

/**
 * What a command run without the sandbox can read on this worker, in one paragraph for the
 * worker's start notice. Plain: the operator decides from it whether opting jobs out is safe.
 */
export function unsandboxedReach(facts: {
  homeDir: string;
  /** DURABLE_AGENT_HOME: transcripts and journals of every job, the embedded server's database. */
  dataHome: string;
  /** TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY, when set. */
  tlsPaths: string[];
  /** Secret-looking names in the environment this worker was started with (not their values). */
  secretsInStartEnv: string[];
  pid: number;
}): string {
  const home = (relative: string) => path.join(facts.homeDir, relative);
  const places = [
    `${home('.ssh')}, ${home('.aws')}, ${home('.config/gcloud')}, ${home('.netrc')}, ${home('.docker')}, ${home('.kube')} and the rest of ${facts.homeDir}`,
    `${facts.dataHome} (every job's transcript and tool journal, temporal.db)`,
    ...facts.tlsPaths.map((file) => `${file} (Temporal TLS)`),
  ];
  const env =
    facts.secretsInStartEnv.length > 0
      ? ` This worker was started with ${facts.secretsInStartEnv.join(', ')} in its environment: /proc/${facts.pid}/environ shows them to any command of the same user, whatever Bash's own environment holds. Hand them over a pipe instead (the embedded worker does), or keep jobs sandboxed.`
      : '';
  return `An unsandboxed command runs as this worker's user and can read ${places.join('; ')}; and this worker's memory (/proc/${facts.pid}/mem) where the kernel lets the same user read it.${env}`;
}
