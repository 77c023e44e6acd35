import { z } from 'zod';
import { classifyToolUse } from '../../src/shared/tool-definition';
import { getToolDefinition, isReadOnlyBashCommand, TOOL_DEFINITIONS } from '../../src/shared/tools/index';

describe('tool definitions', () => {
  it('offers the fourteen tools under their Claude Code names', () => {
    expect(TOOL_DEFINITIONS.map((tool) => tool.name).sort()).toEqual([
      'Agent',
      'Bash',
      'CronCreate',
      'CronDelete',
      'CronList',
      'Edit',
      'Glob',
      'Grep',
      'MultiEdit',
      'Read',
      'ScheduleWakeup',
      'TaskStop',
      'TodoWrite',
      'Write',
    ]);
    for (const tool of TOOL_DEFINITIONS) expect(getToolDefinition(tool.name)).toBe(tool);
    expect(getToolDefinition('read')).toBeUndefined();
  });

  it.each(TOOL_DEFINITIONS.map((tool) => [tool.name, tool] as const))(
    '%s has a JSON schema with a description on every field and no extra keys',
    (_name, tool) => {
      const schema = z.toJSONSchema(tool.inputSchema) as {
        type: string;
        additionalProperties: boolean;
        properties: Record<string, { description?: string }>;
      };
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      // CronList takes no input, as Claude Code's (`{ properties: {} }`).
      if (tool.name !== 'CronList') expect(Object.keys(schema.properties).length).toBeGreaterThan(0);
      for (const [key, property] of Object.entries(schema.properties)) {
        expect([key, typeof property.description]).toEqual([key, 'string']);
      }
      expect(tool.description.length).toBeGreaterThan(50);
      // The schema must survive a JSON round trip: it is sent to the model as JSON.
      expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
    },
  );

  it('uses the Claude Code input names', () => {
    const keys = (name: string) =>
      Object.keys((z.toJSONSchema(getToolDefinition(name)!.inputSchema) as { properties: object }).properties).sort();
    expect(keys('Read')).toEqual(['allow_large', 'file_path', 'limit', 'offset', 'pages']);
    expect(keys('Write')).toEqual(['content', 'file_path']);
    expect(keys('Edit')).toEqual(['file_path', 'new_string', 'old_string', 'replace_all']);
    expect(keys('MultiEdit')).toEqual(['edits', 'file_path']);
    expect(keys('Glob')).toEqual(['path', 'pattern']);
    expect(keys('Grep')).toEqual(
      [
        '-A',
        '-B',
        '-C',
        '-i',
        '-n',
        '-o',
        'context',
        'glob',
        'head_limit',
        'multiline',
        'offset',
        'output_mode',
        'path',
        'pattern',
        'type',
      ].sort(),
    );
    expect(keys('Bash')).toEqual([
      'command',
      'dangerouslyDisableSandbox',
      'description',
      'run_in_background',
      'timeout',
    ]);
  });

  it("accepts every input field of Claude Code 2.1.332's tools (sdk-tools.d.ts), numbers and flags also as strings", () => {
    // Field names from Claude Code's sdk-tools.d.ts: FileReadInput, GrepInput, GlobInput,
    // FileEditInput, FileWriteInput, BashInput. Each input sets every field at once.
    const inputs: Record<string, Record<string, unknown>> = {
      Read: { file_path: 'a.pdf', offset: 1, limit: 2, pages: '1-5', allow_large: false },
      Grep: {
        pattern: 'x',
        path: 'src',
        glob: '*.ts',
        output_mode: 'content',
        '-B': 1,
        '-A': 1,
        '-C': 1,
        context: 1,
        '-n': true,
        '-i': true,
        '-o': true,
        type: 'ts',
        head_limit: 5,
        offset: 1,
        multiline: false,
      },
      Glob: { pattern: '*.ts', path: 'src' },
      Edit: { file_path: 'a', old_string: 'x', new_string: 'y', replace_all: true },
      Write: { file_path: 'a', content: 'x' },
      Bash: {
        command: 'ls',
        timeout: 1000,
        description: 'List',
        run_in_background: false,
        dangerouslyDisableSandbox: false,
      },
    };
    for (const [name, input] of Object.entries(inputs)) {
      expect([name, getToolDefinition(name)!.inputSchema.safeParse(input).success]).toEqual([name, true]);
    }
    const parse = (name: string, input: unknown) => getToolDefinition(name)!.inputSchema.safeParse(input);
    expect(parse('Read', { file_path: 'a', offset: '2', limit: ' 3 ' }).data).toEqual({
      file_path: 'a',
      offset: 2,
      limit: 3,
    });
    expect(parse('Read', { file_path: 'a', limit: '2.0' }).data).toEqual({ file_path: 'a', limit: 2 });
    expect(parse('Grep', { pattern: 'x', '-A': '1', '-o': 'true', head_limit: '0' }).data).toEqual({
      pattern: 'x',
      '-A': 1,
      '-o': true,
      head_limit: 0,
    });
    expect(parse('Bash', { command: 'ls', timeout: '5000', run_in_background: 'false' }).data).toEqual({
      command: 'ls',
      timeout: 5000,
      run_in_background: false,
    });
    expect(parse('Edit', { file_path: 'a', old_string: 'x', new_string: 'y', replace_all: 'true' }).data).toMatchObject(
      {
        replace_all: true,
      },
    );
    for (const bad of ['abc', '1.5', '', '1e3', '0x10'])
      expect([bad, parse('Read', { file_path: 'a', limit: bad }).success]).toEqual([bad, false]);
    expect(parse('Read', { file_path: 'a.pdf', pages: '0' }).success).toBe(false);
    expect(parse('Read', { file_path: 'a.pdf', pages: '1-21' }).success).toBe(false);
    expect(parse('Read', { file_path: 'a.pdf', pages: '3-2' }).success).toBe(false);
    expect(parse('Bash', { command: 'ls', run_in_background: true }).success).toBe(false);
    expect(parse('Bash', { command: 'ls', dangerouslyDisableSandbox: true }).success).toBe(false);
  });

  it('classifies a coerced input as safe, and as unsafe for workflows from before coercion (legacyInputs)', () => {
    const classify = (name: string, input: unknown, legacyInputs: boolean) =>
      classifyToolUse(getToolDefinition(name), input, { legacyInputs }).concurrencySafe;
    for (const [name, input] of [
      ['Read', { file_path: 'a', limit: '3' }],
      ['Read', { file_path: 'a.pdf', pages: '1' }],
      ['Grep', { pattern: 'x', '-o': true }],
      ['Grep', { pattern: 'x', '-n': 'true' }],
      ['Bash', { command: 'ls', timeout: '5000' }],
    ] as const) {
      expect([name, input, classify(name, input, false)]).toEqual([name, input, true]);
      expect([name, input, classify(name, input, true)]).toEqual([name, input, false]);
    }
    expect(classify('Read', { file_path: 'a', limit: 3 }, true)).toBe(true);
    expect(classify('Grep', { pattern: 'x', '-n': true, head_limit: 2 }, true)).toBe(true);
  });

  it('classifies concurrency and read-only-ness', () => {
    const classify = (name: string, input: unknown) => classifyToolUse(getToolDefinition(name), input);
    const both = { concurrencySafe: true, readOnly: true };
    const neither = { concurrencySafe: false, readOnly: false };
    expect(classify('Read', { file_path: 'a' })).toEqual(both);
    expect(classify('Glob', { pattern: '*' })).toEqual(both);
    expect(classify('Grep', { pattern: 'x' })).toEqual(both);
    expect(classify('Write', { file_path: 'a', content: '' })).toEqual(neither);
    expect(classify('Edit', { file_path: 'a', old_string: 'a', new_string: 'b' })).toEqual(neither);
    expect(classify('MultiEdit', { file_path: 'a', edits: [{ old_string: 'a', new_string: 'b' }] })).toEqual(neither);
    expect(classify('Bash', { command: 'git status' })).toEqual(both);
    expect(classify('Bash', { command: 'rm -rf x' })).toEqual(neither);
    expect(classify('Read', { file_path: 3 })).toEqual(neither);
  });
});

describe('isReadOnlyBashCommand', () => {
  it.each([
    'ls',
    'ls -la src',
    'cat package.json',
    'head -n 20 README.md',
    'tail -f log.txt',
    'wc -l src/index.ts',
    'pwd',
    'echo hello world',
    'echo "a;b && c > d"',
    'sleep 3 && cat config.yml',
    'ls; pwd',
    'git status || true',
    "grep -rn 'foo|bar' src",
    'rg -n "TODO" src',
    "find . -name '*.ts' -type f",
    'git status',
    'git log --oneline -n 5',
    'git diff HEAD~1 -- src',
    'git show HEAD:package.json',
    'git branch',
    'git branch -a',
    'cat a.txt | grep foo | wc -l',
    "grep 'x$' file",
    'ls # a comment; rm -rf /',
    // ANSI-C quoting is decoded: this prints "A".
    "echo $'\\x41'",
  ])('read-only: %s', (command) => {
    expect(isReadOnlyBashCommand(command)).toBe(true);
  });

  it.each([
    'rm -rf build',
    'ls; rm x',
    'ls && rm x',
    'ls || rm x',
    'ls & rm x',
    'ls\nrm x',
    'cat a | sh',
    'cat a | xargs rm',
    'echo hi > file',
    'echo hi >> file',
    'cat < file',
    'echo $(rm x)',
    'echo `rm x`',
    'echo "$(rm x)"',
    'echo $HOME',
    'echo ${X:=y}',
    'find . -delete',
    'find . -name x -exec rm {} ;',
    'find . -execdir rm {} +',
    'find . -fprint out',
    'find *',
    'rg --pre ./evil pattern',
    'rg --pre=sh x',
    'rg foo *',
    'git commit -m x',
    'git push',
    'git -c core.pager=sh log',
    'git -C /tmp status',
    'git branch new-branch',
    'git branch -D main',
    'git diff --output=out.txt',
    'git diff --ext-diff',
    'FOO=1 ls',
    '/bin/ls',
    '(ls)',
    'ls | ',
    '',
    '   ',
    "echo 'unterminated",
    'sed -i s/a/b/ file',
    'npm test',
  ])('not read-only: %j', (command) => {
    expect(isReadOnlyBashCommand(command)).toBe(false);
  });
});
