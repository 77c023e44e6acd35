'use strict';
/**
 * The compiled JavaScript of the project's TypeScript files, kept in a cache keyed by each file's
 * path and content, the compiler's version and tsconfig.json: `ts-register.js` runs TypeScript
 * from it, and `global-setup.ts` fills it once per test run. An edited file has another key, so
 * nothing stale is ever run.
 *
 * The folder is `DURABLE_AGENT_TS_CACHE` (the test run's temp folder sets one), else
 * `node_modules/.cache/durable-agent-ts`. Entries are written to a temp name and renamed, so
 * processes filling it side by side never read half a file.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const cacheDir = process.env.DURABLE_AGENT_TS_CACHE || path.join(root, 'node_modules', '.cache', 'durable-agent-ts');
const salt = [
  fs.readFileSync(path.join(root, 'node_modules', 'typescript', 'package.json'), 'utf8'),
  fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'),
  // This file's own options (below) shape the output too.
  fs.readFileSync(__filename, 'utf8'),
].join('\0');

let compilerOptions;
function compile(source, filename) {
  const ts = require('typescript');
  if (!compilerOptions) {
    const tsconfig = path.join(root, 'tsconfig.json');
    const { config, error } = ts.readConfigFile(tsconfig, ts.sys.readFile);
    if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
    compilerOptions = ts.parseJsonConfigFileContent(config, ts.sys, root).options;
    // Maps go inline, so a stack trace names the TypeScript line (`ts-register.js` turns them on).
    Object.assign(compilerOptions, {
      sourceMap: false,
      inlineSourceMap: true,
      inlineSources: false,
      declaration: false,
    });
  }
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename, reportDiagnostics: false });
  return outputText;
}

/** The JavaScript for one TypeScript file, from the cache or compiled into it. */
function transpile(filename, source = fs.readFileSync(filename, 'utf8')) {
  const key = crypto.createHash('sha256').update(salt).update('\0').update(filename).update('\0').update(source);
  const file = path.join(cacheDir, `${key.digest('hex')}.js`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    // not cached yet
  }
  const output = compile(source, filename);
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    fs.writeFileSync(temp, output);
    fs.renameSync(temp, file);
  } catch {
    // A cache that cannot be written costs time, not correctness.
  }
  return output;
}

module.exports = { transpile, cacheDir };
