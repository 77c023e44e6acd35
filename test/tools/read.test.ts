import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';
import { toolContext } from './support/context';
import { seen } from './support/session';

/** A 2x2 red PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==',
  'base64',
);

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
  it('numbers lines like cat -n, the empty one after a final line break too', async () => {
    await writeFile(path.join(workspace, 'a.txt'), 'alpha\n\tbeta\n\ngamma\n');
    expect(await read({ file_path: 'a.txt' })).toEqual({
      isError: false,
      content: '     1\talpha\n     2\t\tbeta\n     3\t\n     4\tgamma\n     5\t',
    });
    await writeFile(path.join(workspace, 'nl.txt'), '\n');
    expect((await read({ file_path: 'nl.txt' })).content).toBe('     1\t\n     2\t');
  });

  it('accepts an absolute path inside the workspace and a file without a final newline', async () => {
    await writeFile(path.join(workspace, 'b.txt'), 'one\r\ntwo');
    expect(await read({ file_path: path.join(workspace, 'b.txt') })).toEqual({
      isError: false,
      content: '     1\tone\n     2\ttwo',
    });
  });

  it('honours offset (1-based) and limit, and adds nothing after the lines', async () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    await writeFile(path.join(workspace, 'c.txt'), lines);
    const result = await read({ file_path: 'c.txt', offset: 4, limit: 3 });
    expect(result.isError).toBe(false);
    expect(result.content).toBe('     4\tline 4\n     5\tline 5\n     6\tline 6');
    expect((await read({ file_path: 'c.txt', offset: 9 })).content).toBe('     9\tline 9\n    10\tline 10');
    await writeFile(path.join(workspace, 'd.txt'), `${lines}\n`);
    expect((await read({ file_path: 'd.txt', offset: 9 })).content).toBe('     9\tline 9\n    10\tline 10\n    11\t');
    expect((await read({ file_path: 'd.txt', offset: 11 })).content).toBe('    11\t');
    expect((await read({ file_path: 'd.txt', offset: 10, limit: 1 })).content).toBe('    10\tline 10');
  });

  it('reads the whole file by default, with no line count limit and no line cut', async () => {
    await writeFile(path.join(workspace, 'long.txt'), Array.from({ length: 3000 }, (_, i) => String(i + 1)).join('\n'));
    const lines = (await read({ file_path: 'long.txt' })).content.split('\n');
    expect(lines).toHaveLength(3000);
    expect(lines[2999]).toBe('  3000\t3000');
    await writeFile(path.join(workspace, 'wide.txt'), `${'x'.repeat(2503)}\nshort\n`);
    expect((await read({ file_path: 'wide.txt' })).content).toBe(
      `     1\t${'x'.repeat(2503)}\n     2\tshort\n     3\t`,
    );
  });

  it("warns about an empty file and an offset past the end, in Claude Code's words", async () => {
    await writeFile(path.join(workspace, 'empty.txt'), '');
    await writeFile(path.join(workspace, 'short.txt'), 'a\nb\n');
    await writeFile(path.join(workspace, 'one.txt'), 'a');
    const empty = '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>';
    expect(await read({ file_path: 'empty.txt' })).toEqual({ isError: false, content: empty });
    expect(await read({ file_path: 'empty.txt', offset: 1, limit: 5 })).toEqual({ isError: false, content: empty });
    const shorter = (offset: number, lines: number) =>
      `<system-reminder>Warning: the file exists but is shorter than the provided offset (${offset}). The file has ${lines} lines.</system-reminder>`;
    // An empty file has one (empty) line; "a\nb\n" has three, the last empty.
    expect(await read({ file_path: 'empty.txt', offset: 2 })).toEqual({ isError: false, content: shorter(2, 1) });
    expect(await read({ file_path: 'short.txt', offset: 4 })).toEqual({ isError: false, content: shorter(4, 3) });
    expect(await read({ file_path: 'one.txt', offset: 2, limit: 3 })).toEqual({
      isError: false,
      content: shorter(2, 1),
    });
  });

  it('refuses missing files, directories and binary files with clear errors', async () => {
    await mkdir(path.join(workspace, 'dir'));
    await writeFile(path.join(workspace, 'bin.dat'), Buffer.from([0x89, 0x50, 0x00, 0x47]));
    expect(await read({ file_path: 'nope.txt' })).toEqual({
      isError: true,
      content: `File does not exist. Note: your current working directory is ${workspace}.`,
    });
    expect(await read({ file_path: 'dir' })).toEqual({
      isError: true,
      content: expect.stringContaining('EISDIR'),
    });
    expect(await read({ file_path: 'bin.dat' })).toEqual({
      isError: true,
      content: expect.stringContaining('binary file'),
    });
  });
});

describe('Read parity details', () => {
  it("names a directory in Node's EISDIR message, as Claude Code does", async () => {
    await mkdir(path.join(workspace, 'src'));
    expect(await read({ file_path: 'src' })).toEqual({
      isError: true,
      content: `EISDIR: illegal operation on a directory, read '${workspace}/src'`,
    });
  });

  it('says where relative paths start for a missing file, and suggests the same name with another extension', async () => {
    await mkdir(path.join(workspace, 'src'));
    for (const file of ['src/index.ts', 'src/Config.json', 'src/utils.ts', 'src/other.md']) {
      await writeFile(path.join(workspace, file), 'x\n');
    }
    const missing = `File does not exist. Note: your current working directory is ${workspace}.`;
    expect((await read({ file_path: 'src/index.js' })).content).toBe(`${missing} Did you mean src/index.ts?`);
    expect((await read({ file_path: 'src/other' })).content).toBe(`${missing} Did you mean src/other.md?`);
    expect((await read({ file_path: 'src/config.json' })).content).toBe(`${missing} Did you mean src/Config.json?`);
    // A name a typo away is no suggestion, as in Claude Code.
    expect((await read({ file_path: 'src/utlis.ts' })).content).toBe(missing);
    expect((await read({ file_path: 'src/zzz.txt' })).content).toBe(missing);
    expect((await read({ file_path: 'nodir/index.ts' })).content).toBe(missing);
    expect((await read({ file_path: path.join(workspace, 'nodir/index.ts') })).content).toBe(missing);
  });

  it('refuses known binary formats by extension, with or without a NUL byte', async () => {
    await writeFile(path.join(workspace, 'tool.EXE'), 'MZ\u0090 no nul here\n');
    await writeFile(path.join(workspace, 'nul.dat'), 'hello\0world\n');
    expect(await read({ file_path: 'tool.EXE' })).toEqual({
      isError: true,
      content:
        'This tool cannot read binary files. The file appears to be a binary .exe file. Use a shell command or script that can read the format.',
    });
    expect((await read({ file_path: 'nul.dat' })).content).toContain('appears to be a binary .dat file');
  });

  it('shows the lines of a window and nothing more, wherever it ends', async () => {
    await writeFile(path.join(workspace, 'three.txt'), 'a\nb\nc\n');
    expect((await read({ file_path: 'three.txt', limit: 3 })).content).toBe('     1\ta\n     2\tb\n     3\tc');
    expect((await read({ file_path: 'three.txt', limit: 2 })).content).toBe('     1\ta\n     2\tb');
    expect((await read({ file_path: 'three.txt', offset: 3, limit: 1 })).content).toBe('     3\tc');
    expect((await read({ file_path: 'three.txt', offset: 3, limit: 5 })).content).toBe('     3\tc\n     4\t');
    expect((await read({ file_path: 'three.txt', offset: 0 })).content).toBe(
      '     1\ta\n     2\tb\n     3\tc\n     4\t',
    );
  });

  it('reads a huge single line quickly with allow_large, showing its start', async () => {
    await writeFile(path.join(workspace, 'min.js'), `${'y'.repeat(30_000_000)}\r\nend\r\n`);
    expect((await read({ file_path: 'min.js' })).content).toContain(
      'File content (28.6MB) exceeds maximum allowed size (256KB)',
    );
    const started = Date.now();
    const result = await read({ file_path: 'min.js', allow_large: true });
    expect(Date.now() - started).toBeLessThan(5000);
    // 85% of the share of the range that fits 100,000 tokens: 0.85 x floor(30,000,007 x 100,000 / 7,500,003).
    expect(result.content).toBe(
      `     1\t${'y'.repeat(339_999)}\n\n[Truncated: PARTIAL view — min.js: showing the first 339999 of 30000007 characters (7500003 tokens, cap 100000); this file has very long lines and cannot be paginated by line. Use Grep to find a specific section, or Read with offset/limit to page through it. Do NOT answer from this excerpt alone if the answer may be elsewhere in the file.]`,
    );
  });

  it('refuses a range over the token cap when a limit was given', async () => {
    await writeFile(path.join(workspace, 'wide.txt'), `${'w'.repeat(2000)}\n`.repeat(2500));
    expect(await read({ file_path: 'wide.txt', limit: 100_000 })).toEqual({
      isError: true,
      content:
        'File content (1251251 tokens) exceeds maximum allowed tokens (25000). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file. To read it anyway, up to what still fits in your context, call Read again with allow_large: true — only if you genuinely need all of it or the user asked for the whole file.',
    });
    expect((await read({ file_path: 'wide.txt', offset: 3, limit: 2 })).content).toContain('     4\t');
  });
});

/** Outputs captured from Claude Code 2.1.332 for the same files (its Read of them, via a scripted model). */
describe('Read as Claude Code reads', () => {
  it('refuses a file over 256 KB without a limit, and reads one of exactly 256 KB', async () => {
    const exact = `${'a'.repeat(99)}\n`.repeat(2621) + `${'b'.repeat(43)}\n`;
    expect(Buffer.byteLength(exact)).toBe(262_144);
    await writeFile(path.join(workspace, 'exact.txt'), exact);
    await writeFile(path.join(workspace, 'over.txt'), `${exact}b`);
    expect((await read({ file_path: 'exact.txt' })).isError).toBe(false);
    expect(await read({ file_path: 'over.txt' })).toEqual({
      isError: true,
      content:
        'File content (256KB) exceeds maximum allowed size (256KB). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file. To read it anyway, up to what still fits in your context, call Read again with allow_large: true \u2014 only if you genuinely need all of it or the user asked for the whole file.',
    });
    // An offset alone does not lift the limit; a limit or allow_large does.
    expect((await read({ file_path: 'over.txt', offset: 10 })).isError).toBe(true);
    expect((await read({ file_path: 'over.txt', limit: 2 })).content).toContain('     2\taaa');
    expect((await read({ file_path: 'over.txt', offset: 2, limit: 2 })).content).toContain('     3\taaa');
    expect((await read({ file_path: 'over.txt', allow_large: true })).content).toContain('  2622\tbbb');
  });

  it('shows a file over the 25,000-token cap a page at a time, saying where the next page starts', async () => {
    await writeFile(
      path.join(workspace, 'lines.txt'),
      Array.from({ length: 3000 }, (_, i) => `${String(i).padStart(5, '0')} ${'w'.repeat(33)}\n`).join(''),
    );
    const lines = (await read({ file_path: 'lines.txt' })).content.split('\n');
    // Claude Code showed lines 1-2073 of this file too.
    expect(lines[2072]).toBe(`  2073\t02072 ${'w'.repeat(33)}`);
    expect(lines[2073]).toBe('');
    expect(lines[2074]).toBe(
      '[Truncated: PARTIAL view — lines.txt: showing lines 1-2073 of 3001 total (30751 tokens, cap 25000). Call Read with offset=2074 limit=2073 for the next page, or Grep to find a specific section. To read it anyway, up to what still fits in your context, call Read again with allow_large: true — only if you genuinely need all of it or the user asked for the whole file. Do NOT answer from this page alone if the answer may be further in the file.]',
    );
    expect(lines).toHaveLength(2075);
    const next = (await read({ file_path: 'lines.txt', offset: 2074, limit: 2073 })).content.split('\n');
    expect(next[0]).toBe(`  2074\t02073 ${'w'.repeat(33)}`);
    expect(next.at(-2)).toBe(`  3000\t02999 ${'w'.repeat(33)}`);
    // Claude Code showed the empty line after the final line break as line 3001 too.
    expect(next.at(-1)).toBe('  3001\t');
  });

  it('reads a file with NUL bytes and no binary extension as text, with a note', async () => {
    await writeFile(path.join(workspace, 'nul_noext'), 'hello\0world\nsecond line\n');
    const ccNote =
      '[This file has NUL bytes in its first 8 KB: binary data, UTF-16/UTF-32 without a byte-order mark, or text with embedded NULs. Edit and Write will refuse it: change it with a shell command that keeps its encoding, or ask the user whether to convert it to UTF-8.]';
    const result = await read({ file_path: 'nul_noext' });
    expect(result.isError).toBe(false);
    expect(
      result.content.startsWith(
        '     1\thello\0world\n     2\tsecond line\n     3\t\n\n[This file has NUL bytes in its first 8 KB',
      ),
    ).toBe(true);
    // Claude Code's note says Edit and Write refuse such a file; here Write could replace it (without NULs).
    expect(result.content.slice(result.content.indexOf('[This'))).toBe(
      ccNote.replace('Edit and Write will refuse it', 'Edit will refuse it and Write cannot write NUL bytes'),
    );
  });

  it('takes offset and limit written as strings', async () => {
    await writeFile(path.join(workspace, 'g.txt'), 'alpha one\nbeta two\nalpha three\ngamma\n');
    expect((await read({ file_path: 'g.txt', offset: '2', limit: '2.0' })).content).toBe(
      '     2\tbeta two\n     3\talpha three',
    );
  });

  it('renders a notebook as Claude Code does', async () => {
    await writeFile(
      path.join(workspace, 'nb.ipynb'),
      '{\n "cells": [\n  {\n   "cell_type": "markdown",\n   "metadata": {},\n   "source": [\n    "# Title\\n",\n    "Some text"\n   ]\n  },\n  {\n   "cell_type": "code",\n   "execution_count": 1,\n   "metadata": {},\n   "source": [\n    "print(\'hi\')\\n",\n    "x = 1"\n   ],\n   "outputs": [\n    {\n     "name": "stdout",\n     "output_type": "stream",\n     "text": [\n      "hi\\n"\n     ]\n    }\n   ]\n  },\n  {\n   "cell_type": "code",\n   "execution_count": 2,\n   "metadata": {},\n   "source": [\n    "x + 1"\n   ],\n   "outputs": [\n    {\n     "data": {\n      "text/plain": [\n       "2"\n      ]\n     },\n     "execution_count": 2,\n     "metadata": {},\n     "output_type": "execute_result"\n    }\n   ]\n  },\n  {\n   "cell_type": "code",\n   "execution_count": 3,\n   "metadata": {},\n   "source": [\n    "1/0"\n   ],\n   "outputs": [\n    {\n     "ename": "ZeroDivisionError",\n     "evalue": "division by zero",\n     "output_type": "error",\n     "traceback": [\n      "Traceback line"\n     ]\n    }\n   ]\n  },\n  {\n   "cell_type": "raw",\n   "metadata": {},\n   "source": "raw text"\n  }\n ],\n "metadata": {\n  "kernelspec": {\n   "language": "python",\n   "name": "python3",\n   "display_name": "Python 3"\n  },\n  "language_info": {\n   "name": "python"\n  }\n },\n "nbformat": 4,\n "nbformat_minor": 5\n}',
    );
    expect(await read({ file_path: 'nb.ipynb' })).toEqual({
      isError: false,
      content:
        '<cell id="cell-0"><cell_type>markdown</cell_type># Title\nSome text</cell id="cell-0">\n<cell id="cell-1">print(\'hi\')\nx = 1</cell id="cell-1">\n\nhi\n\n<cell id="cell-2">x + 1</cell id="cell-2">\n\n2\n<cell id="cell-3">1/0</cell id="cell-3">\n\nZeroDivisionError: division by zero\nTraceback line\n<cell id="cell-4"><cell_type>raw</cell_type>raw text</cell id="cell-4">',
    });
  });

  it('renders notebook plots as image blocks, other languages and large outputs as Claude Code does', async () => {
    const notebook = {
      cells: [
        {
          cell_type: 'code',
          id: 'abc',
          source: 'plot()',
          outputs: [
            { output_type: 'display_data', data: { 'image/png': PNG.toString('base64'), 'text/plain': ['<Figure>'] } },
          ],
        },
        {
          cell_type: 'code',
          source: ['big()'],
          outputs: [{ output_type: 'stream', name: 'stdout', text: ['z'.repeat(12_000)] }],
        },
      ],
      metadata: { language_info: { name: 'julia' } },
    };
    await writeFile(path.join(workspace, 'nb2.ipynb'), JSON.stringify(notebook));
    const result = await executeTool('Read', { file_path: 'nb2.ipynb' }, ctx);
    expect(result.blocks).toEqual([
      { type: 'text', text: '<cell id="abc"><language>julia</language>plot()</cell id="abc">\n\n<Figure>' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } },
      {
        type: 'text',
        text: '<cell id="cell-1"><language>julia</language>big()</cell id="cell-1">\n\nOutputs are too large to include. Use Bash with: cat <notebook_path> | jq \'.cells[1].outputs\'',
      },
    ]);
  });

  it('returns an image as an image block, by what its bytes are', async () => {
    await writeFile(path.join(workspace, 'img.png'), PNG);
    await writeFile(path.join(workspace, 'pic.jpg'), PNG);
    await writeFile(path.join(workspace, 'fake.png'), 'not really a png\n');
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } };
    expect((await executeTool('Read', { file_path: 'img.png' }, ctx)).blocks).toEqual([image]);
    expect((await executeTool('Read', { file_path: 'pic.jpg', offset: 2 }, ctx)).blocks).toEqual([image]);
    expect(await read({ file_path: 'fake.png' })).toEqual({
      isError: true,
      content: `File has an image extension but its content is not a valid PNG/JPEG/GIF/WebP. Detected: unrecognized bytes (hex: 6e 6f 74 20 72 65 61 6c). This usually means a download saved an error/login page instead of the image. Use \`file "${path.join(workspace, 'fake.png')}"\` to confirm, or read it as text with Bash (e.g. \`head -c 500\`).`,
    });
  });

  it('returns a PDF as a document block; a PDF the parser cannot open is still sent whole', async () => {
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n');
    await writeFile(path.join(workspace, 'doc.pdf'), pdf);
    expect((await executeTool('Read', { file_path: 'doc.pdf' }, ctx)).blocks).toEqual([
      { type: 'text', text: 'PDF file read: doc.pdf (48 bytes)' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } },
    ]);
    expect((await read({ file_path: 'doc.pdf', pages: '1-30' })).content).toMatch(
      /^<tool_use_error>InputValidationError: [^]*"path": \[\s*"pages"\s*\][^]*must be a page or a page range/,
    );
    await writeFile(path.join(workspace, 'not.pdf'), 'hello');
    expect((await read({ file_path: 'not.pdf' })).content).toContain('is not a PDF');
  });

  describe('PDF pages', () => {
    /** A PDF whose page n is 100 + n points wide, so a page can be told by its width. */
    const makePdf = async (pageCount: number): Promise<Buffer> => {
      const document = await PDFDocument.create();
      for (let n = 1; n <= pageCount; n++) document.addPage([100 + n, 200]);
      return Buffer.from(await document.save());
    };
    /** The widths of the pages in the document block a Read returned, or undefined if it has none. */
    const pageWidths = async (outcome: { blocks?: unknown[] }): Promise<number[] | undefined> => {
      const block = outcome.blocks?.find((b) => (b as { type: string }).type === 'document') as
        { source: { data: string } } | undefined;
      if (!block) return undefined;
      const document = await PDFDocument.load(Buffer.from(block.source.data, 'base64'));
      return document.getPages().map((page) => page.getWidth());
    };

    it('sends only the pages asked for, as a new PDF', async () => {
      const pdf = await makePdf(5);
      await writeFile(path.join(workspace, 'five.pdf'), pdf);
      const two = await executeTool('Read', { file_path: 'five.pdf', pages: '2-3' }, ctx);
      expect(two.isError).toBe(false);
      expect(two.blocks?.[0]).toEqual({
        type: 'text',
        text: expect.stringMatching(
          /^PDF pages extracted: 2 page\(s\) from five\.pdf \(.+\): pages 2-3 of 5, attached as a PDF of those pages only\.$/,
        ),
      });
      expect(await pageWidths(two)).toEqual([102, 103]);
      const one = await executeTool('Read', { file_path: 'five.pdf', pages: '4' }, ctx);
      expect(one.content).toContain('1 page(s) from five.pdf');
      expect(one.content).toContain(': page 4 of 5,');
      expect(await pageWidths(one)).toEqual([104]);
      // A range that runs past the end stops at the last page.
      const tail = await executeTool('Read', { file_path: 'five.pdf', pages: '4-8' }, ctx);
      expect(tail.content).toContain('2 page(s) from five.pdf');
      expect(await pageWidths(tail)).toEqual([104, 105]);
      // Without pages, a PDF of at most 10 pages is sent whole, unchanged.
      expect((await executeTool('Read', { file_path: 'five.pdf' }, ctx)).blocks).toEqual([
        { type: 'text', text: expect.stringMatching(/^PDF file read: five\.pdf \(.+\)$/) },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } },
      ]);
    });

    it('refuses a page range that starts past the end, naming the page count', async () => {
      await writeFile(path.join(workspace, 'five.pdf'), await makePdf(5));
      expect(await read({ file_path: 'five.pdf', pages: '7-8' })).toEqual({
        isError: true,
        content:
          'Requested pages 7-8 is outside the document (PDF has 5 pages). Use a range within 1-5, maximum 20 pages per request (e.g. pages: "1-5").',
      });
      await writeFile(path.join(workspace, 'one.pdf'), await makePdf(1));
      expect((await read({ file_path: 'one.pdf', pages: '3' })).content).toBe(
        'Requested page 3 is outside the document (PDF has 1 page). Use a range within 1-1, maximum 20 pages per request (e.g. pages: "1-1").',
      );
    });

    it('needs pages for a PDF of more than 10 pages, and then reads any of them', async () => {
      await writeFile(path.join(workspace, 'big.pdf'), await makePdf(120));
      expect(await read({ file_path: 'big.pdf' })).toEqual({
        isError: true,
        content:
          'This PDF has 120 pages, which is too many to read at once. Use the pages parameter to read specific page ranges (e.g., pages: "1-5"). Maximum 20 pages per request.',
      });
      const late = await executeTool('Read', { file_path: 'big.pdf', pages: '101-103' }, ctx);
      expect(late.isError).toBe(false);
      expect(late.content).toContain('pages 101-103 of 120');
      expect(await pageWidths(late)).toEqual([201, 202, 203]);
    });

    it('says a damaged PDF is damaged when pages are asked for', async () => {
      await writeFile(path.join(workspace, 'broken.pdf'), '%PDF-1.4\nthis is not really a pdf\n');
      expect(await read({ file_path: 'broken.pdf', pages: '1' })).toEqual({
        isError: true,
        content: 'PDF file is corrupted or invalid.',
      });
    });
  });
});
