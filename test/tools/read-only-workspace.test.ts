import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ToolRunResult } from '../../src/shared/activity-types';
import type { ToolResultBlock } from '../../src/shared/messages';
import { makeWorkspace, tempDir } from '../support/harness';
import { TS_NODE_ARGS } from '../support/ts-run';

const root = path.join(__dirname, '..', '..');
const hasBwrap = spawnSync('bwrap', ['--dev-bind', '/', '/', 'true']).status === 0;

/**
 * Run tool calls in a process that sees `workspace` through a read-only bind mount, as a worker on
 * a read-only volume would (as root, chmod would not stop a write; a mount does).
 */
function runReadOnly(workspace: string, storeDir: string, calls: Array<{ id: string; name: string; input: unknown }>) {
  const child = spawnSync(
    'bwrap',
    [
      '--dev-bind',
      '/',
      '/',
      '--ro-bind',
      workspace,
      workspace,
      process.execPath,
      ...TS_NODE_ARGS,
      path.join(root, 'test', 'support', 'run-tool-cli.ts'),
      JSON.stringify(calls.map((call) => ({ ...call, storeDir, workspace }))),
    ],
    { cwd: root, encoding: 'utf8', timeout: 120_000 },
  );
  if (child.status !== 0) throw new Error(`the tool calls failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as Array<{ result: ToolRunResult; block: ToolResultBlock }>;
}

// bwrap is part of the worker's sandbox and installed wherever the suite runs; without it the
// read-only mount cannot be made, and this says so rather than pass.
(hasBwrap ? describe : describe.skip)('a read-only workspace', () => {
  test('Read, Grep and Glob work, a large result is saved in the data directory and can be read back', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i + 1} ${'x'.repeat(60)}`);
    const workspace = makeWorkspace({ 'src/a.txt': 'hello\n', 'big.txt': `${lines.join('\n')}\n` });
    const storeDir = tempDir('ro-store');
    const [read, grep, glob, big, write] = runReadOnly(workspace, storeDir, [
      { id: 'toolu_read', name: 'Read', input: { file_path: 'src/a.txt' } },
      { id: 'toolu_grep', name: 'Grep', input: { pattern: 'hello' } },
      { id: 'toolu_glob', name: 'Glob', input: { pattern: '**/*.txt' } },
      {
        id: 'toolu_big',
        name: 'Grep',
        input: { pattern: 'line', path: 'big.txt', output_mode: 'content', head_limit: 0 },
      },
      { id: 'toolu_write', name: 'Write', input: { file_path: 'new.txt', content: 'x\n' } },
    ]);
    expect(read?.block.content).toContain('hello');
    expect(read?.result.isError).toBe(false);
    expect(grep?.block.content).toContain('src/a.txt');
    expect(glob?.block.content).toContain('big.txt');
    expect(glob?.block.content).toContain('src/a.txt');
    // A write is refused as the file system refuses it: an answer, not a failed activity.
    expect(write?.result.isError).toBe(true);
    expect(write?.block.content).toContain('read-only file system');

    const saved = /saved to (\.durable-agent\/tool-results\/[^ ]+\.txt)/.exec(String(big?.block.content ?? ''))?.[1];
    expect(saved).toBeDefined();
    expect(fs.existsSync(path.join(workspace, '.durable-agent'))).toBe(false);
    const [page] = runReadOnly(workspace, storeDir, [
      { id: 'toolu_page', name: 'Read', input: { file_path: saved, offset: 1000, limit: 1 } },
    ]);
    expect(page?.result.isError).toBe(false);
    expect(page?.block.content).toContain('line 1000 x');
  }, 180_000);
});
