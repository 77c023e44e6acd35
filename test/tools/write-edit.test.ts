import { mkdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { fileStateKey } from '../../src/shared/file-state';
import { ToolSession, tempWorkspace } from './support/session';

let workspace: string;
let session: ToolSession;
const run = (name: string, input: unknown) => session.seen(name, input);
const contents = (file: string) => readFile(path.join(workspace, file), 'utf8');
/** A refusal before anything is written, inside <tool_use_error> as Claude Code sends it. */
const refusal = (text: string) => ({ isError: true, content: `<tool_use_error>${text}</tool_use_error>` });
const NOT_READ = 'File has not been read yet. Read it first before writing to it.';
const MODIFIED =
  'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.';
const CURRENT = ' (file state is current in your context — no need to Read it back)';

/** Change a file behind the session's back, with an mtime clearly after the recorded one. */
async function changeOnDisk(file: string, text: string): Promise<void> {
  const full = path.join(workspace, file);
  const later = (await stat(full)).mtimeMs / 1000 + 5;
  await writeFile(full, text);
  await utimes(full, later, later);
}

beforeEach(async () => {
  workspace = await tempWorkspace('tools-write-');
  session = new ToolSession(workspace);
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('Write', () => {
  it('creates parent folders and reports created, then updated, naming the path as given', async () => {
    expect(await run('Write', { file_path: 'deep/er/new.txt', content: 'a\nb\n' })).toEqual({
      isError: false,
      content: `File created successfully at: deep/er/new.txt${CURRENT}`,
    });
    expect(await contents('deep/er/new.txt')).toBe('a\nb\n');
    const absolute = path.join(workspace, 'deep/er/new.txt');
    expect(await run('Write', { file_path: absolute, content: 'c' })).toEqual({
      isError: false,
      content: `The file ${absolute} has been updated successfully.${CURRENT}`,
    });
    expect(await contents('deep/er/new.txt')).toBe('c');
  });

  it('returns the new file state, keyed like the workflow keys it', async () => {
    const outcome = await session.run('Write', { file_path: 'sub/../f.txt', content: 'hello' });
    const info = await stat(path.join(workspace, 'f.txt'));
    expect(outcome.fileStates).toEqual([
      { key: fileStateKey(workspace, 'f.txt'), state: { mtimeMs: info.mtimeMs, size: 5, partial: false } },
    ]);
  });

  it('refuses to overwrite a file the session has not read, then allows it after a Read', async () => {
    await writeFile(path.join(workspace, 'old.txt'), 'precious\n');
    expect(await run('Write', { file_path: 'old.txt', content: 'x' })).toEqual(refusal(NOT_READ));
    expect(await contents('old.txt')).toBe('precious\n');
    await run('Read', { file_path: 'old.txt' });
    expect((await run('Write', { file_path: './old.txt', content: 'x' })).isError).toBe(false);
    expect(await contents('old.txt')).toBe('x');
  });

  it('refuses a file changed on disk since it was read, by mtime or by size', async () => {
    await writeFile(path.join(workspace, 'f.txt'), 'one\n');
    await run('Read', { file_path: 'f.txt' });
    await changeOnDisk('f.txt', 'two\n');
    expect(await run('Write', { file_path: 'f.txt', content: 'x' })).toEqual(refusal(MODIFIED));
    await run('Read', { file_path: 'f.txt' });
    // Same mtime as recorded, different size: still a change.
    const info = await stat(path.join(workspace, 'f.txt'));
    await writeFile(path.join(workspace, 'f.txt'), 'three\n');
    await utimes(path.join(workspace, 'f.txt'), info.atime, info.mtime);
    expect(await run('Write', { file_path: 'f.txt', content: 'x' })).toEqual(refusal(MODIFIED));
    expect(await contents('f.txt')).toBe('three\n');
  });

  it('refuses a folder as Claude Code does', async () => {
    await mkdir(path.join(workspace, 'src'));
    expect(await run('Write', { file_path: 'src', content: 'x' })).toEqual(
      refusal('src is a directory, not a file. To create a file inside it, include the file name in file_path.'),
    );
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
    await run('Read', { file_path: 'code.ts' });
  });

  it('replaces a unique string and says so as Claude Code does, naming the path as given', async () => {
    expect(await run('Edit', { file_path: 'code.ts', old_string: 'const c = 2;', new_string: 'const c = 3;' })).toEqual(
      { isError: false, content: `The file code.ts has been updated successfully.${CURRENT}` },
    );
    expect(await contents('code.ts')).toBe('const a = 1;\nconst b = 1;\nconst c = 3;\n');
    const absolute = path.join(workspace, 'code.ts');
    expect(await run('Edit', { file_path: absolute, old_string: 'const c = 3;', new_string: 'const c = 4;' })).toEqual({
      isError: false,
      content: `The file ${absolute} has been updated successfully.${CURRENT}`,
    });
  });

  it('does not call the file state current after a Read of part of the file', async () => {
    await writeFile(path.join(workspace, 'long.txt'), 'one\ntwo\nthree\n');
    await run('Read', { file_path: 'long.txt', limit: 1 });
    expect(await run('Edit', { file_path: 'long.txt', old_string: 'one', new_string: 'uno' })).toEqual({
      isError: false,
      content: 'The file long.txt has been updated successfully.',
    });
    await run('Read', { file_path: 'long.txt' });
    expect(await run('Edit', { file_path: 'long.txt', old_string: 'two', new_string: 'dos' })).toEqual({
      isError: false,
      content: `The file long.txt has been updated successfully.${CURRENT}`,
    });
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
      content: `The file code.ts has been updated. All occurrences were successfully replaced.${CURRENT}`,
    });
    expect(await contents('code.ts')).toBe('const a = 9;\nconst b = 9;\nconst c = 2;\n');
  });

  // Claude Code's words, each inside <tool_use_error> as Claude Code sends every Edit error.
  it('reports a missing string, identical strings and a missing file', async () => {
    expect(await run('Edit', { file_path: 'code.ts', old_string: 'const d', new_string: 'x' })).toEqual({
      isError: true,
      content: '<tool_use_error>String to replace not found in file.\nString: const d</tool_use_error>',
    });
    expect(await run('Edit', { file_path: 'code.ts', old_string: '= 1', new_string: '= 9' })).toEqual({
      isError: true,
      content:
        '<tool_use_error>Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: = 1</tool_use_error>',
    });
    expect(await run('Edit', { file_path: 'code.ts', old_string: 'a', new_string: 'a' })).toEqual({
      isError: true,
      content: '<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>',
    });
    const note = `Note: your current working directory is ${workspace}.`;
    expect(await run('Edit', { file_path: 'gone.ts', old_string: 'a', new_string: 'b' })).toEqual({
      isError: true,
      content: `<tool_use_error>File does not exist. ${note}</tool_use_error>`,
    });
    expect(await run('Edit', { file_path: 'code.ts', old_string: '', new_string: 'b' })).toEqual({
      isError: true,
      content: '<tool_use_error>Cannot create new file - file already exists.</tool_use_error>',
    });
    expect(await run('Edit', { file_path: 'code.tsx', old_string: 'a', new_string: 'b' })).toEqual({
      isError: true,
      content: `<tool_use_error>File does not exist. ${note} Did you mean code.ts?</tool_use_error>`,
    });
    expect(await run('Edit', { file_path: '../outside.ts', old_string: '', new_string: 'b' })).toEqual({
      isError: true,
      content: expect.stringMatching(/^<tool_use_error>.*outside the workspace.*<\/tool_use_error>$/),
    });
  });

  it('creates a file that does not exist when old_string is empty, folders included, without a Read', async () => {
    const created = await run('Edit', { file_path: 'deep/er/new.ts', old_string: '', new_string: 'one\ntwo\n' });
    expect(created).toEqual({
      isError: false,
      content: `The file deep/er/new.ts has been updated successfully.${CURRENT}`,
    });
    expect(await contents('deep/er/new.ts')).toBe('one\ntwo\n');
    // The session wrote every byte: the next edit needs no Read either.
    expect((await run('Edit', { file_path: 'deep/er/new.ts', old_string: 'two', new_string: '2' })).isError).toBe(
      false,
    );
    expect(await contents('deep/er/new.ts')).toBe('one\n2\n');
    // An empty old_string and an empty new_string change nothing, so create nothing.
    expect((await run('Edit', { file_path: 'none.ts', old_string: '', new_string: '' })).isError).toBe(true);
    await expect(contents('none.ts')).rejects.toThrow();
  });

  it('refuses a file never read and one changed since it was read', async () => {
    await writeFile(path.join(workspace, 'unread.ts'), 'x\n');
    expect(await run('Edit', { file_path: 'unread.ts', old_string: 'x', new_string: 'y' })).toEqual({
      isError: true,
      content: `<tool_use_error>${NOT_READ}</tool_use_error>`,
    });
    await changeOnDisk('code.ts', 'const a = 1;\n');
    expect(await run('Edit', { file_path: 'code.ts', old_string: 'a = 1', new_string: 'a = 2' })).toEqual({
      isError: true,
      content: `<tool_use_error>${MODIFIED}</tool_use_error>`,
    });
    expect(await contents('code.ts')).toBe('const a = 1;\n');
  });

  it('lets an Edit or a Write follow an Edit or a Write without another Read, as its answer says', async () => {
    await run('Edit', { file_path: 'code.ts', old_string: 'const a', new_string: 'let a' });
    expect((await run('Edit', { file_path: 'code.ts', old_string: 'const b', new_string: 'let b' })).isError).toBe(
      false,
    );
    expect((await run('Write', { file_path: 'code.ts', content: 'let c = 3;\n' })).isError).toBe(false);
    expect((await run('Write', { file_path: 'code.ts', content: 'let c = 4;\n' })).isError).toBe(false);
    expect((await run('Edit', { file_path: 'code.ts', old_string: '4', new_string: '5' })).isError).toBe(false);
    expect(await contents('code.ts')).toBe('let c = 5;\n');
    await run('Write', { file_path: 'new.ts', content: 'export {};\n' });
    expect((await run('Edit', { file_path: 'new.ts', old_string: '{}', new_string: '{ x }' })).isError).toBe(false);
    expect(await contents('new.ts')).toBe('export { x };\n');
  });

  it('inserts new_string literally, without $-patterns', async () => {
    await run('Edit', { file_path: 'code.ts', old_string: 'const c = 2;', new_string: "const c = '$&$1$$';" });
    expect(await contents('code.ts')).toContain("const c = '$&$1$$';");
  });

  it('keeps CRLF line endings', async () => {
    await writeFile(path.join(workspace, 'win.txt'), 'one\r\ntwo\r\nthree\r\n');
    await run('Read', { file_path: 'win.txt' });
    const result = await run('Edit', { file_path: 'win.txt', old_string: 'one\ntwo', new_string: 'uno\ndos\ndos-bis' });
    expect(result).toEqual({
      isError: false,
      content: `The file win.txt has been updated successfully.${CURRENT}`,
    });
    expect(await contents('win.txt')).toBe('uno\r\ndos\r\ndos-bis\r\nthree\r\n');
  });

  it('matches mixed line endings byte for byte', async () => {
    await writeFile(path.join(workspace, 'mixed.txt'), 'a\r\nb\nc\n');
    await run('Read', { file_path: 'mixed.txt' });
    expect((await run('Edit', { file_path: 'mixed.txt', old_string: 'a\nb', new_string: 'x' })).isError).toBe(true);
    expect((await run('Edit', { file_path: 'mixed.txt', old_string: 'b\nc', new_string: 'x\ny' })).isError).toBe(false);
    expect(await contents('mixed.txt')).toBe('a\r\nx\ny\n');
  });

  it('fills an empty file that was read, with an empty old_string', async () => {
    await writeFile(path.join(workspace, 'empty.txt'), '');
    await run('Read', { file_path: 'empty.txt' });
    expect(await run('Edit', { file_path: 'empty.txt', old_string: '', new_string: 'first\n' })).toEqual({
      isError: false,
      content: `The file empty.txt has been updated successfully.${CURRENT}`,
    });
  });
});
