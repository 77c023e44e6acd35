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
    expect(result.content).toMatch(/^<tool_use_error>InputValidationError: [\s\S]+<\/tool_use_error>$/);
    expect(result.content.length).toBeLessThan(2000);
    expect(await readdir(workspace)).toEqual([]);
  });

  // Each answer below is what Claude Code 2.1.332 told the model for the same input.
  it("names the field and the problem, in Claude Code's words", async () => {
    const answer = async (name: string, input: unknown) => {
      const result = await executeTool(name, input, ctx);
      expect(result.isError).toBe(true);
      return result.content;
    };
    expect(await answer('Read', {})).toBe(
      '<tool_use_error>InputValidationError: Read failed due to the following issue:\n' +
        'The required parameter `file_path` is missing</tool_use_error>',
    );
    expect(await answer('Bash', { command: 'echo', timeout: true })).toBe(
      '<tool_use_error>InputValidationError: Bash failed due to the following issue:\n' +
        'The parameter `timeout` type is expected as `number` but provided as `boolean`</tool_use_error>',
    );
    expect(await answer('Read', { file_path: 'a', limit: 1.5 })).toBe(
      '<tool_use_error>InputValidationError: Read failed due to the following issue:\n' +
        'The parameter `limit` type is expected as `int` but provided as `number`</tool_use_error>',
    );
    expect(await answer('Read', { file_path: 'a', foo: 1, bar: 2 })).toBe(
      '<tool_use_error>InputValidationError: Read failed due to the following issues:\n' +
        'An unexpected parameter `foo` was provided\n' +
        'An unexpected parameter `bar` was provided</tool_use_error>',
    );
    // Missing first, then unexpected, then of the wrong type, whatever the order of the fields.
    expect(await answer('Edit', { file_path: 5, new_string: 'x', zz: 1 })).toBe(
      '<tool_use_error>InputValidationError: Edit failed due to the following issues:\n' +
        'The required parameter `old_string` is missing\n' +
        'An unexpected parameter `zz` was provided\n' +
        'The parameter `file_path` type is expected as `string` but provided as `number`</tool_use_error>',
    );
    // Any other issue is "is invalid"; when there is no other kind, zod's issues are passed on as JSON.
    expect(await answer('Grep', { output_mode: 'lines' })).toBe(
      '<tool_use_error>InputValidationError: Grep failed due to the following issues:\n' +
        'The required parameter `pattern` is missing\n' +
        'The parameter `output_mode` is invalid: Invalid option: expected one of "content"|"files_with_matches"|"count"</tool_use_error>',
    );
    expect(await answer('Grep', { pattern: 'x', output_mode: 'lines' })).toBe(
      '<tool_use_error>InputValidationError: ' +
        JSON.stringify(
          [
            {
              code: 'invalid_value',
              values: ['content', 'files_with_matches', 'count'],
              path: ['output_mode'],
              message: 'Invalid option: expected one of "content"|"files_with_matches"|"count"',
            },
          ],
          null,
          2,
        ) +
        '</tool_use_error>',
    );
  });

  it('shows a parameter name with invisible characters spelled out, and a long one shortened', async () => {
    const result = await executeTool(
      'Read',
      { file_path: 'a', 'a\0b': 1, ['x'.repeat(100)]: 1, 'c`<d>': 1, ' lead': 1 },
      ctx,
    );
    expect(result.content).toBe(
      '<tool_use_error>InputValidationError: Read failed due to the following issues:\n' +
        'An unexpected parameter `a\\u{0}b` was provided\n' +
        `An unexpected parameter \`${'x'.repeat(40)}\u2026 [+36 chars] \u2026${'x'.repeat(24)}\` was provided\n` +
        "An unexpected parameter `c'\u2039d\u203A` was provided\n" +
        'An unexpected parameter `\\u{20}lead` was provided</tool_use_error>',
    );
  });

  it('reports an unknown tool without throwing, as Claude Code does', async () => {
    expect(await executeTool('Delete', { file_path: 'a' }, ctx)).toEqual({
      isError: true,
      content: '<tool_use_error>Error: No such tool available: Delete</tool_use_error>',
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
