import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { WITHHELD_NOTE } from '../../src/activities/tools/read-deny';
import { runToolCommand } from '../../src/client/tool-command';
import { makeWorkspace } from '../support/harness';
import { ToolSession, tempWorkspace } from './support/session';

/**
 * Read deny rules are re-checked by the tools on what they really touch: the workflow only sees
 * the path the model wrote, which a symlink, a parent folder searched by Grep or Glob, or another
 * spelling of the same file gets around.
 */
const SECRETS = 'Read(./secrets/**)';
const SINGLE = 'Read(./single.txt)';

const FILES: [string, string][] = [
  ['secrets/key.txt', 'KEY=abc\nbetween\nKEY=def\n'],
  ['secrets/nested/deep.txt', 'KEY deepvalue\n'],
  ['src/app.ts', 'const KEY = 1;\nplain line\nKEY again\n'],
  ['notes.md', 'nothing here\nKEY mention\nafter\n'],
  ['single.txt', 'KEY singlevalue\n'],
  ['zz.txt', 'first\nKEY last\n'],
];
/** Words that appear only in denied files. */
const SECRET_WORDS = ['abc', 'def', 'between', 'deepvalue', 'singlevalue', 'key.txt', 'deep.txt', 'single.txt'];

let workspace: string;
const session = (rules: string[], workspaceSpelling = workspace) =>
  new ToolSession(workspaceSpelling, { readDenyRules: rules });
const run = (name: string, input: unknown, rules: string[] = [SECRETS, SINGLE]) => session(rules).seen(name, input);

function expectNoSecrets(content: string): void {
  for (const word of SECRET_WORDS) expect(content).not.toContain(word);
}

beforeAll(async () => {
  workspace = await tempWorkspace('tools-read-deny-');
  const base = Date.now() / 1000 - 3600;
  FILES.forEach(([file, text], i) => {
    const full = path.join(workspace, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, text);
    utimesSync(full, base + i * 60, base + i * 60);
  });
  symlinkSync('secrets', path.join(workspace, 'link'));
  symlinkSync('secrets/key.txt', path.join(workspace, 'flink.txt'));
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('Read checks the real path', () => {
  it.each([
    ['a symlinked folder', 'link/key.txt'],
    ['a symlinked file', 'flink.txt'],
    ['a symlink deeper down', 'link/nested/deep.txt'],
    ['an absolute path spelled differently', '<ws>//src/.././secrets//./key.txt'],
  ])('refuses %s that leads into a denied folder, naming the rule', async (_, written) => {
    const file = written.replace('<ws>', workspace);
    const result = await run('Read', { file_path: file });
    expect(result.isError).toBe(true);
    expect(result.content).toContain(SECRETS);
    expect(result.content).toContain('denied');
    expectNoSecrets(result.content.replace(file, ''));
  });

  it('applies a single-file rule; other files still read', async () => {
    const denied = await run('Read', { file_path: 'single.txt' });
    expect(denied.isError).toBe(true);
    expect(denied.content).toContain(SINGLE);
    expect(denied.content).not.toContain('singlevalue');
    expect(await run('Read', { file_path: 'notes.md' })).toEqual({
      isError: false,
      content: '     1\tnothing here\n     2\tKEY mention\n     3\tafter\n     4\t',
    });
  });

  it('suggests no denied file for a missing one', async () => {
    const result = await run('Read', { file_path: 'single.md' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('File does not exist');
    expect(result.content).not.toContain('single.txt');
    expect((await run('Read', { file_path: 'single.md' }, [])).content).toContain('Did you mean single.txt?');
  });

  it('matches rules under either spelling of the workspace root', async () => {
    const outside = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-read-deny-alias-')));
    const alias = path.join(outside, 'alias');
    symlinkSync(workspace, alias);
    try {
      for (const rule of [`Read(/${alias}/secrets/**)`, `Read(/${workspace}/secrets/**)`]) {
        const result = await session([rule], alias).seen('Read', { file_path: 'link/key.txt' });
        expect(result.isError).toBe(true);
        expect(result.content).toContain(rule);
      }
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('reads through the symlink when no rule covers its target', async () => {
    const result = await run('Read', { file_path: 'link/key.txt' }, ['Read(./other/**)']);
    expect(result).toEqual({ isError: false, content: '     1\tKEY=abc\n     2\tbetween\n     3\tKEY=def\n     4\t' });
  });
});

describe('Grep leaves out denied files in every mode', () => {
  it('files_with_matches: the header counts only the files shown', async () => {
    const result = await run('Grep', { pattern: 'KEY' });
    expect(result).toEqual({
      isError: false,
      content: ['Found 3 files', 'zz.txt', 'notes.md', 'src/app.ts', WITHHELD_NOTE].join('\n'),
    });
  });

  it('files_with_matches with pagination counts what remains', async () => {
    const result = await run('Grep', { pattern: 'KEY', head_limit: 2 });
    expect(result.content).toBe(['Found 2 files limit: 2', 'zz.txt', 'notes.md', WITHHELD_NOTE].join('\n'));
  });

  it('content with context: no denied line, no stray separators', async () => {
    const result = await run('Grep', { pattern: 'KEY', output_mode: 'content', '-C': 1 });
    expect(result).toEqual({
      isError: false,
      content: [
        'notes.md-1-nothing here',
        'notes.md:2:KEY mention',
        'notes.md-3-after',
        '--',
        'src/app.ts:1:const KEY = 1;',
        'src/app.ts-2-plain line',
        'src/app.ts:3:KEY again',
        '--',
        'zz.txt-1-first',
        'zz.txt:2:KEY last',
        '',
        WITHHELD_NOTE,
      ].join('\n'),
    });
  });

  it('content without line numbers keeps match and context separators', async () => {
    const result = await run('Grep', { pattern: 'KEY', output_mode: 'content', '-n': false, '-A': 1 });
    expect(result.content).toBe(
      [
        'notes.md:KEY mention',
        'notes.md-after',
        '--',
        'src/app.ts:const KEY = 1;',
        'src/app.ts-plain line',
        'src/app.ts:KEY again',
        '--',
        'zz.txt:KEY last',
        '',
        WITHHELD_NOTE,
      ].join('\n'),
    );
  });

  it('count: the lines and the totals cover only the files shown', async () => {
    const result = await run('Grep', { pattern: 'KEY', output_mode: 'count' });
    expect(result.content).toBe(
      ['notes.md:1', 'src/app.ts:2', 'zz.txt:1', '', 'Found 4 matching lines across 3 files.', WITHHELD_NOTE].join(
        '\n',
      ),
    );
  });

  it('a search that finds only denied files says so without naming them', async () => {
    for (const output_mode of ['files_with_matches', 'content', 'count']) {
      const result = await run('Grep', { pattern: 'abc|deepvalue|singlevalue', output_mode });
      expect(result.isError).toBe(false);
      expect(result.content).toMatch(/^No (files|matches) found\n/);
      expect(result.content).toContain(WITHHELD_NOTE);
      expectNoSecrets(result.content);
    }
  });

  it('refuses to search a denied folder or file reached through a symlink', async () => {
    for (const target of ['link', 'flink.txt', 'link/nested', 'secrets']) {
      const result = await run('Grep', { pattern: 'KEY', path: target, output_mode: 'content' });
      expect(result.isError).toBe(true);
      expect(result.content).toContain(SECRETS);
      expectNoSecrets(result.content);
    }
  });

  it('with only the ** rule, the single file shows again', async () => {
    const result = await run('Grep', { pattern: 'KEY' }, [SECRETS]);
    expect(result.content.split('\n')).toEqual([
      'Found 4 files',
      'zz.txt',
      'single.txt',
      'notes.md',
      'src/app.ts',
      WITHHELD_NOTE,
    ]);
  });
});

describe('Glob leaves out denied files', () => {
  it('over the workspace root', async () => {
    const result = await run('Glob', { pattern: '**/*' });
    expect(result).toEqual({
      isError: false,
      content: ['src/app.ts', 'notes.md', 'zz.txt', WITHHELD_NOTE].join('\n'),
    });
  });

  it('a pattern that finds only denied files, and a denied base folder', async () => {
    expect(await run('Glob', { pattern: 'secrets/**/*.txt' })).toEqual({
      isError: false,
      content: `No files found\n${WITHHELD_NOTE}`,
    });
    const base = await run('Glob', { pattern: '*.txt', path: 'link' });
    expect(base.isError).toBe(true);
    expect(base.content).toContain(SECRETS);
    expectNoSecrets(base.content);
  });

  it('a single-file rule hides just that file', async () => {
    expect(await run('Glob', { pattern: '*.txt' }, [SINGLE])).toEqual({
      isError: false,
      content: ['secrets/key.txt', 'secrets/nested/deep.txt', 'zz.txt', WITHHELD_NOTE].join('\n'),
    });
  });
});

describe('with no rule in the way, nothing changes', () => {
  const INPUTS: [string, Record<string, unknown>][] = [
    ['Grep', { pattern: 'KEY' }],
    ['Grep', { pattern: 'KEY', output_mode: 'content' }],
    ['Grep', { pattern: 'KEY', output_mode: 'content', '-C': 1 }],
    ['Grep', { pattern: 'KEY', output_mode: 'content', '-n': false, '-B': 1 }],
    ['Grep', { pattern: 'KEY.*\\n.*', output_mode: 'content', multiline: true }],
    ['Grep', { pattern: 'key', output_mode: 'content', '-i': true, glob: '*.txt', head_limit: 3, offset: 1 }],
    ['Grep', { pattern: 'KEY', output_mode: 'count' }],
    ['Grep', { pattern: 'KEY', path: 'secrets/key.txt', output_mode: 'count' }],
    ['Grep', { pattern: 'nothing-matches-this', output_mode: 'content' }],
    ['Glob', { pattern: '**/*' }],
    ['Glob', { pattern: '*.md' }],
    ['Read', { file_path: 'link/key.txt' }],
  ];

  it.each(INPUTS)('%s %j: a rule that covers no file gives the same output as no rule', async (name, input) => {
    const plain = await run(name, input, []);
    expect(await run(name, input, ['Read(./elsewhere/**)', 'Read(*.pem)', 'Edit(./secrets/**)'])).toEqual(plain);
    expect(plain.content).not.toContain(WITHHELD_NOTE);
  });
});

describe('file names that look like rg separators', () => {
  it('are split at the right place', async () => {
    const odd = await tempWorkspace('tools-read-deny-odd-');
    try {
      const files: [string, string][] = [
        ['a:1-b.txt', 'x\nKEY one\ny\n'],
        ['a:1-b.txt-2:3', 'KEY two\n'],
        ['a', 'KEY three\nz\n'],
      ];
      for (const [file, text] of files) writeFileSync(path.join(odd, file), text);
      writeFileSync(path.join(odd, 'bin.dat'), 'KEY\0binary\nKEY\n');
      const binary = { pattern: 'KEY', path: 'bin.dat', output_mode: 'content' };
      const shown = await session([], odd).seen('Grep', binary);
      expect(shown.content).toContain('binary file matches');
      expect(await session(['Read(./nothing)'], odd).seen('Grep', binary)).toEqual(shown);
      const inputs = [
        { pattern: 'KEY', output_mode: 'content', '-C': 1 },
        { pattern: 'KEY', output_mode: 'content', '-n': false, '-C': 1 },
        { pattern: 'KEY', output_mode: 'count' },
      ];
      for (const input of inputs) {
        const plain = await session([], odd).seen('Grep', input);
        expect(await session(['Read(./nothing)'], odd).seen('Grep', input)).toEqual(plain);
        const denied = await session(['Read(./a:1-b.txt)'], odd).seen('Grep', input);
        expect(denied.content).toContain(WITHHELD_NOTE);
        if (input.output_mode === 'count') {
          expect(denied.content).toMatch(/^a:1\na:1-b\.txt-2:3:1\n\nFound 2 matching lines across 2 files\./);
        } else {
          expect(denied.content).not.toContain('one');
          expect(denied.content).toContain('two');
          expect(denied.content).toContain('three');
        }
      }
    } finally {
      await rm(odd, { recursive: true, force: true });
    }
  });
});

describe('durable-agent tool', () => {
  it('applies a settings deny rule to what Grep finds', async () => {
    const cwd = makeWorkspace({
      'secrets/key.txt': 'KEY=abc\n',
      'src/app.ts': 'const KEY = 1;\n',
      '.claude/settings.json': JSON.stringify({ permissions: { deny: [SECRETS] } }),
    });
    symlinkSync('secrets', path.join(cwd, 'link'));
    const out: string[] = [];
    const err: string[] = [];
    const call = (name: string, json: string) =>
      runToolCommand(
        name,
        json,
        { cwd, allow: [], ask: [], deny: [] },
        { write: (line) => out.push(line) },
        { write: (line) => err.push(line) },
      );

    expect(await call('Grep', '{"pattern":"KEY","path":".","output_mode":"content"}')).toBe(0);
    const grep = JSON.parse(out.pop() as string) as { content: string };
    expect(grep.content).toBe(`src/app.ts:1:const KEY = 1;\n\n${WITHHELD_NOTE}`);

    expect(await call('Read', '{"file_path":"link/key.txt"}')).toBe(1);
    const read = JSON.parse(out.pop() as string) as { content: string; is_error?: boolean };
    expect(read.is_error).toBe(true);
    expect(read.content).toContain(SECRETS);
    expect(read.content).not.toContain('abc');
  });
});

describe('Bash checks where the files it reads lead', () => {
  let ws: string;
  const bash = (command: string, rules: string[] = [SECRETS]) =>
    new ToolSession(ws, { readDenyRules: rules }).seen('Bash', { command });

  beforeAll(async () => {
    ws = await tempWorkspace('tools-bash-links-');
    for (const [file, text] of FILES) {
      mkdirSync(path.dirname(path.join(ws, file)), { recursive: true });
      writeFileSync(path.join(ws, file), text);
    }
    symlinkSync('secrets', path.join(ws, 'link'));
    symlinkSync('secrets/key.txt', path.join(ws, 'flink.txt'));
    symlinkSync('notes.md', path.join(ws, 'notes-link.md'));
    mkdirSync(path.join(ws, 'docs'));
    writeFileSync(path.join(ws, 'docs/a.md'), 'KEY in docs\n');
    symlinkSync('../secrets/key.txt', path.join(ws, 'docs/l'));
    mkdirSync(path.join(ws, 'tree/sub'), { recursive: true });
    writeFileSync(path.join(ws, 'tree/sub/b.md'), 'KEY in tree\n');
    symlinkSync('../../secrets', path.join(ws, 'tree/sub/in'));
    // An ordinary link between sibling folders, as pnpm and yarn workspaces make them.
    mkdirSync(path.join(ws, 'a'));
    mkdirSync(path.join(ws, 'c'));
    symlinkSync('../c', path.join(ws, 'a/b'));
  });
  afterAll(async () => {
    await rm(ws, { recursive: true, force: true });
  });

  it('reads through the links when no rule is in the way (the set-up is real)', async () => {
    const result = await bash('cat flink.txt docs/*', []);
    expect(result.content).toContain('abc');
    expect(result.content).toContain('KEY in docs');
  });

  it.each([
    ['a linked file', 'cat flink.txt', 'flink.txt'],
    ['a file in a linked folder', 'head -n 5 link/key.txt', 'link/key.txt'],
    ['a glob that takes a link in', 'cat docs/*', 'docs/l'],
    ['a link behind a substitution', 'echo "$(cat flink.txt)"', 'flink.txt'],
    ['a link in sh -c', "sh -c 'tail link/nested/deep.txt'", 'link/nested/deep.txt'],
    ['a linked folder searched', 'grep -r KEY link', 'link'],
    ['a link grep -R follows', 'grep -R KEY tree', 'tree/sub/in'],
    ['a link rg -L follows', 'rg -L KEY tree', 'tree/sub/in'],
    // `a/b/..` is `a` on paper, but `a/b` is a link to `c`, so the system climbs to the workspace.
    ['a path climbing out of a link', 'cat a/b/../secrets/key.txt', 'a/secrets/key.txt'],
    ['a glob climbing out of a link', 'cat a/b/../secrets/*', 'a/secrets'],
  ])('refuses %s, naming the link and the rule', async (_, command, shown) => {
    const result = await bash(command);
    expect(result.isError).toBe(true);
    expect(result.content).toContain(`reads ${shown}, which leads (through a symbolic link)`);
    expect(result.content).toContain(SECRETS);
    // The names are the model's own words; no content of a denied file is in the answer.
    for (const word of ['abc', 'def', 'between', 'deepvalue']) expect(result.content).not.toContain(word);
  });

  it('lets ordinary reads run, links to allowed files and trees grep -r does not follow into included', async () => {
    const result = await bash('cat notes-link.md src/app.ts && grep -r KEY tree');
    expect(result.isError).toBe(false);
    expect(result.content).toContain('KEY mention');
    expect(result.content).toContain('tree/sub/b.md:KEY in tree');
    expectNoSecrets(result.content);
  });

  it('leaves a file named outright to the workflow, which already decided on it', async () => {
    // The workflow denies `cat secrets/key.txt` before it reaches the tool; a tree that may hold
    // a denied file (`grep -r x .`) is the workflow's call too (it asks instead of auto-approving).
    const result = await bash('grep -r "KEY mention" .');
    expect(result.content).toContain('notes.md:KEY mention');
  });
});
