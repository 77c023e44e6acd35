import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';
import { toolContext } from './support/context';
import { runRead } from '../../src/activities/tools/read';
import { seen } from './support/session';

let workspace: string;
let ctx: ToolContext;
const read = async (input: unknown) => seen(await executeTool('Read', input, ctx));

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-read-')));
  ctx = toolContext(workspace);
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
      content: expect.stringContaining('empty.txt exists but is empty'),
    });
    expect((await read({ file_path: 'short.txt', offset: 5 })).content).toContain(
      'short.txt is shorter than offset 5: it has only 2 lines.',
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

describe('Read parity details', () => {
  it('names a directory with an EISDIR-style message pointing to Glob and ls', async () => {
    await mkdir(path.join(workspace, 'src'));
    expect(await read({ file_path: 'src' })).toEqual({
      isError: true,
      content:
        'EISDIR: src is a directory, not a file. Read shows files only: use Glob to find files in it, or Bash with ls to list it.',
    });
  });

  it('suggests similar names for a missing file', async () => {
    await mkdir(path.join(workspace, 'src'));
    for (const file of ['src/index.ts', 'src/Config.json', 'src/utils.ts', 'src/other.md']) {
      await writeFile(path.join(workspace, file), 'x\n');
    }
    expect((await read({ file_path: 'src/index.js' })).content).toBe(
      'File does not exist: src/index.js. Did you mean src/index.ts?',
    );
    expect((await read({ file_path: 'src/config.json' })).content).toBe(
      'File does not exist: src/config.json. Did you mean src/Config.json?',
    );
    expect((await read({ file_path: 'src/utlis.ts' })).content).toBe(
      'File does not exist: src/utlis.ts. Did you mean src/utils.ts?',
    );
    expect((await read({ file_path: 'src/zzz.txt' })).content).toBe('File does not exist: src/zzz.txt');
    expect((await read({ file_path: 'nodir/index.ts' })).content).toBe('File does not exist: nodir/index.ts');
  });

  it('refuses known binary formats by extension even without a NUL byte', async () => {
    await writeFile(path.join(workspace, 'doc.PDF'), '%PDF-1.4\n%\u00e2\u00e3\n');
    expect(await read({ file_path: 'doc.PDF' })).toEqual({
      isError: true,
      content: 'Cannot read doc.PDF: it is a binary file (a .pdf file). Read shows text files only.',
    });
  });

  it('does not claim more lines when the window ends exactly at the end of the file', async () => {
    await writeFile(path.join(workspace, 'three.txt'), 'a\nb\nc\n');
    expect((await read({ file_path: 'three.txt', limit: 3 })).content).toBe('     1\ta\n     2\tb\n     3\tc');
    expect((await read({ file_path: 'three.txt', limit: 2 })).content).toContain('call Read with offset 3 to continue');
    expect((await read({ file_path: 'three.txt', offset: 3, limit: 1 })).content).toBe('     3\tc');
    expect((await read({ file_path: 'three.txt', offset: 0 })).content).toBe('     1\ta\n     2\tb\n     3\tc');
  });

  it('reads a huge single line quickly and cuts it, keeping CRLF out of the count', async () => {
    await writeFile(path.join(workspace, 'min.js'), `${'y'.repeat(30_000_000)}\r\nend\r\n`);
    const started = Date.now();
    const result = await read({ file_path: 'min.js' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.content).toBe(
      `     1\t${'y'.repeat(2000)}... [line truncated, 29998000 more characters]\n     2\tend`,
    );
  });

  it('does not split a surrogate pair when cutting a line', async () => {
    await writeFile(path.join(workspace, 'emoji.txt'), `${'a'.repeat(1999)}😀😀\n`);
    const [line] = (await read({ file_path: 'emoji.txt' })).content.split('\n');
    expect(line).toBe(`     1\t${'a'.repeat(1999)}... [line truncated, 4 more characters]`);
  });

  it('stops at about 4 MB of text whatever the limit, and says where to continue', async () => {
    const wide = `${'w'.repeat(2000)}\n`.repeat(2500);
    await writeFile(path.join(workspace, 'wide.txt'), wide);
    // runRead itself: executeTool would store a result this large aside (see large-result.test.ts).
    const result = await runRead({ file_path: 'wide.txt', limit: 100_000 }, ctx);
    expect(result.content).toContain(
      '(Showing lines 1-2001. The file has more lines: call Read with offset 2002 to continue.)',
    );
  });
});
