import fs from 'node:fs';
import path from 'node:path';
import { workspaceHome } from '../../src/activities/store/workspace-home';
import { journalFolderName } from '../../src/activities/tool-journal';
import { executeTool, type ToolContext } from '../../src/activities/tools';
import { fileStateKey, type ReadFileStates } from '../../src/shared/file-state';
import { makeWorkspace, tempDir } from '../support/harness';
import { runToolAttempt } from '../support/tool-activity';
import { FileContentStore } from '../../src/activities/store/content-store';

/** An attempt that dies (as a SIGKILLed worker would) right after the tool ran, before the journal says so. */
const diesAfterTool = async (name: string, input: unknown, ctx: ToolContext) => {
  await executeTool(name, input, ctx);
  throw new Error('worker died');
};

/** An attempt that dies once the journal recorded the file change, before the file is replaced. */
const diesBeforeRename = (name: string, input: unknown, ctx: ToolContext) =>
  executeTool(name, input, {
    ...ctx,
    beforeFileChange: async (change) => {
      await ctx.beforeFileChange?.(change);
      throw new Error('worker died');
    },
  });

function readStateOf(workspace: string, file: string): ReadFileStates {
  const info = fs.statSync(path.join(workspace, file));
  return { [fileStateKey(workspace, file)]: { mtimeMs: info.mtimeMs, size: info.size, partial: false } };
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

describe('the tool journal under faults', () => {
  let storeDir: string;
  beforeEach(() => {
    storeDir = tempDir('journal-store');
  });

  test('an image Read is stored as an image block; the workflow gets its ref, a text preview and an estimate', async () => {
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==',
      'base64',
    );
    const workspace = makeWorkspace({});
    fs.writeFileSync(path.join(workspace, 'red.png'), png);
    const { result, block } = await runToolAttempt({
      storeDir,
      workspace,
      id: 'toolu_img',
      name: 'Read',
      input: { file_path: 'red.png' },
    });
    expect(block.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
    ]);
    expect(result).toMatchObject({ isError: false, preview: '[image: image/png, 73 bytes]', chars: 6400 });
    expect(await new FileContentStore(storeDir).get(result.ref)).toEqual(block);
  });

  test('a resumed Bash call saves its long output as a fresh call does', async () => {
    const workspace = makeWorkspace({});
    const call = { storeDir, workspace, id: 'toolu_long', name: 'Bash', input: { command: 'seq 1 20000' } };
    await expect(runToolAttempt({ ...call, deps: { execute: diesAfterTool } })).rejects.toThrow('worker died');
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.block.content).toMatch(
      /^<persisted-output>\nOutput too large \(106\.3KB\)\. Full output saved to: \.durable-agent\/tool-results\/Bash-[0-9a-f]{16}\.txt\n/,
    );
  });

  test.each(['the data directory', 'the workspace (written by an older worker)'])(
    'a torn journal entry in %s reads as started: the retry answers, it does not fail',
    async (where) => {
      const workspace = makeWorkspace({});
      const folder =
        where === 'the data directory'
          ? path.join(await workspaceHome(storeDir, workspace), 'journal', journalFolderName('job-1/run-1'))
          : path.join(workspace, '.durable-agent', 'journal', journalFolderName('job-1/run-1'));
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, 'toolu_torn.json'), '{"status":"started","toolUseId":"toolu_torn","na');

      const { result, block } = await runToolAttempt({
        storeDir,
        workspace,
        id: 'toolu_torn',
        name: 'Bash',
        input: { command: 'echo ran >> effects.log' },
        attempt: 2,
      });
      expect(result.isError).toBe(true);
      expect(block.content).toContain('The Bash call was interrupted by a worker failure');
      expect(block.content).toContain('could not be read: it is not valid JSON');
      expect(block.content).toContain('may have partly run');
      // Not run again.
      expect(fs.existsSync(path.join(workspace, 'effects.log'))).toBe(false);
    },
  );

  test('a Write whose worker died after the rename answers done, as the uninterrupted call would', async () => {
    const control = makeWorkspace({});
    const uninterrupted = await runToolAttempt({
      storeDir: tempDir('journal-control'),
      workspace: control,
      id: 'toolu_w',
      name: 'Write',
      input: { file_path: 'notes/new.txt', content: 'first line\nsecond line\n' },
    });

    const workspace = makeWorkspace({});
    const call = {
      storeDir,
      workspace,
      id: 'toolu_w',
      name: 'Write',
      input: uninterrupted.block && { file_path: 'notes/new.txt', content: 'first line\nsecond line\n' },
    };
    await expect(runToolAttempt({ ...call, deps: { execute: diesAfterTool } })).rejects.toThrow('worker died');
    expect(fs.readFileSync(path.join(workspace, 'notes/new.txt'), 'utf8')).toBe('first line\nsecond line\n');

    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.block).toEqual(uninterrupted.block);
    expect(retry.result.isError).toBe(false);
    expect(retry.result.fileStates?.[0]?.key).toBe(fileStateKey(workspace, 'notes/new.txt'));
  });

  test('an Edit whose worker died after the rename answers done and is not applied twice', async () => {
    const workspace = makeWorkspace({ 'app.txt': 'count: 1\n' });
    const call = {
      storeDir,
      workspace,
      id: 'toolu_e',
      name: 'Edit',
      input: { file_path: 'app.txt', old_string: 'count: 1', new_string: 'count: 1\ncount: 1' },
      readState: readStateOf(workspace, 'app.txt'),
    };
    await expect(runToolAttempt({ ...call, deps: { execute: diesAfterTool } })).rejects.toThrow('worker died');
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.result.isError).toBe(false);
    expect(retry.block.content).toContain('The file app.txt has been updated successfully.');
    expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('count: 1\ncount: 1\n');
  });

  test('an Edit whose worker died before the rename is not done: the retry simply applies it', async () => {
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    const call = {
      storeDir,
      workspace,
      id: 'toolu_e2',
      name: 'Edit',
      input: { file_path: 'app.txt', old_string: 'one', new_string: 'uno' },
      readState: readStateOf(workspace, 'app.txt'),
    };
    await expect(runToolAttempt({ ...call, deps: { execute: diesBeforeRename } })).rejects.toThrow('worker died');
    expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('one two\n');
    // What a kill between writing the temporary copy and renaming it leaves (named as
    // write-file-atomic names it), and a file of the user's that merely looks like one.
    fs.writeFileSync(path.join(workspace, 'app.txt.1195911312'), 'uno two\n');
    fs.writeFileSync(path.join(workspace, 'app.txt.2024'), 'the user keeps this\n');
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.result.isError).toBe(false);
    expect(retry.block.content).toContain('The file app.txt has been updated successfully.');
    expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('uno two\n');
    expect(
      fs
        .readdirSync(workspace)
        .filter((name) => name.startsWith('app.txt'))
        .sort(),
    ).toEqual(['app.txt', 'app.txt.2024']);
  });

  test('a recovery finds the file from a handle on the workspace: a folder swapped for a link out is not followed', async () => {
    const workspace = makeWorkspace({ 'd/app.txt': 'one two\n' });
    const call = {
      storeDir,
      workspace,
      id: 'toolu_e4',
      name: 'Edit',
      input: { file_path: 'd/app.txt', old_string: 'one', new_string: 'uno' },
      readState: readStateOf(workspace, 'd/app.txt'),
    };
    await expect(runToolAttempt({ ...call, deps: { execute: diesBeforeRename } })).rejects.toThrow('worker died');
    // Meanwhile `d` became a link to a folder outside holding what the Edit meant to write, and a
    // file named like its temporary copy.
    const outside = tempDir('journal-outside');
    fs.writeFileSync(path.join(outside, 'app.txt'), 'uno two\n');
    fs.writeFileSync(path.join(outside, 'app.txt.1195911312'), 'uno two\n');
    fs.renameSync(path.join(workspace, 'd'), path.join(workspace, 'd-moved'));
    fs.symlinkSync(outside, path.join(workspace, 'd'));
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    // Not "done" on the strength of a file outside, and nothing outside removed.
    expect(retry.result.isError).toBe(true);
    expect(retry.block.content).toContain('d/app.txt now holds neither its content from before the call');
    expect(fs.readdirSync(outside).sort()).toEqual(['app.txt', 'app.txt.1195911312']);
  });

  test('a file something else changed meanwhile is left alone, and the model is told', async () => {
    const workspace = makeWorkspace({ 'app.txt': 'one two\n' });
    const call = {
      storeDir,
      workspace,
      id: 'toolu_e3',
      name: 'Edit',
      input: { file_path: 'app.txt', old_string: 'one', new_string: 'uno' },
      readState: readStateOf(workspace, 'app.txt'),
    };
    await expect(runToolAttempt({ ...call, deps: { execute: diesBeforeRename } })).rejects.toThrow('worker died');
    fs.writeFileSync(path.join(workspace, 'app.txt'), 'someone else\n');
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    expect(retry.result.isError).toBe(true);
    expect(retry.block.content).toContain('app.txt now holds neither its content from before the call');
    expect(fs.readFileSync(path.join(workspace, 'app.txt'), 'utf8')).toBe('someone else\n');
  });

  test('wiping .durable-agent (git clean -fdx) between a call and its retry loses neither the exactly-once answer nor a saved result', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i + 1} ${'x'.repeat(60)}`);
    const workspace = makeWorkspace({ 'big.txt': `${lines.join('\n')}\n` });
    const call = {
      storeDir,
      workspace,
      id: 'toolu_b',
      name: 'Bash',
      input: { command: 'echo once >> effects.log' },
    };
    await expect(runToolAttempt({ ...call, deps: { execute: diesAfterTool } })).rejects.toThrow('worker died');
    fs.rmSync(path.join(workspace, '.durable-agent'), { recursive: true, force: true });
    const retry = await runToolAttempt({ ...call, attempt: 2 });
    // The command's exit status and output, kept beside the journal entry, answer for it.
    expect(retry.block.content).toBe('(Bash completed with no output)');
    expect(fs.readFileSync(path.join(workspace, 'effects.log'), 'utf8')).toBe('once\n');

    // A large result the model was pointed to, then the workspace copy wiped.
    const big = await runToolAttempt({
      storeDir,
      workspace,
      id: 'toolu_big',
      name: 'Grep',
      input: { pattern: 'line', path: 'big.txt', output_mode: 'content', head_limit: 0 },
    });
    const saved = /saved to (\.durable-agent\/tool-results\/[^ ]+\.txt)/.exec(String(big.block.content))?.[1];
    expect(saved).toBeDefined();
    fs.rmSync(path.join(workspace, '.durable-agent'), { recursive: true, force: true });
    const read = await runToolAttempt({
      storeDir,
      workspace,
      id: 'toolu_read',
      name: 'Read',
      input: { file_path: path.join(workspace, saved!), offset: 1999, limit: 2 },
    });
    expect(read.result.isError).toBe(false);
    expect(read.block.content).toContain('line 1999 x');
    expect(read.block.content).toContain('line 2000 x');
    expect(read.result.fileStates).toBeUndefined();
    const grep = await runToolAttempt({
      storeDir,
      workspace,
      id: 'toolu_grep',
      name: 'Grep',
      input: { pattern: 'line 1999 ', path: saved, output_mode: 'content' },
    });
    expect(grep.block.content).toContain('line 1999 x');
    expect(grep.result.isError).toBe(false);
  });

  test('Write and Edit replace the file atomically and keep its mode', async () => {
    const workspace = makeWorkspace({ 'run.sh': '#!/bin/sh\necho hi\n', 'secret.txt': 'a\n' });
    fs.chmodSync(path.join(workspace, 'run.sh'), 0o755);
    fs.chmodSync(path.join(workspace, 'secret.txt'), 0o640);
    const inode = fs.statSync(path.join(workspace, 'run.sh')).ino;
    const edit = await runToolAttempt({
      storeDir,
      workspace,
      id: 'toolu_mode_e',
      name: 'Edit',
      input: { file_path: 'run.sh', old_string: 'hi', new_string: 'hello' },
      readState: readStateOf(workspace, 'run.sh'),
    });
    expect(edit.result.isError).toBe(false);
    const write = await runToolAttempt({
      storeDir,
      workspace,
      id: 'toolu_mode_w',
      name: 'Write',
      input: { file_path: 'secret.txt', content: 'b\n' },
      readState: readStateOf(workspace, 'secret.txt'),
    });
    expect(write.result.isError).toBe(false);
    const script = fs.statSync(path.join(workspace, 'run.sh'));
    expect(script.mode & 0o777).toBe(0o755);
    // A new file renamed into place, not the old one written over.
    expect(script.ino).not.toBe(inode);
    expect(fs.statSync(path.join(workspace, 'secret.txt')).mode & 0o777).toBe(0o640);
    expect(fs.readFileSync(path.join(workspace, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho hello\n');
    expect(fs.readdirSync(workspace).sort()).toEqual(['run.sh', 'secret.txt']);
  });

  test('read-only calls leave no journal entry anywhere', async () => {
    const workspace = makeWorkspace({ 'a.txt': 'hello\n' });
    for (const [name, input] of [
      ['Read', { file_path: 'a.txt' }],
      ['Grep', { pattern: 'hello' }],
      ['Glob', { pattern: '*.txt' }],
      ['Bash', { command: 'cat a.txt' }],
    ] as const) {
      const { result } = await runToolAttempt({ storeDir, workspace, id: `toolu_${name}`, name, input });
      expect(result.isError).toBe(false);
    }
    expect(fs.readdirSync(workspace)).toEqual(['a.txt']);
    expect(filesUnder(path.join(await workspaceHome(storeDir, workspace), 'journal'))).toEqual([]);
  });

  test('a tool heartbeats while it runs, though it reports nothing itself', async () => {
    const workspace = makeWorkspace({});
    const { heartbeats } = await runToolAttempt({
      storeDir,
      workspace,
      id: 'toolu_slow',
      name: 'Glob',
      input: { pattern: '*' },
      deps: {
        execute: async (name, input, ctx) => {
          await new Promise((resolve) => setTimeout(resolve, 3_500));
          return executeTool(name, input, ctx);
        },
      },
    });
    // One a second from the first second on (1, 2, 3 s), with a second to spare for a busy machine.
    expect(heartbeats.length).toBeGreaterThanOrEqual(2);
    expect(heartbeats[0]).toEqual({ tool: 'Glob' });
  });

  test('a call that ends within the first second sends no heartbeat', async () => {
    // Each heartbeat that reaches the server is a write there (a billable action on Temporal
    // Cloud); a quick Read gains nothing from one.
    const { block, heartbeats } = await runToolAttempt({
      storeDir,
      workspace: makeWorkspace({ 'notes.txt': 'one\ntwo\n' }),
      id: 'toolu_quick',
      name: 'Read',
      input: { file_path: 'notes.txt' },
    });
    expect(block.is_error ?? false).toBe(false);
    expect(block.content).toContain('two');
    expect(heartbeats).toEqual([]);
  });
});
