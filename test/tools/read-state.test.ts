import { rm, stat, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { fileStateKey } from '../../src/shared/file-state';
import { fileStateKeysFor } from '../../src/shared/tools/index';
import { ToolSession, tempWorkspace } from './support/session';

describe('fileStateKeysFor', () => {
  it('names the file_path of Write, Edit and MultiEdit, normalised like fileStateKey', () => {
    expect(fileStateKeysFor('Write', { file_path: 'a/../b.txt', content: '' }, '/ws')).toEqual(['/ws/b.txt']);
    expect(fileStateKeysFor('Edit', { file_path: '/abs/x.ts' }, '/ws/')).toEqual(['/abs/x.ts']);
    expect(fileStateKeysFor('MultiEdit', { file_path: './src//y.ts', edits: [] }, '/ws')).toEqual(['/ws/src/y.ts']);
    expect(fileStateKeysFor('Edit', { file_path: 'x' }, '/ws')).toEqual([fileStateKey('/ws', 'x')]);
  });

  it('needs nothing for the other tools', () => {
    for (const name of ['Read', 'Glob', 'Grep', 'Bash', 'Unknown']) {
      expect(fileStateKeysFor(name, { file_path: 'a', pattern: '*', command: 'ls' }, '/ws')).toEqual([]);
    }
  });

  it.each([
    undefined,
    null,
    'a.txt',
    42,
    [],
    [{ file_path: 'a' }],
    {},
    { file_path: 3 },
    { file_path: '' },
    { file_path: 'a\0b' },
    { file_path: 'x'.repeat(5000) },
    { file_path: { nested: 'a' } },
  ])('tolerates the malformed input %#', (input) => {
    expect(fileStateKeysFor('Write', input, '/ws')).toEqual([]);
  });

  it('tolerates an input whose getter throws', () => {
    const hostile = Object.defineProperty({}, 'file_path', {
      get() {
        throw new Error('boom');
      },
    });
    expect(fileStateKeysFor('Edit', hostile, '/ws')).toEqual([]);
  });
});

describe('Read records the file state', () => {
  let workspace: string;
  let session: ToolSession;
  beforeEach(async () => {
    workspace = await tempWorkspace('tools-state-');
    session = new ToolSession(workspace);
    await writeFile(path.join(workspace, 'ten.txt'), Array.from({ length: 10 }, (_, i) => `${i + 1}`).join('\n'));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  it('keys by the path as given, normalised, with mtime, size and whether it was partial', async () => {
    const info = await stat(path.join(workspace, 'ten.txt'));
    const state = (partial: boolean) => [
      { key: `${workspace}/ten.txt`, state: { mtimeMs: info.mtimeMs, size: info.size, partial } },
    ];
    expect((await session.run('Read', { file_path: 'ten.txt' })).fileStates).toEqual(state(false));
    expect((await session.run('Read', { file_path: './x/../ten.txt', limit: 10 })).fileStates).toEqual(state(false));
    expect((await session.run('Read', { file_path: `${workspace}/ten.txt`, limit: 9 })).fileStates).toEqual(
      state(true),
    );
    expect((await session.run('Read', { file_path: 'ten.txt', offset: 2 })).fileStates).toEqual(state(true));
    expect((await session.run('Read', { file_path: 'ten.txt', offset: 1 })).fileStates).toEqual(state(false));
    expect((await session.run('Read', { file_path: 'ten.txt', offset: 50 })).fileStates).toEqual(state(true));
  });

  it('records nothing when the read fails', async () => {
    await writeFile(path.join(workspace, 'bin.dat'), Buffer.from([1, 0, 2]));
    for (const file_path of ['missing.txt', 'bin.dat', '.', '../outside.txt']) {
      const outcome = await session.run('Read', { file_path });
      expect([file_path, outcome.isError, outcome.fileStates]).toEqual([file_path, true, undefined]);
    }
    expect(session.readState).toEqual({});
  });

  it('does not count a Read through another spelling that is not the same normalised path', async () => {
    // Keys are lexical (the workflow cannot resolve symlinks), so a symlink is a different file.
    await symlink(path.join(workspace, 'ten.txt'), path.join(workspace, 'alias.txt'));
    await session.run('Read', { file_path: 'alias.txt' });
    expect((await session.run('Edit', { file_path: 'ten.txt', old_string: '10', new_string: 'ten' })).content).toBe(
      '<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>',
    );
  });
});
