import { SandboxEngine } from '../src/activities/sandbox/engine';
import type { ToolContext } from '../src/activities/tools/index';
import type { JobSandbox } from '../src/shared/sandbox';

/**
 * The worker's sandbox for a bench, or a thrown "no sandbox here", and tool contexts in
 * `workspace` under a job's sandbox policy (enabled: bubblewrap; disabled: as `--no-sandbox`).
 */
export async function sandboxContexts(
  workspace: string,
): Promise<{ context: (policy: JobSandbox) => ToolContext; version: string; bwrap: string }> {
  const engine = new SandboxEngine();
  const availability = await engine.availability();
  if (!availability.available) throw new Error(`no sandbox here: ${availability.reason}`);
  const context = (policy: JobSandbox): ToolContext => ({
    workspace,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    readState: {},
    readDenyRules: [],
    sessionKey: 'bench',
    sandbox: { engine, policy },
  });
  return { context, version: availability.version, bwrap: availability.bwrap };
}
