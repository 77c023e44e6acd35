import fs from 'node:fs';
import { RUN_TMP_VAR } from './global-setup';

/** Remove the run's temp folder (`global-setup.ts`) and everything the run made in it. */
export default async function globalTeardown(): Promise<void> {
  const runTmp = process.env[RUN_TMP_VAR];
  if (!runTmp) return;
  try {
    fs.rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    // A test failure says more than this; the run's verdict does not hang on it.
    console.warn(`could not remove the test run's temp folder ${runTmp}: ${(err as Error).message}`);
  }
}
