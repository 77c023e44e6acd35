#!/usr/bin/env node
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const root = path.join(__dirname, '..');
const entry = path.join(root, 'dist', 'src', 'client', 'cli.js');
if (!fs.existsSync(entry)) {
  process.stderr.write('durable-agent is not built yet: run `npm run setup` (or `npm run build`) in ' + root + '\n');
  process.exit(1);
}

/** In a checkout: is a source file newer than the build (a `git pull` or an edit since `npm run build`)? */
function sourcesNewerThanBuild() {
  const src = path.join(root, 'src');
  if (!fs.existsSync(src)) return false;
  const built = fs.statSync(entry).mtimeMs;
  const dirs = [src];
  while (dirs.length > 0) {
    const dir = dirs.pop();
    for (const item of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, item.name);
      if (item.isDirectory()) dirs.push(file);
      else if (item.name.endsWith('.ts') && fs.statSync(file).mtimeMs > built) return true;
    }
  }
  return false;
}

try {
  if (sourcesNewerThanBuild()) {
    process.stderr.write(
      'durable-agent: src/ has changed since the build in dist/ (a pull or an edit): this runs the old build; ' +
        'run `npm run build` in ' + root + ' to use the changes\n',
    );
  }
} catch {
  // The look is a courtesy: a folder it cannot read never stops the command.
}
require(entry).main(process.argv);
