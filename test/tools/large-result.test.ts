import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { runGrep } from '../../src/activities/tools/grep';
import { LARGE_RESULT_CHARS, TOOL_RESULTS_DIR, type ToolContext } from '../../src/activities/tools/index';
import { storeLargeResult } from '../../src/activities/tools/large-result';
import { ToolSession, plainContext, tempWorkspace } from './support/session';

let root: string;
let workspace: string;
let ctx: ToolContext;
let session: ToolSession;
const NOTICE =
  /\n\.\.\.\n\[Output too large to show in full: the full output \((\d+) characters\) was saved to (\.durable-agent\/tool-results\/[A-Za-z]+-[0-9a-f]{16}\.txt)\. Only its beginning is shown above\. Read that file with Read \(use offset and limit to page through it\), or search it with Grep \(with that file as path\)\.\]$/;

/** 3,000 lines of about 40 characters: a Grep over them is about 120,000 characters. */
async function bigLog(): Promise<void> {
  const lines = Array.from({ length: 3000 }, (_, i) => `entry ${String(i + 1).padStart(5, '0')} of the big log file`);
  await writeFile(path.join(workspace, 'big.log.txt'), `${lines.join('\n')}\n`);
}

beforeEach(async () => {
  root = await tempWorkspace('tools-large-');
  workspace = path.join(root, 'ws');
  await mkdir(workspace);
  ctx = plainContext(workspace);
  session = new ToolSession(workspace);
  await bigLog();
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('large results are stored aside', () => {
  it('stores a large Grep result and returns a ~2,000 character preview with the file to read', async () => {
    const input = { pattern: 'entry', output_mode: 'content' as const, head_limit: 0 };
    const full = await runGrep(input, ctx);
    expect(full.content.length).toBeGreaterThan(LARGE_RESULT_CHARS);

    const result = await session.run('Grep', input);
    expect(result.isError).toBe(false);
    const [, chars, file] = NOTICE.exec(result.content) ?? [];
    expect(Number(chars)).toBe(full.content.length);
    const preview = result.content.slice(0, result.content.indexOf('\n...\n['));
    expect(preview.length).toBeGreaterThan(1000);
    expect(preview.length).toBeLessThanOrEqual(2000);
    expect(full.content.startsWith(`${preview}\n`)).toBe(true);
    expect(await readFile(path.join(workspace, file!), 'utf8')).toBe(full.content);
    expect(await readFile(path.join(workspace, '.durable-agent/.gitignore'), 'utf8')).toBe('*\n');

    // A retry stores the same file again, and leaves no temporary files behind.
    expect((await session.run('Grep', input)).content).toBe(result.content);
    expect(await readdir(path.join(workspace, TOOL_RESULTS_DIR))).toEqual([path.basename(file!)]);
  });

  it('lets Read page through a stored result without storing it again', async () => {
    const stored = NOTICE.exec(
      (await session.run('Grep', { pattern: 'entry', output_mode: 'content', head_limit: 0 })).content,
    )![2]!;
    const read = await session.run('Read', { file_path: stored });
    const lines = read.content.split('\n');
    expect(read.isError).toBe(false);
    expect(lines[0]).toBe('     1\tbig.log.txt:1:entry 00001 of the big log file');
    // Over Read's token cap: shown a page at a time, not stored again.
    expect(read.content).toContain(`[Truncated: PARTIAL view — ${stored}: showing lines 1-`);
    expect(read.content).not.toMatch(NOTICE);
    expect(await readdir(path.join(workspace, TOOL_RESULTS_DIR))).toHaveLength(1);
    expect((await session.run('Read', { file_path: stored, offset: 2999, limit: 5 })).content).toBe(
      '  2999\tbig.log.txt:2999:entry 02999 of the big log file\n  3000\tbig.log.txt:3000:entry 03000 of the big log file',
    );
    const grep = await session.run('Grep', { pattern: 'entry 02500', path: stored, output_mode: 'content' });
    // A search of one file: its lines name no file.
    expect(grep.content).toBe('2500:big.log.txt:2500:entry 02500 of the big log file');
  });

  it('never stores a Read: its own token cap bounds it, and the file state is kept', async () => {
    const result = await session.run('Read', { file_path: 'big.log.txt' });
    expect(result.content).not.toMatch(NOTICE);
    expect(result.content.startsWith('     1\tentry 00001 of the big log file\n')).toBe(true);
    // About 96,000 characters, under the 25,000-token cap: shown whole, although over LARGE_RESULT_CHARS.
    expect(result.content.length).toBeGreaterThan(LARGE_RESULT_CHARS);
    // 3,000 lines and the empty one after the final line break.
    expect(result.content.split('\n')).toHaveLength(3001);
    expect(result.fileStates).toHaveLength(1);
    await expect(readdir(path.join(workspace, '.durable-agent'))).rejects.toThrow();
    expect(
      (await session.run('Edit', { file_path: 'big.log.txt', old_string: 'entry 00001', new_string: 'first' })).isError,
    ).toBe(false);
  });

  it('leaves small results and failures alone, and saves long Bash output in its own form', async () => {
    expect((await session.run('Grep', { pattern: 'entry 00001', output_mode: 'content' })).content).toBe(
      'big.log.txt:1:entry 00001 of the big log file',
    );
    const failure = { content: 'x'.repeat(LARGE_RESULT_CHARS + 1), isError: true };
    expect(await storeLargeResult('Bash', failure, workspace)).toBe(failure);
    await expect(readdir(path.join(workspace, '.durable-agent'))).rejects.toThrow();
    const bash = (await session.run('Bash', { command: 'cat big.log.txt' })).content;
    const saved = /^<persisted-output>\nOutput too large \(93\.7KB\)\. Full output saved to: (\S+)\n/.exec(bash)?.[1];
    expect(saved).toMatch(/^\.durable-agent\/tool-results\/Bash-[0-9a-f]{16}\.txt$/);
    expect(await readFile(path.join(workspace, saved!), 'utf8')).toBe(
      (await readFile(path.join(workspace, 'big.log.txt'), 'utf8')).trimEnd(),
    );
  });

  it('cuts the result instead when .durable-agent leads outside the workspace', async () => {
    await mkdir(path.join(root, 'outside'));
    await symlink(path.join(root, 'outside'), path.join(workspace, '.durable-agent'));
    const result = await session.run('Grep', { pattern: 'entry', output_mode: 'content', head_limit: 0 });
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(
      /\n\.\.\.\n\[Output cut at 50000 of \d+ characters: it could not be saved to \.durable-agent\/tool-results \(.*outside the workspace.*\)\.\]$/,
    );
    expect(await readdir(path.join(root, 'outside'))).toEqual([]);
  });
});
