import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';
import { toolContext } from './support/context';

let workspace: string;
let ctx: ToolContext;

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'tools-bad-')));
  ctx = toolContext(workspace);
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const huge = 'a'.repeat(20_000_000);

describe('malformed inputs become is_error results', () => {
  it.each([
    ['Read', undefined],
    ['Read', null],
    ['Read', 'file.txt'],
    ['Read', []],
    ['Read', {}],
    ['Read', { file_path: 42 }],
    ['Read', { file_path: '' }],
    ['Read', { file_path: 'a\0b' }],
    ['Read', { file_path: 'x'.repeat(5000) }],
    ['Read', { file_path: 'a', offset: -1 }],
    ['Read', { file_path: 'a', offset: 1.5 }],
    ['Read', { file_path: 'a', limit: 0 }],
    ['Read', { file_path: 'a', limit: 'ten' }],
    ['Read', { file_path: 'a', limit: '1.5' }],
    ['Read', { file_path: 'a', pages: 'all' }],
    ['Read', { file_path: 'a', bogus: true }],
    ['Write', { file_path: 'a' }],
    ['Write', { file_path: 'a', content: 5 }],
    ['Write', { file_path: 'a', content: huge }],
    ['Write', { file_path: 'a\0', content: 'x' }],
    ['Edit', { file_path: 'a', old_string: 'x' }],
    ['Edit', { file_path: 'a', old_string: 'x', new_string: 'y', replace_all: 'yes' }],
    ['Glob', { pattern: '' }],
    ['Glob', { pattern: '*', path: null }],
    ['Glob', { pattern: 'x'.repeat(20_000) }],
    ['Grep', { pattern: 'x', output_mode: 'lines' }],
    ['Grep', { pattern: 'x', '-A': -2 }],
    ['Grep', { pattern: 'x', head_limit: 'all' }],
    ['Grep', { pattern: 'x\0y' }],
    ['Grep', { pattern: 'x', include: '*.ts' }],
    ['Bash', { command: '' }],
    ['Bash', { command: 'echo a\0b' }],
    ['Bash', { command: 'ls', timeout: 'soon' }],
    ['Bash', { command: 'ls', timeout: 0 }],
    ['Bash', { command: ['ls'] }],
    ['Bash', { command: 'ls', run_in_background: true }],
    ['Bash', { command: 'ls', dangerouslyDisableSandbox: true }],
  ])('%s %#', async (name, input) => {
    const result = await executeTool(name, input, ctx);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^InputValidationError: /);
    expect(result.content).toContain(`call ${name} again`);
    expect(result.content.length).toBeLessThan(2000);
    expect(await readdir(workspace)).toEqual([]);
  });

  it('names the field and the problem', async () => {
    expect(await executeTool('Read', { file_path: 42, extra: 1 }, ctx)).toEqual({
      isError: true,
      content:
        'InputValidationError: file_path: Invalid input: expected string, received number\n' +
        'InputValidationError: "extra": unknown parameter; Read accepts only file_path, offset, limit, pages, allow_large\n' +
        'Fix the input and call Read again.',
    });
    expect((await executeTool('Edit', { file_path: 'a', old_string: 'x' }, ctx)).content).toContain(
      'InputValidationError: new_string: required field is missing (expected string)',
    );
    expect((await executeTool('Read', { file_path: 'a\0b' }, ctx)).content).toContain(
      'InputValidationError: file_path: must not contain NUL bytes',
    );
  });

  it('reports an unknown tool without throwing', async () => {
    expect(await executeTool('Delete', { file_path: 'a' }, ctx)).toEqual({
      isError: true,
      content: 'Unknown tool "Delete". Available tools: Bash, Glob, Grep, Read, Edit, MultiEdit, Write, TodoWrite.',
    });
  });

  it('rejects with an AbortError when the signal already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(executeTool('Read', { file_path: 'a' }, { ...ctx, signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
