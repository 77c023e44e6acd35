import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';

let workspace: string;
let ctx: ToolContext;
const run = (name: string, input: unknown) => executeTool(name, input, ctx);
const contents = (file: string) => readFile(path.join(workspace, file), 'utf8');

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-write-')));
  ctx = { workspace, signal: new AbortController().signal, heartbeat: () => undefined };
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('Write', () => {
  it('creates parent folders and reports created, then updated', async () => {
    expect(await run('Write', { file_path: 'deep/er/new.txt', content: 'a\nb\n' })).toEqual({
      isError: false,
      content: 'File created successfully at: deep/er/new.txt (2 lines).',
    });
    expect(await contents('deep/er/new.txt')).toBe('a\nb\n');
    expect(await run('Write', { file_path: path.join(workspace, 'deep/er/new.txt'), content: 'c' })).toEqual({
      isError: false,
      content: 'The file deep/er/new.txt has been updated (1 line).',
    });
    expect(await contents('deep/er/new.txt')).toBe('c');
  });

  it('refuses to write over a directory or through a file', async () => {
    await writeFile(path.join(workspace, 'plain'), 'x');
    expect((await run('Write', { file_path: '.', content: 'x' })).isError).toBe(true);
    const through = await run('Write', { file_path: 'plain/child.txt', content: 'x' });
    expect(through.isError).toBe(true);
    expect(through.content).toContain('plain');
  });
});

describe('Edit', () => {
  beforeEach(async () => {
    await writeFile(path.join(workspace, 'code.ts'), 'const a = 1;\nconst b = 1;\nconst c = 2;\n');
  });

  it('replaces a unique string', async () => {
    expect(await run('Edit', { file_path: 'code.ts', old_string: 'const c = 2;', new_string: 'const c = 3;' })).toEqual(
      {
        isError: false,
        content: 'The file code.ts has been updated. Made 1 replacement.',
      },
    );
    expect(await contents('code.ts')).toBe('const a = 1;\nconst b = 1;\nconst c = 3;\n');
  });

  it('refuses an ambiguous string unless replace_all, then reports the count', async () => {
    const ambiguous = await run('Edit', { file_path: 'code.ts', old_string: '= 1', new_string: '= 9' });
    expect(ambiguous.isError).toBe(true);
    expect(ambiguous.content).toContain('Found 2 matches');
    expect(await contents('code.ts')).toBe('const a = 1;\nconst b = 1;\nconst c = 2;\n');
    expect(
      await run('Edit', { file_path: 'code.ts', old_string: '= 1', new_string: '= 9', replace_all: true }),
    ).toEqual({
      isError: false,
      content: 'The file code.ts has been updated. Made 2 replacements.',
    });
    expect(await contents('code.ts')).toBe('const a = 9;\nconst b = 9;\nconst c = 2;\n');
  });

  it('reports a missing string, identical strings and a missing file', async () => {
    const missing = await run('Edit', { file_path: 'code.ts', old_string: 'const d', new_string: 'x' });
    expect(missing).toEqual({
      isError: true,
      content: expect.stringContaining('String to replace not found in code.ts'),
    });
    expect(await run('Edit', { file_path: 'code.ts', old_string: 'a', new_string: 'a' })).toEqual({
      isError: true,
      content: 'No changes to make: old_string and new_string are exactly the same.',
    });
    expect(await run('Edit', { file_path: 'gone.ts', old_string: 'a', new_string: 'b' })).toEqual({
      isError: true,
      content: 'File does not exist: gone.ts. Use Write to create a new file.',
    });
    expect((await run('Edit', { file_path: 'code.ts', old_string: '', new_string: 'b' })).isError).toBe(true);
  });

  it('inserts new_string literally, without $-patterns', async () => {
    await run('Edit', { file_path: 'code.ts', old_string: 'const c = 2;', new_string: "const c = '$&$1$$';" });
    expect(await contents('code.ts')).toContain("const c = '$&$1$$';");
  });

  it('keeps CRLF line endings', async () => {
    await writeFile(path.join(workspace, 'win.txt'), 'one\r\ntwo\r\nthree\r\n');
    const result = await run('Edit', { file_path: 'win.txt', old_string: 'one\ntwo', new_string: 'uno\ndos\ndos-bis' });
    expect(result.isError).toBe(false);
    expect(await contents('win.txt')).toBe('uno\r\ndos\r\ndos-bis\r\nthree\r\n');
  });

  it('matches mixed line endings byte for byte', async () => {
    await writeFile(path.join(workspace, 'mixed.txt'), 'a\r\nb\nc\n');
    expect((await run('Edit', { file_path: 'mixed.txt', old_string: 'a\nb', new_string: 'x' })).isError).toBe(true);
    expect((await run('Edit', { file_path: 'mixed.txt', old_string: 'b\nc', new_string: 'x\ny' })).isError).toBe(false);
    expect(await contents('mixed.txt')).toBe('a\r\nx\ny\n');
  });
});
