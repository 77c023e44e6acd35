import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { executeTool, resolveWorkspacePath, type ToolContext } from '../../src/activities/tools/index';
import { toolContext } from './support/context';

let root: string;
let workspace: string;
let outside: string;
let ctx: ToolContext;
const run = (name: string, input: unknown) => executeTool(name, input, ctx);

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-sandbox-')));
  workspace = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  await mkdir(path.join(workspace, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'TOP SECRET\n');
  await writeFile(path.join(workspace, 'src', 'ok.txt'), 'fine\n');
  await symlink(outside, path.join(workspace, 'link-dir'));
  await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'link-file'));
  await symlink(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling'));
  await symlink(path.join(workspace, 'src', 'ok.txt'), path.join(workspace, 'inner-link'));
  ctx = toolContext(workspace);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('resolveWorkspacePath', () => {
  it('resolves paths inside the workspace, existing or not', async () => {
    expect(await resolveWorkspacePath(workspace, 'src/ok.txt')).toEqual({
      ok: true,
      absolute: path.join(workspace, 'src/ok.txt'),
      relative: 'src/ok.txt',
    });
    expect(await resolveWorkspacePath(workspace, path.join(workspace, 'new/dir/file.txt'))).toMatchObject({
      ok: true,
      relative: 'new/dir/file.txt',
    });
    expect(await resolveWorkspacePath(workspace, 'src/../src/./ok.txt')).toMatchObject({
      ok: true,
      relative: 'src/ok.txt',
    });
    expect(await resolveWorkspacePath(workspace, '..cache/x')).toMatchObject({ ok: true, relative: '..cache/x' });
    expect(await resolveWorkspacePath(workspace, '.')).toMatchObject({ ok: true, relative: '.' });
    // A symlink that stays inside is followed.
    expect(await resolveWorkspacePath(workspace, 'inner-link')).toMatchObject({ ok: true, relative: 'src/ok.txt' });
  });

  it.each([
    ['..', '..'],
    ['a climbing relative path', '../outside/secret.txt'],
    ['a deep climbing path', 'src/../../outside/secret.txt'],
    ['an absolute path outside', '/etc/passwd'],
    ['a symlinked directory pointing out', 'link-dir/secret.txt'],
    ['a new file under a symlinked directory', 'link-dir/new.txt'],
    ['a symlinked file pointing out', 'link-file'],
    ['a dangling symlink pointing out', 'dangling'],
  ])('refuses %s', async (_label, input) => {
    const result = await resolveWorkspacePath(workspace, input);
    expect(result.ok).toBe(false);
  });
});

describe('tools refuse to leave the workspace', () => {
  it.each([
    ['Read', { file_path: '../outside/secret.txt' }],
    ['Read', { file_path: '<outside>/secret.txt' }],
    ['Read', { file_path: 'link-file' }],
    ['Read', { file_path: 'link-dir/secret.txt' }],
    ['Write', { file_path: '../outside/evil.txt', content: 'x' }],
    ['Write', { file_path: 'link-dir/evil.txt', content: 'x' }],
    ['Write', { file_path: 'dangling', content: 'x' }],
    ['Edit', { file_path: 'link-file', old_string: 'TOP', new_string: 'NOT' }],
    ['Glob', { pattern: '*', path: '..' }],
    ['Glob', { pattern: '**/*', path: '<outside>' }],
    ['Glob', { pattern: '../outside/*' }],
    ['Glob', { pattern: '../**/*.txt' }],
    ['Glob', { pattern: '<outside>/*.txt' }],
    ['Glob', { pattern: '*', path: 'link-dir' }],
    ['Grep', { pattern: 'SECRET', path: '..' }],
    ['Grep', { pattern: 'SECRET', path: 'link-dir' }],
    ['Grep', { pattern: 'SECRET', path: '/' }],
  ])('%s %j', async (name, template) => {
    // it.each runs before beforeEach, so the temp directory is filled in here.
    const input = JSON.parse(JSON.stringify(template).split('<outside>').join(outside)) as unknown;
    const result = await run(name, input);
    expect(result.isError).toBe(true);
    expect(result.content).not.toContain('TOP SECRET');
    expect(result.content).toMatch(/outside the workspace|symbolic link/);
  });

  it('leaves files outside untouched', async () => {
    await run('Write', { file_path: 'link-dir/evil.txt', content: 'x' });
    await run('Write', { file_path: 'dangling', content: 'x' });
    await run('Edit', { file_path: 'link-file', old_string: 'TOP', new_string: 'NOT' });
    await expect(stat(path.join(outside, 'evil.txt'))).rejects.toThrow();
    await expect(stat(path.join(outside, 'not-yet.txt'))).rejects.toThrow();
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  it('does not follow symlinks out while searching the whole workspace', async () => {
    const grep = await run('Grep', { pattern: 'SECRET' });
    expect(grep).toEqual({ isError: false, content: 'No files found' });
    const glob = await run('Glob', { pattern: '**/*.txt' });
    expect(glob).toEqual({ isError: false, content: 'src/ok.txt' });
  });
});
