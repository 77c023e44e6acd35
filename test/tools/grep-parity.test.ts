import { execFileSync } from 'node:child_process';
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';
import { plainContext, tempWorkspace } from './support/session';

/**
 * Grep against ripgrep run by hand with the flags the tool documents: --hidden, .gitignore
 * honoured outside git too (--no-require-git), VCS folders and .durable-agent skipped, and a
 * stable order (--sort=path) for content and count.
 */
let workspace: string;
let ctx: ToolContext;
const grep = (input: unknown) => executeTool('Grep', input, ctx);

const BASE = ['--no-config', '--hidden', '--no-require-git', '--no-heading', '--with-filename', '--color=never'];
const EXCLUDE = ['--glob=!.git', '--glob=!.durable-agent'];

function rg(args: string[], target = '.'): string[] {
  let out: string;
  try {
    out = execFileSync('rg', [...BASE, ...args, ...EXCLUDE, '--', target], { cwd: workspace, encoding: 'utf8' });
  } catch (error) {
    out = (error as { stdout: string }).stdout;
  }
  return out
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^\.\//, ''));
}

const FILES: Record<string, string> = {
  'src/app.ts': 'import x from "y";\n// TODO: fix\nexport const foo = 1;\nconst FOO = 2;\nfoo();\n',
  'src/util.ts': 'export function foo() {\n  return "bar";\n}\n-flag value\nFoo again\n',
  'src/deep/mod.py': 'def foo():\n    pass  # TODO\n\n\nclass Foo:\n    pass\n',
  'src/view.tsx': 'export const View = () => <div>foo</div>;\n',
  'docs/notes.md': 'nothing to see\nfoo in docs\nTODO later\nmore foo\n',
  '.config/settings.json': '{ "foo": true }\n',
  'build/out.ts': 'const foo = "generated";\n',
  'secret.log': 'foo in a log\n',
  '.gitignore': 'build/\n*.log\n',
  '.durable-agent/tool-results/Grep-0123456789abcdef.txt': 'foo stored aside\n',
  '.durable-agent/.gitignore': '*\n',
  'README.md': 'Project readme with foo\n',
};

beforeAll(async () => {
  workspace = await tempWorkspace('tools-grep-parity-');
  ctx = plainContext(workspace);
  const base = Date.now() / 1000 - 3600;
  for (const [i, [file, text]] of Object.entries(FILES).entries()) {
    const full = path.join(workspace, file);
    await mkdir(path.dirname(full), { recursive: true });
    await writeFile(full, text);
    await utimes(full, base + i * 60, base + i * 60);
  }
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** Strip the pagination notice and the count summary, keeping rg's lines. */
function body(content: string): string[] {
  return content
    .split('\n\n')[0]!
    .split('\n')
    .filter((line) => line !== '');
}

describe('Grep content mode equals rg, line for line and in order', () => {
  it.each([
    [{ pattern: 'foo' }, ['-n', '--sort=path', 'foo'], '.'],
    [{ pattern: 'foo', '-n': false }, ['--sort=path', 'foo'], '.'],
    [{ pattern: 'foo', '-i': true }, ['-n', '--sort=path', '-i', 'foo'], '.'],
    [{ pattern: 'TODO', '-C': 1 }, ['-n', '--sort=path', '-C', '1', 'TODO'], '.'],
    [{ pattern: 'TODO', '-C': 2, '-n': false }, ['--sort=path', '-C', '2', 'TODO'], '.'],
    [{ pattern: 'TODO', '-A': 2 }, ['-n', '--sort=path', '-A', '2', 'TODO'], '.'],
    [{ pattern: 'TODO', '-B': 1 }, ['-n', '--sort=path', '-B', '1', 'TODO'], '.'],
    [{ pattern: 'TODO', '-A': 1, '-B': 2, '-i': true }, ['-n', '--sort=path', '-A', '1', '-B', '2', '-i', 'TODO'], '.'],
    [{ pattern: 'foo', glob: '*.ts' }, ['-n', '--sort=path', '--glob', '*.ts', 'foo'], '.'],
    [{ pattern: 'foo', glob: '*.{ts,tsx}' }, ['-n', '--sort=path', '--glob', '*.{ts,tsx}', 'foo'], '.'],
    [{ pattern: 'foo', glob: '*.md *.py' }, ['-n', '--sort=path', '--glob', '*.md', '--glob', '*.py', 'foo'], '.'],
    [{ pattern: 'foo', glob: '!*.ts' }, ['-n', '--sort=path', '--glob', '!*.ts', 'foo'], '.'],
    [{ pattern: 'foo', type: 'py' }, ['-n', '--sort=path', '--type', 'py', 'foo'], '.'],
    [{ pattern: 'foo', type: 'ts', '-i': true }, ['-n', '--sort=path', '--type', 'ts', '-i', 'foo'], '.'],
    [
      { pattern: 'def foo.*\\n\\s+pass', multiline: true },
      ['-n', '--sort=path', '-U', '--multiline-dotall', 'def foo.*\\n\\s+pass'],
      '.',
    ],
    [
      { pattern: 'foo\\(\\) \\{.*bar', multiline: true },
      ['-n', '--sort=path', '-U', '--multiline-dotall', 'foo\\(\\) \\{.*bar'],
      '.',
    ],
    [{ pattern: '-flag' }, ['-n', '--sort=path', '-e', '-flag'], '.'],
    [{ pattern: 'foo', path: 'src' }, ['-n', '--sort=path', 'foo'], 'src'],
    [{ pattern: 'foo', path: 'src/util.ts', '-i': true }, ['-n', '--sort=path', '-i', 'foo'], 'src/util.ts'],
  ] as [Record<string, unknown>, string[], string][])('%j', async (input, rgArgs, target) => {
    const result = await grep({ ...input, output_mode: 'content' });
    expect(result.isError).toBe(false);
    // A search of one file names no file on its lines (rg would, given --with-filename).
    const file = /\.\w+$/.test(target);
    const expected = rg(rgArgs, target).map((line) => (file ? line.slice(target.length + 1) : line));
    expect(body(result.content)).toEqual(expected);
  });

  it('skips gitignored files outside a git repository, .git and .durable-agent', async () => {
    const content = (await grep({ pattern: 'foo', output_mode: 'content', head_limit: 0 })).content;
    expect(content).not.toMatch(/build\/out\.ts|secret\.log|\.durable-agent/);
    expect(content).toContain('.config/settings.json:1:');
  });

  it('still searches a stored result named as the path', async () => {
    const stored = '.durable-agent/tool-results/Grep-0123456789abcdef.txt';
    expect((await grep({ pattern: 'stored', path: stored, output_mode: 'content' })).content).toBe(
      '1:foo stored aside',
    );
  });
});

describe('Grep files and count modes equal rg', () => {
  it.each([
    [{ pattern: 'foo' }, ['-l', 'foo']],
    [{ pattern: 'foo', '-i': true, glob: '*.ts' }, ['-l', '-i', '--glob', '*.ts', 'foo']],
    [{ pattern: 'TODO', type: 'py' }, ['-l', '--type', 'py', 'TODO']],
  ])('files_with_matches %j', async (input, rgArgs) => {
    const [header, ...files] = (await grep(input)).content.split('\n');
    expect(header).toBe(`Found ${files.length} file${files.length === 1 ? '' : 's'}`);
    expect([...files].sort()).toEqual(rg(rgArgs).sort());
  });

  it.each([
    [{ pattern: 'foo' }, ['-c', '--sort=path', 'foo']],
    [{ pattern: 'foo', '-i': true }, ['-c', '--sort=path', '-i', 'foo']],
    [{ pattern: 'pass', multiline: true }, ['-c', '--sort=path', '-U', '--multiline-dotall', 'pass']],
  ])('count %j', async (input, rgArgs) => {
    const result = await grep({ ...input, output_mode: 'count' });
    const expected = rg(rgArgs);
    expect(body(result.content)).toEqual(expected);
    const total = expected.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(':') + 1)), 0);
    expect(result.content).toContain(
      `Found ${total} matching line${total === 1 ? '' : 's'} across ${expected.length} file${expected.length === 1 ? '' : 's'}.`,
    );
  });
});

describe('Grep pagination is stable and complete', () => {
  it.each(['content', 'files_with_matches', 'count'] as const)('pages of %s concatenate to the whole', async (mode) => {
    const whole = await grep({ pattern: 'foo', output_mode: mode, '-i': true, head_limit: 0 });
    const all = mode === 'files_with_matches' ? whole.content.split('\n').slice(1) : body(whole.content);
    const pages: string[] = [];
    for (let offset = 0; offset < all.length; offset += 3) {
      const page = await grep({ pattern: 'foo', output_mode: mode, '-i': true, head_limit: 3, offset });
      const lines = mode === 'files_with_matches' ? page.content.split('\n').slice(1) : body(page.content);
      pages.push(...lines);
      const notes = [...(offset + 3 < all.length ? ['limit: 3'] : []), ...(offset > 0 ? [`offset: ${offset}`] : [])];
      if (notes.length > 0) expect(page.content).toContain(notes.join(', '));
      else expect(page.content).not.toContain('pagination');
    }
    expect(pages).toEqual(all);
    const past = (await grep({ pattern: 'foo', output_mode: mode, '-i': true, offset: all.length })).content;
    expect(past).toMatch(/^No entries at this offset/);
    expect(past).toContain(`offset: ${all.length}`);
  });
});
