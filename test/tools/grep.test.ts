import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';
import { toolContext } from './support/context';

let workspace: string;
let ctx: ToolContext;
const grep = (input: unknown) => executeTool('Grep', input, ctx);

/** ripgrep run directly on the same tree, lines sorted, './' dropped: the reference output. */
function rg(...args: string[]): string[] {
  let out: string;
  try {
    out = execFileSync('rg', ['--no-config', '--no-heading', '--with-filename', '--color=never', ...args, '.'], {
      cwd: workspace,
      encoding: 'utf8',
    });
  } catch (error) {
    out = (error as { stdout: string }).stdout;
  }
  return out
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^\.\//, ''))
    .sort();
}

const FILES: Record<string, string> = {
  'src/app.ts': 'import x from "y";\n// TODO: fix\nexport const foo = 1;\nconst FOO = 2;\n',
  'src/util.ts': 'export function foo() {\n  return "bar";\n}\n-flag value\n',
  'src/deep/mod.py': 'def foo():\n    pass  # TODO\n',
  'docs/notes.md': 'nothing to see\nfoo in docs\nTODO later\n',
  'README.md': 'Project readme\n',
};

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-grep-')));
  ctx = toolContext(workspace);
  const base = Date.now() / 1000 - 3600;
  for (const [i, [file, text]] of Object.entries(FILES).entries()) {
    await mkdir(path.dirname(path.join(workspace, file)), { recursive: true });
    await writeFile(path.join(workspace, file), text);
    await utimes(path.join(workspace, file), base + i * 60, base + i * 60);
  }
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('Grep matches ripgrep run directly', () => {
  it('files_with_matches (default): same files, newest first, with a header', async () => {
    const result = await grep({ pattern: 'foo' });
    const [header, ...files] = result.content.split('\n');
    expect(result.isError).toBe(false);
    expect(header).toBe('Found 4 files');
    expect([...files].sort()).toEqual(rg('-l', 'foo'));
    expect(files).toEqual(['docs/notes.md', 'src/deep/mod.py', 'src/util.ts', 'src/app.ts']);
  });

  it.each([
    [{ pattern: 'foo', output_mode: 'content' }, ['-n', 'foo']],
    [{ pattern: 'foo', output_mode: 'content', '-i': true }, ['-n', '-i', 'foo']],
    [{ pattern: 'foo', output_mode: 'content', '-n': false }, ['foo']],
    [{ pattern: 'TODO', output_mode: 'content', '-C': 1 }, ['-n', '-C', '1', 'TODO']],
    [{ pattern: 'TODO', output_mode: 'content', '-A': 1, '-B': 2 }, ['-n', '-A', '1', '-B', '2', 'TODO']],
    [{ pattern: 'foo', output_mode: 'content', glob: '*.ts' }, ['-n', '--glob', '*.ts', 'foo']],
    [{ pattern: 'foo', output_mode: 'content', type: 'py' }, ['-n', '--type', 'py', 'foo']],
    [
      { pattern: 'foo\\(\\) \\{.*bar', output_mode: 'content', multiline: true },
      ['-n', '-U', '--multiline-dotall', 'foo\\(\\) \\{.*bar'],
    ],
    [{ pattern: '-flag', output_mode: 'content' }, ['-n', '-e', '-flag']],
  ])('content %j', async (input, rgArgs) => {
    const result = await grep(input);
    expect(result.isError).toBe(false);
    expect(result.content.split('\n').sort()).toEqual(rg(...rgArgs));
  });

  it('count: same counts plus a summary', async () => {
    const result = await grep({ pattern: 'foo', output_mode: 'count', '-i': true });
    const [counts, summary] = result.content.split('\n\n');
    expect(counts!.split('\n').sort()).toEqual(rg('-c', '-i', 'foo'));
    expect(summary).toBe('Found 5 matching lines across 4 files.');
  });

  it('searches a single file (its lines name no file) or a subdirectory (workspace-relative paths)', async () => {
    expect((await grep({ pattern: 'foo', path: 'src/util.ts', output_mode: 'content' })).content).toBe(
      '1:export function foo() {',
    );
    expect((await grep({ pattern: 'return', path: 'src/util.ts', output_mode: 'content', '-B': 1 })).content).toBe(
      '1-export function foo() {\n2:  return "bar";',
    );
    expect((await grep({ pattern: 'foo', path: 'src/util.ts', output_mode: 'content', '-n': false })).content).toBe(
      'export function foo() {',
    );
    await writeFile(path.join(workspace, 'data.bin'), 'foo\n\0foo\n');
    expect((await grep({ pattern: 'foo', path: 'data.bin', output_mode: 'content' })).content).toMatch(
      /^binary file matches \(found "\\0" byte around offset \d+\)$/,
    );
    expect((await grep({ pattern: 'foo', path: 'src/util.ts', output_mode: 'count' })).content).toBe(
      'src/util.ts:1\n\nFound 1 matching line across 1 file.',
    );
    expect((await grep({ pattern: 'TODO', path: path.join(workspace, 'src') })).content).toBe(
      'Found 2 files\nsrc/deep/mod.py\nsrc/app.ts',
    );
  });
});

describe('Grep pagination and messages', () => {
  beforeEach(async () => {
    await writeFile(path.join(workspace, 'big.txt'), Array.from({ length: 300 }, (_, i) => `hit ${i + 1}`).join('\n'));
  });

  it('applies head_limit 250 by default, and offset before head_limit', async () => {
    const first = (await grep({ pattern: 'hit', output_mode: 'content' })).content.split('\n');
    expect(first).toHaveLength(252);
    expect(first[249]).toBe('big.txt:250:hit 250');
    expect(first[251]).toBe('[Showing results with pagination = limit: 250]');
    const page = (await grep({ pattern: 'hit', output_mode: 'content', offset: 10, head_limit: 2 })).content;
    expect(page).toBe(
      'big.txt:11:hit 11\nbig.txt:12:hit 12\n\n[Showing results with pagination = limit: 2, offset: 10]',
    );
    // The last page: the offset is noted, the limit no longer (nothing more was left out).
    expect((await grep({ pattern: 'hit', output_mode: 'content', offset: 299, head_limit: 2 })).content).toBe(
      'big.txt:300:hit 300\n\n[Showing results with pagination = offset: 299]',
    );
    expect((await grep({ pattern: 'hit', output_mode: 'content', offset: 300 })).content).toBe(
      'No entries at this offset\n\n[Showing results with pagination = offset: 300]',
    );
    expect((await grep({ pattern: 'hit', offset: 5 })).content).toBe(
      'No entries at this offset. [Showing results with pagination = offset: 5]',
    );
    expect((await grep({ pattern: 'o', output_mode: 'count', head_limit: 1 })).content).toBe(
      'README.md:1\n\nFound 8 matching lines across 5 files. with pagination = limit: 1',
    );
    expect((await grep({ pattern: 'hit', output_mode: 'content', head_limit: 0 })).content.split('\n')).toHaveLength(
      300,
    );
  });

  it('says when nothing matches and reports bad regexes and unknown types as errors', async () => {
    expect(await grep({ pattern: 'zzz_nothing' })).toEqual({ isError: false, content: 'No files found' });
    expect(await grep({ pattern: 'zzz_nothing', output_mode: 'content' })).toEqual({
      isError: false,
      content: 'No matches found',
    });
    expect(await grep({ pattern: 'zzz_nothing', output_mode: 'count' })).toEqual({
      isError: false,
      content: 'No matches found\n\nFound 0 matching lines across 0 files.',
    });
    const rejected = 'Search failed — ripgrep rejected the pattern, glob, or file type without searching:\nrg: ';
    expect(await grep({ pattern: '(unclosed' })).toEqual({
      isError: true,
      content: expect.stringMatching(new RegExp(`^${rejected}regex parse error:\n`)),
    });
    expect(await grep({ pattern: 'x', type: 'no-such-type' })).toEqual({
      isError: true,
      content: `${rejected}unrecognized file type: no-such-type`,
    });
    expect(await grep({ pattern: 'x', path: 'missing' })).toEqual({
      isError: true,
      content: `Path does not exist: missing. Note: your current working directory is ${workspace}.`,
    });
  });

  it('asks for ripgrep to be installed when rg is not on PATH', async () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent-bin';
    try {
      const result = await grep({ pattern: 'hit' });
      expect(result.isError).toBe(true);
      expect(result.content).toContain('apt-get install ripgrep');
    } finally {
      process.env.PATH = saved;
    }
  });

  it('rejects with an AbortError when cancelled', async () => {
    const controller = new AbortController();
    const pending = executeTool('Grep', { pattern: 'hit' }, { ...ctx, signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('Grep takes the inputs Claude Code takes', () => {
  it('-o prints only the matched parts, one per line', async () => {
    const result = await grep({ pattern: 'TO[A-Z]+', output_mode: 'content', '-o': true });
    expect(result).toEqual({
      isError: false,
      content: 'docs/notes.md:3:TODO\nsrc/app.ts:2:TODO\nsrc/deep/mod.py:2:TODO',
    });
    expect(result.content.split('\n').sort()).toEqual(rg('-n', '-o', 'TO[A-Z]+'));
  });

  it('context is -C under another name, and wins when both are given', async () => {
    const withContext = await grep({ pattern: 'TODO: fix', output_mode: 'content', context: 1, '-C': 3 });
    expect(withContext.content).toBe(
      'src/app.ts-1-import x from "y";\nsrc/app.ts:2:// TODO: fix\nsrc/app.ts-3-export const foo = 1;',
    );
    expect(await grep({ pattern: 'TODO: fix', output_mode: 'content', '-C': 1 })).toEqual(withContext);
  });

  it('takes whole numbers and booleans written as strings, and refuses other strings', async () => {
    expect(await grep({ pattern: 'foo', output_mode: 'content', head_limit: '2', '-A': ' 1', '-n': 'true' })).toEqual(
      await grep({ pattern: 'foo', output_mode: 'content', head_limit: 2, '-A': 1, '-n': true }),
    );
    expect((await grep({ pattern: 'foo', offset: '1', head_limit: '1' })).content).toBe(
      (await grep({ pattern: 'foo', offset: 1, head_limit: 1 })).content,
    );
    const fraction = await grep({ pattern: 'foo', head_limit: '1.5' });
    expect(fraction.isError).toBe(true);
    expect(fraction.content).toContain('The parameter `head_limit` type is expected as `number`');
    expect((await grep({ pattern: 'foo', '-i': 'yes' })).isError).toBe(true);
  });
});
