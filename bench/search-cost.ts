/**
 * What running the search tools' ripgrep in the job's sandbox costs per call. Grep (content mode)
 * and Glob over a folder of 200 files, in a job whose Bash is sandboxed (rg now runs in bubblewrap,
 * the folder bound by its descriptor) and in one opted out (rg runs in the worker, as every job's
 * did before), alternating call by call; the medians and their ratio.
 *
 *   npx ts-node -T bench/search-cost.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { executeTool, type ToolContext } from '../src/activities/tools/index';
import { median } from './median';
import { sandboxContexts } from './sandbox-context';

const CALLS = 40;
const FILES = 200;

async function main(): Promise<void> {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'search-cost-')));
  for (let i = 0; i < FILES; i++) {
    const file = path.join(workspace, 'src', `m${i % 10}`, `f${i}.ts`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `export const value${i} = ${i};\n// TODO: item ${i}\n`.repeat(20));
  }
  const { context, version } = await sandboxContexts(workspace);
  const ways = {
    worker: context({ enabled: false, source: 'bench' }),
    sandbox: context({ enabled: true, source: 'bench' }),
  };
  const calls = {
    Grep: { pattern: 'TODO: item 1[0-9]', path: 'src', output_mode: 'content' },
    Glob: { pattern: '**/*.ts', path: 'src' },
  } as const;
  try {
    console.log(
      `search-cost: ${CALLS} calls per tool and way, alternating; ${FILES} files; bubblewrap ${version}; node ${process.version}, ${os.cpus().length} cpus`,
    );
    for (const [tool, input] of Object.entries(calls)) {
      const times: Record<keyof typeof ways, number[]> = { worker: [], sandbox: [] };
      // Warm-up: the probe, the temp folder, the page cache.
      for (const ctx of Object.values(ways)) await executeTool(tool, input, ctx);
      for (let i = 0; i < CALLS; i++) {
        for (const [way, ctx] of Object.entries(ways) as Array<[keyof typeof ways, ToolContext]>) {
          const started = performance.now();
          const result = await executeTool(tool, input, ctx);
          times[way].push(performance.now() - started);
          if (result.isError) throw new Error(`${tool} failed: ${result.content}`);
        }
      }
      const worker = median(times.worker);
      const sandbox = median(times.sandbox);
      console.log(
        `${tool}: rg in the worker ${worker.toFixed(1)} ms, in the sandbox ${sandbox.toFixed(1)} ms: ratio ${(sandbox / worker).toFixed(2)} (+${(sandbox - worker).toFixed(1)} ms)`,
      );
    }
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
