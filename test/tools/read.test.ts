import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';

let workspace: string;
let ctx: ToolContext;
const read = (input: unknown) => executeTool('Read', input, ctx);

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-read-')));
  ctx = { workspace, signal: new AbortController().signal, heartbeat: () => undefined };
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('Read', () => {
  it('numbers lines like cat -n', async () => {
    await writeFile(path.join(workspace, 'a.txt'), 'alpha\n\tbeta\n\ngamma\n');
    expect(await read({ file_path: 'a.txt' })).toEqual({
      isError: false,
      content: '     1\talpha\n     2\t\tbeta\n     3\t\n     4\tgamma',
    });
  });

  it('accepts an absolute path inside the workspace and a file without a final newline', async () => {
    await writeFile(path.join(workspace, 'b.txt'), 'one\r\ntwo');
    expect(await read({ file_path: path.join(workspace, 'b.txt') })).toEqual({
      isError: false,
      content: '     1\tone\n     2\ttwo',
    });
  });

  it('honours offset (1-based) and limit, and says where to continue', async () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    await writeFile(path.join(workspace, 'c.txt'), lines);
    const result = await read({ file_path: 'c.txt', offset: 4, limit: 3 });
    expect(result.isError).toBe(false);
    expect(result.content).toBe(
      '     4\tline 4\n     5\tline 5\n     6\tline 6\n\n(Showing lines 4-6. The file has more lines: call Read with offset 7 to continue.)',
    );
    expect((await read({ file_path: 'c.txt', offset: 9 })).content).toBe('     9\tline 9\n    10\tline 10');
  });

  it('reads 2000 lines by default', async () => {
    await writeFile(path.join(workspace, 'long.txt'), Array.from({ length: 2500 }, (_, i) => String(i + 1)).join('\n'));
    const result = await read({ file_path: 'long.txt' });
    const lines = result.content.split('\n');
    expect(lines[1999]).toBe('  2000\t2000');
    expect(result.content).toContain('offset 2001');
    expect(result.content).not.toContain('\t2001');
  });

  it('cuts lines longer than 2000 characters with a marker', async () => {
    await writeFile(path.join(workspace, 'wide.txt'), `${'x'.repeat(2500)}\nshort\n`);
    const result = await read({ file_path: 'wide.txt' });
    const [first, second] = result.content.split('\n');
    expect(first).toBe(`     1\t${'x'.repeat(2000)}... [line truncated, 500 more characters]`);
    expect(second).toBe('     2\tshort');
  });

  it('warns about an empty file and an offset past the end', async () => {
    await writeFile(path.join(workspace, 'empty.txt'), '');
    await writeFile(path.join(workspace, 'short.txt'), 'a\nb\n');
    expect(await read({ file_path: 'empty.txt' })).toEqual({
      isError: false,
      content: expect.stringContaining('the file exists but the contents are empty'),
    });
    expect((await read({ file_path: 'short.txt', offset: 5 })).content).toContain(
      'shorter than the provided offset (5). The file has 2 lines',
    );
  });

  it('refuses missing files, directories and binary files with clear errors', async () => {
    await mkdir(path.join(workspace, 'dir'));
    await writeFile(path.join(workspace, 'bin.dat'), Buffer.from([0x89, 0x50, 0x00, 0x47]));
    expect(await read({ file_path: 'nope.txt' })).toEqual({ isError: true, content: 'File does not exist: nope.txt' });
    expect(await read({ file_path: 'dir' })).toEqual({
      isError: true,
      content: expect.stringContaining('is a directory'),
    });
    expect(await read({ file_path: 'bin.dat' })).toEqual({
      isError: true,
      content: expect.stringContaining('binary file'),
    });
  });
});
