/**
 * What the sandbox costs per Bash call: the median of 50 `true` commands through the Bash tool,
 * sandboxed (bubblewrap) and unsandboxed (the same path with the job opted out), and the ratio.
 *
 *   npx ts-node bench/sandbox-cost.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { executeTool, type ToolContext } from '../src/activities/tools/index';
import { median } from './median';
import { sandboxContexts } from './sandbox-context';

const CALLS = 50;

async function timeCalls(ctx: ToolContext): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    const result = await executeTool('Bash', { command: 'true' }, ctx);
    times.push(performance.now() - started);
    if (result.isError) throw new Error(`Bash failed: ${result.content}`);
  }
  return times;
}

async function main(): Promise<void> {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-cost-')));
  const { context, version, bwrap } = await sandboxContexts(workspace);
  try {
    // One warm-up call each: the first pays for the probe and the temp folder.
    await executeTool('Bash', { command: 'true' }, context({ enabled: true, source: 'bench' }));
    await executeTool('Bash', { command: 'true' }, context({ enabled: false, source: 'bench' }));
    const unsandboxed = median(await timeCalls(context({ enabled: false, source: 'bench' })));
    const sandboxed = median(await timeCalls(context({ enabled: true, source: 'bench' })));
    console.log(`bubblewrap ${version} (${bwrap}), ${CALLS} calls of \`true\` each`);
    console.log(`unsandboxed: median ${unsandboxed.toFixed(1)} ms`);
    console.log(`sandboxed:   median ${sandboxed.toFixed(1)} ms`);
    console.log(
      `ratio:       ${(sandboxed / unsandboxed).toFixed(2)}x (+${(sandboxed - unsandboxed).toFixed(1)} ms per call)`,
    );
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
