import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflows, prebuiltBundlePath } from './create-worker';

/** `npm run build` step: bundle the workflow code once so workers start without webpack. */
async function main(): Promise<void> {
  const { code } = await bundleWorkflows();
  const target = prebuiltBundlePath();
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(`${target}.tmp`, code);
  fs.renameSync(`${target}.tmp`, target);
  console.error(`workflow bundle: ${path.relative(process.cwd(), target)} (${Math.round(code.length / 1024)} KiB)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
