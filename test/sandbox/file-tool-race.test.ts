/**
 * Issue 25, finding 2, as it was reproduced: a sandboxed Bash command (another job's, on the same
 * workspace) swaps a folder with a link out of the workspace, in a loop, with
 * renameat2(RENAME_EXCHANGE), while the file tools run. On main 14 of 80 Reads, 1 of 10 Greps and
 * a Write landed outside. Every tool now opens from a handle on the workspace: zero wins.
 */
import fs from 'node:fs';
import path from 'node:path';
import { executeTool } from '../../src/activities/tools/index';
import { fileStateKey } from '../../src/shared/file-state';
import { fixtureEngine, makeSandboxFixture, sandboxContext, type SandboxFixture } from './support';

let fixture: SandboxFixture;
afterEach(() => fixture.cleanup());

const SWAPPER = [
  'import ctypes, os, sys, time',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'end = time.time() + float(sys.argv[1])',
  'while time.time() < end:',
  '    if libc.renameat2(-100, b"d0", -100, b"swap", 2) != 0: sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))',
  '    time.sleep(0.0002)',
].join('\n');

test('a sandboxed Bash swapping a folder for a link out wins no race against Read, Grep, Glob, Write and Edit', async () => {
  fixture = makeSandboxFixture();
  const ws = fixture.workspace;
  fs.mkdirSync(path.join(ws, 'd0'));
  fs.writeFileSync(path.join(ws, 'd0', 'id_rsa'), 'harmless\n');
  fs.writeFileSync(path.join(ws, 'd0', 'config'), 'v=0\n');
  fs.writeFileSync(path.join(fixture.outside, 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\n');
  fs.writeFileSync(path.join(fixture.outside, 'config'), 'v=0\n');
  fs.symlinkSync(fixture.outside, path.join(ws, 'swap'));
  fs.writeFileSync(path.join(ws, 'swapper.py'), SWAPPER);

  const engine = fixtureEngine(fixture);
  const swapping = executeTool(
    'Bash',
    { command: 'python3 swapper.py 6', timeout: 60_000 },
    sandboxContext(fixture, engine),
  );
  // Under way once d0 has been a link at least once.
  const began = Date.now();
  while (!fs.lstatSync(path.join(ws, 'd0'), { throwIfNoEntry: false })?.isSymbolicLink()) {
    if (Date.now() - began > 20_000) throw new Error(`the swapper did not start: ${(await swapping).content}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }

  // The file tools run outside the sandbox, in the worker, as they do in a job.
  const ctx = sandboxContext(fixture, engine, undefined, {
    readState: { [fileStateKey(ws, 'd0/config')]: { mtimeMs: Number.MAX_SAFE_INTEGER, size: 4, partial: false } },
  });
  const seen = { inside: 0, refused: 0, leaked: 0 };
  let value = 0;
  const until = Date.now() + 3_000;
  for (let i = 0; Date.now() < until; i++) {
    const results = [
      await executeTool('Read', { file_path: 'd0/id_rsa' }, ctx),
      await executeTool('Grep', { pattern: 'PRIVATE|harmless', path: 'd0', output_mode: 'content' }, ctx),
      await executeTool('Glob', { pattern: '*', path: 'd0' }, ctx),
      await executeTool('Write', { file_path: `d0/authorized_keys-${i}`, content: 'ssh-ed25519 attacker\n' }, ctx),
    ];
    const edit = await executeTool(
      'Edit',
      { file_path: 'd0/config', old_string: `v=${value}`, new_string: `v=${1 - value}` },
      ctx,
    );
    if (!edit.isError) value = 1 - value;
    for (const result of [...results, edit]) {
      if (/PRIVATE KEY/.test(result.content)) seen.leaked++;
      else if (result.isError) seen.refused++;
      else seen.inside++;
    }
  }
  const swapper = await swapping;
  // The swapper ran the whole time, and both states of the swap were met.
  expect(swapper.isError).toBeFalsy();
  expect(seen.inside).toBeGreaterThan(0);
  expect(seen.refused).toBeGreaterThan(0);
  expect(seen.leaked).toBe(0);
  expect(fs.readdirSync(fixture.outside).sort()).toEqual(['config', 'id_rsa']);
  expect(fs.readFileSync(path.join(fixture.outside, 'config'), 'utf8')).toBe('v=0\n');
}, 60_000);

test('a search walking below the folder it opened meets a swapped sub-folder only inside the sandbox', async () => {
  // rg lists `top`, sees `d0` as a folder, and opens `top/d0` by name a moment later: a link
  // swapped in between takes the walk to the link's target. With rg in the job's sandbox, a link
  // into the worker's home finds it hidden.
  fixture = makeSandboxFixture();
  const ws = fixture.workspace;
  const key = path.join(fixture.home, '.ssh', 'id_rsa');
  fs.mkdirSync(path.dirname(key), { recursive: true });
  fs.writeFileSync(key, '-----BEGIN OPENSSH PRIVATE KEY-----\n');
  fs.mkdirSync(path.join(ws, 'top', 'd0'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'top', 'd0', 'id_rsa'), 'harmless\n');
  fs.symlinkSync(path.dirname(key), path.join(ws, 'top', 'swap'));
  fs.writeFileSync(
    path.join(ws, 'swapper.py'),
    SWAPPER.replace(/b"d0"/, 'b"top/d0"').replace(/b"swap"/, 'b"top/swap"'),
  );

  const engine = fixtureEngine(fixture);
  const swapping = executeTool(
    'Bash',
    { command: 'python3 swapper.py 6', timeout: 60_000 },
    sandboxContext(fixture, engine),
  );
  const began = Date.now();
  while (!fs.lstatSync(path.join(ws, 'top', 'd0'), { throwIfNoEntry: false })?.isSymbolicLink()) {
    if (Date.now() - began > 20_000) throw new Error(`the swapper did not start: ${(await swapping).content}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const ctx = sandboxContext(fixture, engine);
  const seen = { harmless: 0, leaked: 0, runs: 0 };
  const until = Date.now() + 3_000;
  while (Date.now() < until) {
    const results = await Promise.all([
      executeTool('Grep', { pattern: 'PRIVATE|harmless', path: 'top', output_mode: 'content' }, ctx),
      executeTool('Grep', { pattern: 'PRIVATE|harmless', output_mode: 'content' }, ctx),
      executeTool('Glob', { pattern: '**/id_rsa', path: 'top' }, ctx),
    ]);
    for (const result of results) {
      seen.runs++;
      if (/PRIVATE KEY/.test(result.content)) seen.leaked++;
      else if (/harmless|id_rsa/.test(result.content)) seen.harmless++;
    }
  }
  expect((await swapping).isError).toBeFalsy();
  expect(seen.harmless).toBeGreaterThan(0);
  expect(seen.leaked).toBe(0);
}, 60_000);
