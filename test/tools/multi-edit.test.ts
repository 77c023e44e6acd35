import { readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { fileStateKey } from '../../src/shared/file-state';
import { ToolSession, tempWorkspace } from './support/session';

let workspace: string;
let session: ToolSession;
const run = (input: unknown) => session.seen('MultiEdit', input);
const contents = (file: string) => readFile(path.join(workspace, file), 'utf8');
const ORIGINAL = 'function greet(name) {\n  return "hi " + name;\n}\n\nfunction part() {\n  return 1;\n}\n';

beforeEach(async () => {
  workspace = await tempWorkspace('tools-multi-');
  session = new ToolSession(workspace);
  await writeFile(path.join(workspace, 'app.js'), ORIGINAL);
  await session.run('Read', { file_path: 'app.js' });
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('MultiEdit', () => {
  it('creates a missing file when the first edit has an empty old_string, and only if every edit applies', async () => {
    const failing = await run({
      file_path: 'lib/new.js',
      edits: [
        { old_string: '', new_string: 'let a = 1;\n' },
        { old_string: 'nope', new_string: 'x' },
      ],
    });
    expect(failing.content).toMatch(/^<tool_use_error>Edit 2 of 2 \(edits\[1\]\) failed: String to replace not found/);
    await expect(stat(path.join(workspace, 'lib'))).rejects.toThrow();
    const created = await run({
      file_path: 'lib/new.js',
      edits: [
        { old_string: '', new_string: 'let a = 1;\n' },
        { old_string: 'let', new_string: 'const' },
      ],
    });
    expect(created.isError).toBe(false);
    expect(await contents('lib/new.js')).toBe('const a = 1;\n');
  });

  it('applies edits in order, each on the result of the previous one, and shows the result', async () => {
    const result = await run({
      file_path: 'app.js',
      edits: [
        { old_string: 'greet', new_string: 'welcome' },
        { old_string: 'welcome(name)', new_string: 'welcome(person)' },
        { old_string: 'name;', new_string: 'person;' },
      ],
    });
    expect(result).toEqual({
      isError: false,
      content:
        "The file app.js has been updated (3 edits, 3 replacements). Here's the result of running `cat -n` on a snippet of the edited file:\n" +
        '     1\tfunction welcome(person) {\n     2\t  return "hi " + person;\n     3\t}\n     4\t\n     5\tfunction part() {\n     6\t  return 1;',
    });
    expect(await contents('app.js')).toBe(
      ORIGINAL.replace('greet(name)', 'welcome(person)').replace('name;', 'person;'),
    );
  });

  it('is all or none: a failing edit leaves the file untouched and is named by index', async () => {
    const before = await stat(path.join(workspace, 'app.js'));
    const cases: [unknown[], string][] = [
      [
        [
          { old_string: 'greet', new_string: 'welcome' },
          { old_string: 'greet', new_string: 'x' },
        ],
        '<tool_use_error>Edit 2 of 2 (edits[1]) failed: String to replace not found in file.',
      ],
      [
        [
          { old_string: 'greet', new_string: 'g' },
          { old_string: 'return', new_string: 'yield' },
          { old_string: '}', new_string: ']' },
        ],
        'Edit 2 of 3 (edits[1]) failed: Found 2 matches of the string to replace, but replace_all is false.',
      ],
      [
        [{ old_string: 'part', new_string: 'part' }],
        'No changes to make: old_string and new_string are exactly the same.',
      ],
      [
        [
          { old_string: 'a', new_string: 'b', replace_all: true },
          { old_string: '', new_string: 'x' },
        ],
        'Edit 2 of 2 (edits[1]) failed: old_string is empty, but the file is not.',
      ],
    ];
    for (const [edits, message] of cases) {
      const result = await run({ file_path: 'app.js', edits });
      expect(result.isError).toBe(true);
      expect(result.content).toContain(message);
      expect(result.content).toMatch(/^<tool_use_error>[^]*<\/tool_use_error>$/);
      if (edits.length > 1)
        expect(result.content).toMatch(/No edit was applied: the file is unchanged\.<\/tool_use_error>$/);
    }
    expect(await contents('app.js')).toBe(ORIGINAL);
    expect((await stat(path.join(workspace, 'app.js'))).mtimeMs).toBe(before.mtimeMs);
  });

  it('honours replace_all per edit and counts replacements', async () => {
    const result = await run({
      file_path: 'app.js',
      edits: [
        { old_string: 'return', new_string: 'yield', replace_all: true },
        { old_string: 'part', new_string: 'whole' },
      ],
    });
    expect(result.content).toMatch(/^The file app.js has been updated \(2 edits, 3 replacements\)\./);
    expect(await contents('app.js')).toBe(ORIGINAL.replace(/return/g, 'yield').replace('part', 'whole'));
  });

  it('needs a prior Read, refuses a file changed since, and records the new state', async () => {
    await writeFile(path.join(workspace, 'other.js'), 'a\n');
    expect(await run({ file_path: 'other.js', edits: [{ old_string: 'a', new_string: 'b' }] })).toEqual({
      isError: true,
      content: '<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>',
    });
    const later = Date.now() / 1000 + 10;
    await utimes(path.join(workspace, 'app.js'), later, later);
    expect((await run({ file_path: 'app.js', edits: [{ old_string: 'part', new_string: 'p' }] })).content).toContain(
      'File has been modified since read',
    );
    await session.run('Read', { file_path: 'app.js' });
    const outcome = await session.run('MultiEdit', {
      file_path: 'app.js',
      edits: [{ old_string: 'part', new_string: 'p' }],
    });
    const info = await stat(path.join(workspace, 'app.js'));
    expect(outcome.fileStates).toEqual([
      { key: fileStateKey(workspace, 'app.js'), state: { mtimeMs: info.mtimeMs, size: info.size, partial: false } },
    ]);
    // The recorded state lets another edit follow without a Read.
    expect((await run({ file_path: 'app.js', edits: [{ old_string: 'p()', new_string: 'q()' }] })).isError).toBe(false);
  });

  it('keeps CRLF line endings and refuses a missing file', async () => {
    await writeFile(path.join(workspace, 'win.txt'), 'one\r\ntwo\r\n');
    await session.run('Read', { file_path: 'win.txt' });
    const result = await run({
      file_path: 'win.txt',
      edits: [
        { old_string: 'one\ntwo', new_string: '1\n2' },
        { old_string: '2\n', new_string: '2\n3\n' },
      ],
    });
    expect(result.isError).toBe(false);
    expect(await contents('win.txt')).toBe('1\r\n2\r\n3\r\n');
    expect(await run({ file_path: 'nope.js', edits: [{ old_string: 'a', new_string: 'b' }] })).toEqual({
      isError: true,
      content: `<tool_use_error>File does not exist. Note: your current working directory is ${workspace}.</tool_use_error>`,
    });
  });

  it('keeps a partial read partial after an edit', async () => {
    await writeFile(path.join(workspace, 'long.txt'), 'a\nb\nc\nd\n');
    await session.run('Read', { file_path: 'long.txt', limit: 2 });
    const key = fileStateKey(workspace, 'long.txt');
    expect(session.readState[key]?.partial).toBe(true);
    await session.run('MultiEdit', { file_path: 'long.txt', edits: [{ old_string: 'a', new_string: 'A' }] });
    expect(session.readState[key]?.partial).toBe(true);
    await session.run('Write', { file_path: 'long.txt', content: 'all\n' });
    expect(session.readState[key]?.partial).toBe(false);
  });
});
