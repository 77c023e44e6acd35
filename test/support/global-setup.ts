import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflows } from '../../src/worker/create-worker';

/**
 * Bundle the workflow code once per test run, from source, so every test (and every worker
 * process a test starts) runs the code under test, never a stale build.
 */
export default async function globalSetup(): Promise<void> {
  const { code } = await bundleWorkflows();
  const file = path.join(os.tmpdir(), `durable-agent-test-bundle-${process.pid}.js`);
  fs.writeFileSync(file, code);
  process.env.DURABLE_AGENT_WORKFLOW_BUNDLE = file;
}
