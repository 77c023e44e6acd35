import { rm } from 'node:fs/promises';
import { writeFixture } from './support/fixture';
import { ToolSession, tempWorkspace } from './support/session';

/** Golden outputs of Read on the fixed fixture tree: the exact text the model sees. */
let workspace: string;
let session: ToolSession;
const read = async (input: unknown) => {
  const outcome = await session.run('Read', input);
  return { isError: outcome.isError, content: outcome.content.split(workspace).join('<ws>') };
};
const ok = (...lines: string[]) => ({ isError: false, content: lines.join('\n') });
const error = (content: string) => ({ isError: true, content });

beforeAll(async () => {
  workspace = await tempWorkspace('tools-golden-read-');
  writeFixture(workspace);
  session = new ToolSession(workspace);
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('golden: Read', () => {
  it('a whole file', async () => {
    expect(await read({ file_path: 'src/index.ts' })).toEqual(
      ok(
        "     1\timport { add, square } from './util/math';",
        "     2\timport { shout } from './util/strings';",
        '     3\t',
        '     4\t/** Entry point. */',
        '     5\texport function main(args: string[]): number {',
        '     6\t  // TODO: parse flags',
        '     7\t  const total = args.map(Number).reduce(add, 0);',
        '     8\t  console.log(shout(`total: ${total}`));',
        '     9\t  return square(total);',
        '    10\t}',
        '    11\t',
        '    12\texport function helper(): string {',
        "    13\t  return 'helper';",
        '    14\t}',
        '    15\t',
        '    16\texport function unused(): void {',
        '    17\t  // TODO: remove',
        '    18\t}',
        '    19\t',
      ),
    );
  });

  it('a window, by offset and limit', async () => {
    expect(await read({ file_path: 'src/index.ts', offset: 5, limit: 3 })).toEqual(
      ok(
        '     5\texport function main(args: string[]): number {',
        '     6\t  // TODO: parse flags',
        '     7\t  const total = args.map(Number).reduce(add, 0);',
      ),
    );
  });

  it('CRLF line ends, a long line shown whole, and an absolute path', async () => {
    expect(await read({ file_path: 'data/win.txt' })).toEqual(
      ok('     1\talpha', '     2\tbeta', '     3\tgamma', '     4\t'),
    );
    expect(await read({ file_path: `${workspace}/data/wide.txt` })).toEqual(
      ok(`     1\t${'0123456789'.repeat(210)}`, '     2\tshort', '     3\t'),
    );
  });

  it('notices: an empty file, an offset past the end', async () => {
    expect(await read({ file_path: 'docs/empty.md' })).toEqual(
      ok('<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>'),
    );
    expect(await read({ file_path: 'docs/guide.md', offset: 9 })).toEqual(
      ok(
        '<system-reminder>Warning: the file exists but is shorter than the provided offset (9). The file has 5 lines.</system-reminder>',
      ),
    );
  });

  it('errors: missing (with a suggestion), a directory, a binary file, outside the workspace', async () => {
    expect(await read({ file_path: 'src/index.js' })).toEqual(
      error('File does not exist. Note: your current working directory is <ws>. Did you mean src/index.ts?'),
    );
    expect(await read({ file_path: 'nothing/here.txt' })).toEqual(
      error('File does not exist. Note: your current working directory is <ws>.'),
    );
    expect(await read({ file_path: 'src' })).toEqual(
      error("EISDIR: illegal operation on a directory, read '<ws>/src'"),
    );
    expect(await read({ file_path: 'data/logo.png' })).toEqual(
      error(
        'data/logo.png cannot be sent as an image: it is damaged or cut short. Look at it with Bash (e.g. `file data/logo.png`), or make a smaller or repaired copy (e.g. with convert) and read that.',
      ),
    );
    expect(await read({ file_path: '../etc/passwd' })).toEqual(
      error(
        'Path "../etc/passwd" is outside the workspace (<ws>). Only files inside the workspace can be accessed; use a path relative to the workspace root.',
      ),
    );
  });
});
