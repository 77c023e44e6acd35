import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';
import { toolContext } from './support/context';

let workspace: string;
let ctx: ToolContext;
const glob = (input: unknown) => executeTool('Glob', input, ctx);

/** Write files with mtimes one minute apart, in the order given (the last is newest). */
async function writeFiles(files: string[]): Promise<void> {
  const base = Date.now() / 1000 - 3600;
  for (const [i, file] of files.entries()) {
    const full = path.join(workspace, file);
    await mkdir(path.dirname(full), { recursive: true });
    await writeFile(full, `${file}\n`);
    await utimes(full, base + i * 60, base + i * 60);
  }
}

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-glob-')));
  ctx = toolContext(workspace);
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('Glob', () => {
  beforeEach(async () => {
    await writeFiles(['a.ts', 'src/b.ts', 'src/sub/c.ts', 'src/d.js', '.github/ci.yml', 'README.md']);
  });

  it('lists matches relative to the workspace, oldest first', async () => {
    expect(await glob({ pattern: '**/*.ts' })).toEqual({ isError: false, content: 'a.ts\nsrc/b.ts\nsrc/sub/c.ts' });
  });

  it('anchors patterns with a slash; a bare pattern matches at any depth', async () => {
    expect((await glob({ pattern: 'src/*.ts' })).content).toBe('src/b.ts');
    expect((await glob({ pattern: '*.ts' })).content).toBe('a.ts\nsrc/b.ts\nsrc/sub/c.ts');
    expect((await glob({ pattern: 'src/**/*.{ts,js}' })).content).toBe('src/b.ts\nsrc/sub/c.ts\nsrc/d.js');
  });

  it('searches under path and still prints workspace-relative paths', async () => {
    expect((await glob({ pattern: '*.ts', path: 'src' })).content).toBe('src/b.ts\nsrc/sub/c.ts');
    expect((await glob({ pattern: '*.ts', path: path.join(workspace, 'src/sub') })).content).toBe('src/sub/c.ts');
  });

  it('accepts an absolute pattern inside the workspace', async () => {
    expect((await glob({ pattern: path.join(workspace, 'src/*.ts') })).content).toBe('src/b.ts');
    expect((await glob({ pattern: path.join(workspace, 'README.md') })).content).toBe('README.md');
    expect((await glob({ pattern: '../*.ts', path: 'src' })).content).toBe('a.ts');
  });

  it('includes hidden files but never VCS metadata', async () => {
    await writeFiles(['.git/config.yml']);
    expect((await glob({ pattern: '**/*.yml' })).content).toBe('.github/ci.yml');
  });

  it('honours .gitignore in a git repository', async () => {
    execFileSync('git', ['init', '-q'], { cwd: workspace });
    await writeFiles(['.gitignore', 'build/out.ts']);
    await writeFile(path.join(workspace, '.gitignore'), 'build/\n');
    expect((await glob({ pattern: '**/*.ts' })).content).not.toContain('build/out.ts');
  });

  it('keeps the 100 oldest of 150 files, with the notice Claude Code gives', async () => {
    await writeFiles(Array.from({ length: 150 }, (_, i) => `many/f${String(i).padStart(3, '0')}.txt`));
    const result = await glob({ pattern: 'many/*.txt' });
    const lines = result.content.split('\n');
    expect(lines).toHaveLength(101);
    expect(lines[0]).toBe('many/f000.txt');
    expect(lines[99]).toBe('many/f099.txt');
    expect(lines[100]).toBe(
      '(Showing 100 of 150 matching files; 50 more are not listed. Narrow the pattern or path to see the rest.)',
    );
  });

  it('reports no match, a missing directory and a file given as path', async () => {
    expect(await glob({ pattern: '**/*.rs' })).toEqual({ isError: false, content: 'No files found' });
    expect(await glob({ pattern: '*', path: 'nope' })).toEqual({
      isError: true,
      content: `Directory does not exist: nope. Note: your current working directory is ${workspace}.`,
    });
    expect((await glob({ pattern: '*', path: 'a.ts' })).isError).toBe(true);
    expect((await glob({ pattern: 'src/*/../../..' })).isError).toBe(true);
  });
});

describe('Glob ignore rules', () => {
  it('honours .gitignore outside a git repository, even for files the pattern names', async () => {
    await writeFiles(['keep.ts', 'gen/skip.ts', 'debug.log', 'notes.log.txt', 'sub/local.ts', 'sub/inner.ts']);
    await writeFile(path.join(workspace, '.gitignore'), 'gen/\n*.log\n');
    await writeFile(path.join(workspace, 'sub/.gitignore'), 'local.ts\n');
    expect((await glob({ pattern: '**/*.ts' })).content).toBe('keep.ts\nsub/inner.ts');
    expect((await glob({ pattern: '*.log' })).content).toBe('No files found');
    expect((await glob({ pattern: 'debug.log' })).content).toBe('No files found');
    expect((await glob({ pattern: 'gen/*.ts' })).content).toBe('No files found');
    expect((await glob({ pattern: '*.txt' })).content).toBe('notes.log.txt');
  });

  it('applies the workspace .gitignore when searching a subdirectory', async () => {
    await writeFiles(['pkg/a.ts', 'pkg/a.gen.ts']);
    await writeFile(path.join(workspace, '.gitignore'), '*.gen.ts\n');
    expect((await glob({ pattern: '*.ts', path: 'pkg' })).content).toBe('pkg/a.ts');
  });

  it('never lists .durable-agent, however the pattern names it', async () => {
    await writeFiles(['.durable-agent/tool-results/Bash-0000000000000000.txt', 'top.txt']);
    expect((await glob({ pattern: '**/*.txt' })).content).toBe('top.txt');
    expect((await glob({ pattern: '.durable-agent/**' })).content).toBe('No files found');
  });
});
