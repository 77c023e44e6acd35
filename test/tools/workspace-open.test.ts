/**
 * Opening workspace paths from a handle on the workspace (`openWorkspaceFile`): symlinks inside
 * are followed, symlinks out are refused, and a folder swapped for a symlink out while the tools
 * run never lets a read land outside.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runEdit } from '../../src/activities/tools/edit';
import { runGlob } from '../../src/activities/tools/glob';
import { runGrep } from '../../src/activities/tools/grep';
import { runRead } from '../../src/activities/tools/read';
import { runWrite } from '../../src/activities/tools/write';
import { fileStateKey } from '../../src/shared/file-state';
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

  test('a workspace given through a symlinked folder: links and paths in that spelling stay inside', async () => {
    const ws = makeWorkspace({ 'build/out/app.js': 'built\n' });
    const alias = path.join(tempDir('alias'), 'ws');
    fs.symlinkSync(ws, alias);
    // As `ln -s $PWD/build/out latest` run from the alias, and a link out of the workspace and back in.
    fs.symlinkSync(path.join(alias, 'build', 'out'), path.join(ws, 'latest'));
    fs.symlinkSync(`../${path.basename(ws)}/build/out/app.js`, path.join(ws, 'roundabout.js'));
    expect(await readThrough(alias, 'latest/app.js')).toBe('built\n');
    expect(await readThrough(alias, path.join(alias, 'build', 'out', 'app.js'))).toBe('built\n');
    // Resolved as written, it ends inside: it is walked from the workspace's handle, never through its parent.
    expect(await readThrough(ws, 'roundabout.js')).toBe('built\n');
  });

  test('Grep and Glob: a denied path is refused whether or not it exists; globs written from the root still match', async () => {
    const ws = makeWorkspace({ 'secret/key.txt': 'k\n', 'src/sub/deep.ts': 'needle\n', 'src/top.ts': 'needle\n' });
    const ctx = toolContext(ws, { readDenyRules: ['Read(./secret/**)', 'Read(./gone/**)'] });
    for (const where of ['secret/inner', 'gone/inner']) {
      const grep = await runGrep({ pattern: 'k', path: where }, ctx);
      const glob = await runGlob({ pattern: '*', path: where }, ctx);
      for (const result of [grep, glob]) {
        expect(result.isError).toBe(true);
        expect(result.content).not.toMatch(/does not exist/);
        expect(result.content).toMatch(/Read\(\.\/(secret|gone)\/\*\*\)/);
      }
    }
    const found = await runGrep({ pattern: 'needle', path: 'src', glob: 'src/sub/*.ts' }, toolContext(ws));
    expect(found.content).toBe('Found 1 file\nsrc/sub/deep.ts');
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
    const swapper = await swapping(ws, 'd0', outside);
    try {
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

  test('a folder swapped for a symlink out while Grep and Glob run: nothing outside is searched or listed', async () => {
    const ws = makeWorkspace({ 'd0/notes.txt': 'harmless\n' });
    const swapper = await swapping(ws, 'd0', outside);
    try {
      const ctx = toolContext(ws);
      const seen = { inside: 0, refused: 0, leaked: 0 };
      const until = Date.now() + 3_000;
      while (Date.now() < until || seen.inside + seen.refused < 100) {
        for (const result of [
          await runGrep({ pattern: 'PRIVATE|harmless', path: 'd0', output_mode: 'content' }, ctx),
          await runGlob({ pattern: '*', path: 'd0' }, ctx),
        ]) {
          if (/PRIVATE KEY|id_rsa/.test(result.content)) seen.leaked++;
          else if (/harmless|notes\.txt/.test(result.content)) seen.inside++;
          else seen.refused++;
        }
      }
      expect(swapper.exitCode).toBeNull();
      expect(seen.inside).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
      expect(seen.leaked).toBe(0);
    } finally {
      swapper.kill('SIGKILL');
    }
  });

  test('a folder swapped for a symlink out while Write and Edit run: nothing is written outside', async () => {
    const ws = makeWorkspace({ 'd0/config': 'v=0\n' });
    fs.writeFileSync(path.join(outside, 'config'), 'v=0\n');
    const before = fs.statSync(path.join(outside, 'config'));
    const swapper = await swapping(ws, 'd0', outside);
    try {
      // Edit's read-before-write check passes for any file of this size: only where it writes is tested.
      const ctx = toolContext(ws, {
        readState: { [fileStateKey(ws, 'd0/config')]: { mtimeMs: Number.MAX_SAFE_INTEGER, size: 4, partial: false } },
      });
      const written = { write: 0, edit: 0, refused: 0 };
      let value = 0;
      const until = Date.now() + 3_000;
      for (let i = 0; Date.now() < until || written.write + written.edit < 50; i++) {
        const write = await runWrite({ file_path: `d0/authorized_keys-${i}`, content: 'ssh-ed25519 attacker\n' }, ctx);
        if (write.isError) written.refused++;
        else written.write++;
        const edit = await runEdit(
          { file_path: 'd0/config', old_string: `v=${value}`, new_string: `v=${1 - value}` },
          ctx,
        );
        if (edit.isError) written.refused++;
        else {
          written.edit++;
          value = 1 - value;
        }
      }
      expect(swapper.exitCode).toBeNull();
      expect(written.write).toBeGreaterThan(0);
      expect(written.edit).toBeGreaterThan(0);
      expect(written.refused).toBeGreaterThan(0);
      expect(fs.readdirSync(outside).sort()).toEqual(['config', 'id_rsa']);
      expect(fs.readFileSync(path.join(outside, 'config'), 'utf8')).toBe('v=0\n');
      expect(fs.statSync(path.join(outside, 'config')).mtimeMs).toBe(before.mtimeMs);
    } finally {
      swapper.kill('SIGKILL');
    }
  });
});

/**
 * Another job's command swapping `folder` of `ws` with a symlink to `outside` as fast as it can
 * (renameat2 RENAME_EXCHANGE), from when this resolves until it is killed.
 */
async function swapping(ws: string, folder: string, outside: string): Promise<ChildProcess> {
  fs.symlinkSync(outside, path.join(ws, 'swap'));
  const swapper = spawn(
    'python3',
    [
      '-c',
      [
        'import ctypes, os, sys',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'a, b = sys.argv[1].encode(), sys.argv[2].encode()',
        'print("swapping", flush=True)',
        'import time',
        'while True:',
        '    if libc.renameat2(-100, a, -100, b, 2) != 0: sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))',
        // A short pause each swap: still thousands a second, without taking a whole core from the
        // test files running beside this one.
        '    time.sleep(0.0002)',
      ].join('\n'),
      path.join(ws, folder),
      path.join(ws, 'swap'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    swapper.stdout.once('data', () => resolve());
    swapper.once('error', reject);
    swapper.once('exit', (code) => reject(new Error(`the swapper exited (${code}) before it began`)));
  });
  return swapper;
}
