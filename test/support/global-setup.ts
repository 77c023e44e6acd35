import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflows } from '../../src/worker/create-worker';
import { RUN_TMP_VAR } from './run-tmp';
import { TS_REGISTER } from './ts-run';

/**
 * Give the test run a temp folder of its own and bundle the workflow code into it.
 *
 * `TMPDIR` points into the run's folder, so every temp file of the run lands there: the tests'
 * workspaces and stores, and what the workers, servers and tools they start make under
 * `os.tmpdir()`. `global-teardown.ts` stops what a failed test left running and removes the
 * folder, so a run leaves nothing in /tmp, and two runs side by side never share one.
 *
 * The bundle is built once per run, from source, so every test (and every worker process a test
 * starts) runs the code under test, never a stale build. So is the cache of compiled TypeScript
 * that the processes tests start run from (`ts-register.js`): filled here once, so none of them
 * loads the compiler.
 */
export default async function globalSetup(): Promise<void> {
  const runTmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-test-run-')));
  // Others may pass through (not list it), as through /tmp: the cluster test runs PostgreSQL as
  // its own user, in a folder of its own under this one. Each folder in it keeps its own mode.
  fs.chmodSync(runTmp, 0o711);
  process.env[RUN_TMP_VAR] = runTmp;
  process.env.TMPDIR = runTmp;
  process.env.DURABLE_AGENT_TS_CACHE = path.join(runTmp, 'ts-cache');
  process.env.DURABLE_AGENT_TS_REGISTER = TS_REGISTER;
  warmTypeScriptCache();
  const { code } = await bundleWorkflows();
  const file = path.join(runTmp, 'workflow-bundle.js');
  fs.writeFileSync(file, code);
  process.env.DURABLE_AGENT_WORKFLOW_BUNDLE = file;
}

/** Compile every source file the started processes may load into `ts-cache.js`'s cache. */
function warmTypeScriptCache(): void {
  // Loaded after DURABLE_AGENT_TS_CACHE is set: the module reads it once.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { transpile } = require('./ts-cache') as { transpile(filename: string): string };
  const root = path.join(__dirname, '..', '..');
  for (const dir of ['src', 'test/support']) {
    for (const entry of fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
        transpile(path.join(entry.parentPath, entry.name));
    }
  }
}
