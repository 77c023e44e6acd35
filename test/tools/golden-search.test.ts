import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import * as path from 'node:path';
import { FIXTURE_EPOCH_SECONDS, writeFixture } from './support/fixture';
import { ToolSession, tempWorkspace } from './support/session';

/** Golden outputs of Glob and Grep on the fixed fixture tree (not a git repository). */
let workspace: string;
let session: ToolSession;
const run = (name: string, input: unknown) => session.seen(name, input);
const ok = (...lines: string[]) => ({ isError: false, content: lines.join('\n') });

beforeAll(async () => {
  workspace = await tempWorkspace('tools-golden-search-');
  writeFixture(workspace);
  session = new ToolSession(workspace);
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('golden: Glob', () => {
  it('everything, oldest first, without gitignored files', async () => {
    expect(await run('Glob', { pattern: '**/*' })).toEqual(
      ok(
        'README.md',
        'package.json',
        'src/index.ts',
        'src/util/math.ts',
        'src/util/strings.ts',
        'src/legacy.js',
        'docs/guide.md',
        'docs/empty.md',
        'data/win.txt',
        'data/logo.png',
        'data/wide.txt',
        '.gitignore',
        '.github/workflows/ci.yml',
      ),
    );
  });

  it('by extension, under a path, and no match', async () => {
    expect(await run('Glob', { pattern: '**/*.ts' })).toEqual(
      ok('src/index.ts', 'src/util/math.ts', 'src/util/strings.ts'),
    );
    expect(await run('Glob', { pattern: '*.md', path: 'docs' })).toEqual(ok('docs/guide.md', 'docs/empty.md'));
    expect(await run('Glob', { pattern: '**/*.rs' })).toEqual(ok('No files found'));
  });

  it('at most 100 files, the oldest, with a notice', async () => {
    for (let i = 0; i < 105; i++) {
      const file = path.join(workspace, 'many', `f${String(i).padStart(3, '0')}.txt`);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `${i}\n`);
      utimesSync(file, FIXTURE_EPOCH_SECONDS + 10_000 + i, FIXTURE_EPOCH_SECONDS + 10_000 + i);
    }
    const expected = Array.from({ length: 100 }, (_, i) => `many/f${String(i).padStart(3, '0')}.txt`);
    expect(await run('Glob', { pattern: 'many/*.txt' })).toEqual(
      ok(
        ...expected,
        '(Showing 100 of 105 matching files; 5 more are not listed. Narrow the pattern or path to see the rest.)',
      ),
    );
    await rm(path.join(workspace, 'many'), { recursive: true });
  });
});

describe('golden: Grep', () => {
  it('files_with_matches (default), newest first', async () => {
    expect(await run('Grep', { pattern: 'TODO' })).toEqual(
      ok('Found 3 files', '.github/workflows/ci.yml', 'docs/guide.md', 'src/index.ts'),
    );
    expect(await run('Grep', { pattern: 'zzz' })).toEqual(ok('No files found'));
  });

  it('content, with line numbers, sorted by path', async () => {
    expect(await run('Grep', { pattern: 'TODO', output_mode: 'content' })).toEqual(
      ok(
        '.github/workflows/ci.yml:3:# TODO: cache',
        'docs/guide.md:4:TODO: document flags.',
        'src/index.ts:6:  // TODO: parse flags',
        'src/index.ts:17:  // TODO: remove',
      ),
    );
  });

  it('count, case-insensitive', async () => {
    expect(await run('Grep', { pattern: 'todo', '-i': true, output_mode: 'count' })).toEqual(
      ok(
        '.github/workflows/ci.yml:1',
        'docs/guide.md:1',
        'src/index.ts:2',
        '',
        'Found 4 matching lines across 3 files.',
      ),
    );
  });

  it('context lines, a glob, a type, -n false and pagination', async () => {
    expect(await run('Grep', { pattern: 'TODO', output_mode: 'content', '-C': 1, glob: '*.ts' })).toEqual(
      ok(
        'src/index.ts-5-export function main(args: string[]): number {',
        'src/index.ts:6:  // TODO: parse flags',
        'src/index.ts-7-  const total = args.map(Number).reduce(add, 0);',
        '--',
        'src/index.ts-16-export function unused(): void {',
        'src/index.ts:17:  // TODO: remove',
        'src/index.ts-18-}',
      ),
    );
    expect(
      await run('Grep', {
        pattern: 'export',
        output_mode: 'content',
        type: 'ts',
        head_limit: 2,
        offset: 1,
        '-n': false,
      }),
    ).toEqual(
      ok(
        'src/index.ts:export function helper(): string {',
        'src/index.ts:export function unused(): void {',
        '',
        '[Showing results with pagination = limit: 2, offset: 1]',
      ),
    );
    expect(await run('Grep', { pattern: 'helper', output_mode: 'content', '-B': 1, path: 'src' })).toEqual(
      ok(
        'src/index.ts-11-',
        'src/index.ts:12:export function helper(): string {',
        "src/index.ts:13:  return 'helper';",
        '--',
        "src/legacy.js:1:var helper = require('./helper');",
        'src/legacy.js:2:module.exports = function () { return helper(); };',
      ),
    );
  });

  it('multiline', async () => {
    expect(await run('Grep', { pattern: 'add = .*\\n.*square', multiline: true, output_mode: 'content' })).toEqual(
      ok(
        'src/util/math.ts:1:export const add = (a: number, b: number): number => a + b;',
        'src/util/math.ts:2:export const square = (x: number): number => x * x;',
      ),
    );
  });

  it('a bad regex', async () => {
    expect(await run('Grep', { pattern: '(bad' })).toEqual({
      isError: true,
      content:
        'Search failed — ripgrep rejected the pattern, glob, or file type without searching:\n' +
        'rg: regex parse error:\n    (bad\n    ^\nerror: unclosed group',
    });
  });

  it('a large result, stored aside with a preview', async () => {
    mkdirSync(path.join(workspace, 'logs'));
    const lines = Array.from({ length: 2000 }, (_, i) => `request ${i + 1} ok`);
    writeFileSync(path.join(workspace, 'logs/server.txt'), `${lines.join('\n')}\n`);
    const preview = lines.slice(0, 61).map((line, i) => `logs/server.txt:${i + 1}:${line}`);
    expect(await run('Grep', { pattern: 'request', path: 'logs', output_mode: 'content', head_limit: 0 })).toEqual(
      ok(
        ...preview,
        '...',
        '[Output too large to show in full: the full output (71785 characters) was saved to .durable-agent/tool-results/Grep-2f37d01b4b30677e.txt. Only its beginning is shown above. Read that file with Read (use offset and limit to page through it), or search it with Grep (with that file as path).]',
      ),
    );
    // The stored file is kept out of later searches.
    expect(await run('Grep', { pattern: 'request 1 ok', output_mode: 'files_with_matches' })).toEqual(
      ok('Found 1 file', 'logs/server.txt'),
    );
  });
});
