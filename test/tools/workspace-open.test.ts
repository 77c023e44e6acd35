/**
 * Opening workspace paths from a handle on the workspace (`openWorkspaceFile`): symlinks inside
 * are followed, symlinks out are refused, and a folder swapped for a symlink out while the tools
 * run never lets a read land outside.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runRead } from '../../src/activities/tools/read';
import { openWorkspaceFile } from '../../src/activities/tools/workspace-open';
import { makeWorkspace, tempDir } from '../support/harness';
import { toolContext } from './support/context';

async function readThrough(workspace: string, input: string): Promise<string> {
  const opened = await openWorkspaceFile(workspace, input);
  if (!opened.ok) return `refused ${opened.code}: ${opened.error}`;
  try {
    return (await opened.handle.readFile('utf8')) as string;
  } finally {
    await opened.handle.close();
  }
}

describe('openWorkspaceFile', () => {
  let outside: string;
  beforeEach(() => {
    outside = fs.realpathSync(tempDir('outside'));
    fs.writeFileSync(path.join(outside, 'id_rsa'), 'PRIVATE KEY\n');
  });

  test('a symlink inside the workspace is followed, one out of it is refused wherever it sits', async () => {
    const ws = makeWorkspace({ 'docs/real.md': 'inside\n' });
    fs.symlinkSync('docs/real.md', path.join(ws, 'CLAUDE.md'));
    fs.symlinkSync(path.join(ws, 'docs'), path.join(ws, 'abs-docs'));
    fs.symlinkSync(path.join(outside, 'id_rsa'), path.join(ws, 'key'));
    fs.symlinkSync('../'.repeat(20) + outside.slice(1), path.join(ws, 'docs', 'climb'));
    fs.symlinkSync(outside, path.join(ws, 'out'));
    fs.symlinkSync('/proc/self/environ', path.join(ws, 'env'));
    expect(await readThrough(ws, 'CLAUDE.md')).toBe('inside\n');
    expect(await readThrough(ws, 'abs-docs/real.md')).toBe('inside\n');
    const opened = await openWorkspaceFile(ws, 'CLAUDE.md');
    expect(opened).toMatchObject({ ok: true, absolute: path.join(ws, 'docs', 'real.md'), relative: 'docs/real.md' });
    if (opened.ok) await opened.handle.close();
    for (const input of ['key', 'docs/climb/id_rsa', 'out/id_rsa', 'env', path.join(ws, 'out', 'id_rsa')]) {
      const result = await readThrough(ws, input);
      expect(result).toMatch(/^refused outside: .*symbolic link .* outside the workspace/);
      expect(result).not.toContain('PRIVATE KEY');
    }
    expect(await readThrough(ws, '../x')).toMatch(/^refused outside: Path "..\/x" is outside the workspace/);
    expect(await readThrough(ws, outside + '/id_rsa')).toMatch(/^refused outside/);
  });

  test('loops, FIFOs, missing files and the workspace itself', async () => {
    const ws = makeWorkspace({ 'src/index.ts': '', 'src/Index.tsx': '' });
    fs.symlinkSync('b', path.join(ws, 'a'));
    fs.symlinkSync('a', path.join(ws, 'b'));
    expect(await readThrough(ws, 'a')).toMatch(/^refused ELOOP: .*too many levels of symbolic links/);
    spawnSync('mkfifo', [path.join(ws, 'pipe')]);
    const fifo = await openWorkspaceFile(ws, 'pipe');
    expect(fifo.ok).toBe(true);
    if (fifo.ok) {
      expect((await fifo.handle.stat()).isFIFO()).toBe(true);
      await fifo.handle.close();
    }
    const missing = await openWorkspaceFile(ws, 'src/indx.ts', { listSiblingsIfMissing: true });
    expect(missing).toMatchObject({
      ok: false,
      code: 'ENOENT',
      relative: 'src/indx.ts',
      error: 'File does not exist: src/indx.ts',
    });
    expect(!missing.ok && [...(missing.siblings ?? [])].sort()).toEqual(['Index.tsx', 'index.ts']);
    expect(await openWorkspaceFile(ws, 'nope/deeper/x.ts', { listSiblingsIfMissing: true })).toMatchObject({
      ok: false,
      code: 'ENOENT',
      relative: 'nope/deeper/x.ts',
      siblings: [],
    });
    expect(await openWorkspaceFile(ws, 'src/index.ts/x')).toMatchObject({ ok: false, code: 'ENOTDIR' });
    const root = await openWorkspaceFile(ws, '.');
    expect(root).toMatchObject({ ok: true, relative: '.' });
    if (root.ok) {
      expect((await root.handle.stat()).isDirectory()).toBe(true);
      await root.handle.close();
    }
  });

  test('a folder swapped for a symlink out while Read runs: no read ever lands outside', async () => {
    const ws = makeWorkspace({ 'd0/id_rsa': 'harmless\n' });
    fs.symlinkSync(outside, path.join(ws, 'swap'));
    // Another job's command swapping d0 and the link as fast as it can (renameat2 RENAME_EXCHANGE).
    const swapper = spawn(
      'python3',
      [
        '-c',
        [
          'import ctypes, os, sys',
          'libc = ctypes.CDLL(None, use_errno=True)',
          'a, b = sys.argv[1].encode(), sys.argv[2].encode()',
          'print("swapping", flush=True)',
          'while True:',
          '    if libc.renameat2(-100, a, -100, b, 2) != 0: sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))',
        ].join('\n'),
        path.join(ws, 'd0'),
        path.join(ws, 'swap'),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise((resolve) => swapper.stdout.once('data', resolve));
      const ctx = toolContext(ws);
      const outcomes = { inside: 0, refused: 0, leaked: 0 };
      const until = Date.now() + 3_000;
      while (Date.now() < until || outcomes.inside + outcomes.refused < 200) {
        const result = await runRead({ file_path: 'd0/id_rsa' }, ctx);
        if (result.content.includes('PRIVATE KEY')) outcomes.leaked++;
        else if (result.content.includes('harmless')) outcomes.inside++;
        else outcomes.refused++;
      }
      expect(swapper.exitCode).toBeNull();
      // Both states of the swap were seen, so the race ran; the key was never read.
      expect(outcomes.inside).toBeGreaterThan(0);
      expect(outcomes.refused).toBeGreaterThan(0);
      expect(outcomes.leaked).toBe(0);
    } finally {
      swapper.kill('SIGKILL');
    }
  });
});
