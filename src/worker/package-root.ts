import fs from 'node:fs';
import path from 'node:path';

/** The durable-agent package's own folder, whether running from `src/` (ts) or `dist/` (js). */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      const { name } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string };
      if (name === 'durable-agent') return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`durable-agent's package.json not found above ${from}`);
  }
}
