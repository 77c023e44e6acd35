import { readFile, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { writeFixture } from './support/fixture';
import { ToolSession, tempWorkspace } from './support/session';

/**
 * Golden outputs of Write, Edit and MultiEdit on the fixed fixture tree. The calls run in order in
 * one session, as a model would make them, so each step starts from the previous one's file.
 */
let workspace: string;
let session: ToolSession;
const run = (name: string, input: unknown) => session.seen(name, input);
const ok = (...lines: string[]) => ({ isError: false, content: lines.join('\n') });
const error = (...lines: string[]) => ({ isError: true, content: lines.join('\n') });
/** Edit and MultiEdit errors, and Write's refusals, come inside <tool_use_error>, as Claude Code's do. */
const editError = (...lines: string[]) => error(`<tool_use_error>${lines.join('\n')}</tool_use_error>`);
const SNIPPET = "Here's the result of running `cat -n` on a snippet of the edited file:";
const CURRENT = ' (file state is current in your context — no need to Read it back)';
const NOT_READ = 'File has not been read yet. Read it first before writing to it.';

beforeAll(async () => {
  workspace = await tempWorkspace('tools-golden-edit-');
  writeFixture(workspace);
  session = new ToolSession(workspace);
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('golden: Write, Edit and MultiEdit, in sequence', () => {
  it('1. refuses to change a file before it is read', async () => {
    expect(await run('Write', { file_path: 'src/index.ts', content: 'x' })).toEqual(editError(NOT_READ));
    expect(await run('Edit', { file_path: 'src/index.ts', old_string: 'a', new_string: 'b' })).toEqual(
      editError(NOT_READ),
    );
    expect(
      await run('MultiEdit', { file_path: 'src/index.ts', edits: [{ old_string: 'a', new_string: 'b' }] }),
    ).toEqual(editError(NOT_READ));
    await run('Read', { file_path: 'src/index.ts' });
  });

  it('2. Edit: one replacement', async () => {
    expect(
      await run('Edit', {
        file_path: 'src/index.ts',
        old_string: '  return square(total);',
        new_string: '  const result = square(total);\n  return result;',
      }),
    ).toEqual(ok(`The file src/index.ts has been updated successfully.${CURRENT}`));
  });

  it('3. Edit: replace_all', async () => {
    expect(
      await run('Edit', { file_path: 'src/index.ts', old_string: 'TODO', new_string: 'NOTE', replace_all: true }),
    ).toEqual(ok(`The file src/index.ts has been updated. All occurrences were successfully replaced.${CURRENT}`));
    expect(await readFile(path.join(workspace, 'src/index.ts'), 'utf8')).not.toContain('TODO');
  });

  it('4. Edit errors: ambiguous, not found, no change', async () => {
    expect(
      await run('Edit', { file_path: 'src/index.ts', old_string: 'export function', new_string: 'function' }),
    ).toEqual(
      editError(
        'Found 3 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.',
        'String: export function',
      ),
    );
    expect(await run('Edit', { file_path: 'src/index.ts', old_string: 'nope', new_string: 'x' })).toEqual(
      editError('String to replace not found in file.', 'String: nope'),
    );
    expect(await run('Edit', { file_path: 'docs/guide.md', old_string: 'x', new_string: 'x' })).toEqual(
      editError('No changes to make: old_string and new_string are exactly the same.'),
    );
  });

  it('5. MultiEdit: a rename and a deletion', async () => {
    expect(
      await run('MultiEdit', {
        file_path: 'src/index.ts',
        edits: [
          { old_string: 'helper', new_string: 'assist', replace_all: true },
          { old_string: 'export function unused(): void {\n  // NOTE: remove\n}\n', new_string: '' },
        ],
      }),
    ).toEqual(
      ok(
        `The file src/index.ts has been updated (2 edits, 3 replacements). ${SNIPPET}`,
        '     9\t  const result = square(total);',
        '    10\t  return result;',
        '    11\t}',
        '    12\t',
        '    13\texport function assist(): string {',
        "    14\t  return 'assist';",
        '    15\t}',
        '    16\t',
      ),
    );
  });

  it('6. MultiEdit: all or none', async () => {
    const before = await readFile(path.join(workspace, 'src/index.ts'), 'utf8');
    expect(
      await run('MultiEdit', {
        file_path: 'src/index.ts',
        edits: [
          { old_string: 'assist', new_string: 'aid', replace_all: true },
          { old_string: 'assist', new_string: 'x' },
        ],
      }),
    ).toEqual(
      editError(
        'Edit 2 of 2 (edits[1]) failed: String to replace not found in file.',
        'String: assist',
        'No edit was applied: the file is unchanged.',
      ),
    );
    expect(await readFile(path.join(workspace, 'src/index.ts'), 'utf8')).toBe(before);
  });

  it('7. Write: overwrite after edits, create with folders, then edit the new file', async () => {
    expect(await run('Write', { file_path: 'src/index.ts', content: 'export {};\n' })).toEqual(
      ok(`The file src/index.ts has been updated successfully.${CURRENT}`),
    );
    expect(await run('Write', { file_path: 'src/new/feature.ts', content: 'export const feature = true;\n' })).toEqual(
      ok(`File created successfully at: src/new/feature.ts${CURRENT}`),
    );
    expect(await run('Edit', { file_path: 'src/new/feature.ts', old_string: 'true', new_string: 'false' })).toEqual(
      ok(`The file src/new/feature.ts has been updated successfully.${CURRENT}`),
    );
    expect(await run('Write', { file_path: 'README.md', content: 'x' })).toEqual(editError(NOT_READ));
  });
});
