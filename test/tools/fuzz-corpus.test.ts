import { lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { executeTool, type ToolContext } from '../../src/activities/tools/index';
import { TOOL_DEFINITIONS } from '../../src/shared/tools/index';
import { plainContext, tempWorkspace } from './support/session';

/**
 * A table-driven corpus of malformed tool inputs: for every tool and every field, wrong types,
 * missing values, NUL bytes, lone surrogates, huge strings and nested junk, plus whole-input
 * garbage. Each must come back as an `isError` result naming the offending field, and must change
 * nothing on disk. A second table feeds odd but valid Unicode through every tool.
 */

type Kind = 'path' | 'pattern' | 'text' | 'int' | 'bool' | 'enum' | 'edits';

/** A valid input per tool, and the kind of each field (dotted paths for MultiEdit's edits). */
const TOOLS: Record<string, { valid: Record<string, unknown>; fields: Record<string, Kind>; required: string[] }> = {
  Read: {
    valid: { file_path: 'a.txt' },
    fields: { file_path: 'path', offset: 'int', limit: 'int' },
    required: ['file_path'],
  },
  Write: {
    valid: { file_path: 'new.txt', content: 'x' },
    fields: { file_path: 'path', content: 'text' },
    required: ['file_path', 'content'],
  },
  Edit: {
    valid: { file_path: 'a.txt', old_string: 'x', new_string: 'y' },
    fields: { file_path: 'path', old_string: 'text', new_string: 'text', replace_all: 'bool' },
    required: ['file_path', 'old_string', 'new_string'],
  },
  MultiEdit: {
    valid: { file_path: 'a.txt', edits: [{ old_string: 'x', new_string: 'y' }] },
    fields: {
      file_path: 'path',
      edits: 'edits',
      'edits.0.old_string': 'text',
      'edits.0.new_string': 'text',
      'edits.0.replace_all': 'bool',
    },
    required: ['file_path', 'edits', 'edits.0.old_string', 'edits.0.new_string'],
  },
  Glob: { valid: { pattern: '*' }, fields: { pattern: 'pattern', path: 'path' }, required: ['pattern'] },
  Grep: {
    valid: { pattern: 'x' },
    fields: {
      pattern: 'pattern',
      path: 'path',
      glob: 'pattern',
      type: 'pattern',
      output_mode: 'enum',
      '-A': 'int',
      '-B': 'int',
      '-C': 'int',
      '-n': 'bool',
      '-i': 'bool',
      head_limit: 'int',
      offset: 'int',
      multiline: 'bool',
    },
    required: ['pattern'],
  },
  Bash: {
    valid: { command: 'true' },
    fields: { command: 'pattern', timeout: 'int', description: 'text' },
    required: ['command'],
  },
};

const MB = 1_000_000;
const ONE_MB = 'p'.repeat(MB + 1);
const TWENTY_MB = 't'.repeat(20 * MB);

function deeplyNested(depth: number): unknown {
  let value: unknown = { leaf: 'x' };
  for (let i = 0; i < depth; i++) value = { nested: value };
  return value;
}

const WRONG_TYPES: [string, unknown][] = [
  ['a number', 42],
  ['a boolean', true],
  ['null', null],
  ['an array', ['a']],
  ['an object', { value: 'a' }],
  ['a deeply nested object', deeplyNested(5000)],
];

/** Bad values for a field of each kind. */
function badValues(kind: Kind): [string, unknown][] {
  switch (kind) {
    case 'path':
    case 'pattern':
    case 'text': {
      const strings: [string, unknown][] = [
        ['NUL at the start', '\0a'],
        ['NUL in the middle', 'a\0b'],
        ['NUL at the end', 'a\0'],
        ['a lone high surrogate', 'a\uD800b'],
        ['a lone low surrogate', '\uDC00a'],
        ['a reversed surrogate pair', '\uDE00\uD83D'],
        ['a huge string', kind === 'text' ? TWENTY_MB : ONE_MB],
        ...WRONG_TYPES,
      ];
      return kind === 'text' ? strings : [['an empty string', ''], ...strings];
    }
    case 'int':
      return [
        ['a negative number', -1],
        ['a fraction', 1.5],
        ['a huge number', 1e21],
        ['NaN', Number.NaN],
        ['Infinity', Number.POSITIVE_INFINITY],
        // An integer written as a string ('10') is taken, as Claude Code takes it; these are not integers.
        ['a word', 'ten'],
        ['a fractional string', '1.5'],
        ['an empty string', ''],
        ...WRONG_TYPES.filter(([label]) => label !== 'a number'),
      ];
    case 'bool':
      // "true" and "false" are taken by the tools that take them from Claude Code's models.
      return [['the string "yes"', 'yes'], ['1', 1], ...WRONG_TYPES.filter(([label]) => label !== 'a boolean')];
    case 'enum':
      return [
        ['an unknown value', 'lines'],
        ['an empty string', ''],
        ['a number', 5],
        ['null', null],
      ];
    case 'edits':
      return [
        ['an empty list', []],
        ['an object instead of a list', { old_string: 'x', new_string: 'y' }],
        ['a list of strings', ['x']],
        ['a list with null', [null]],
        ['a list with a nested list', [[{ old_string: 'x', new_string: 'y' }]]],
        ['a huge list', Array.from({ length: 1001 }, () => ({ old_string: 'x', new_string: 'y' }))],
        ...WRONG_TYPES,
      ];
  }
}

function withField(input: Record<string, unknown>, field: string, value: unknown, remove = false): unknown {
  const copy = structuredClone(input) as Record<string, unknown>;
  const parts = field.split('.');
  let target: Record<string, unknown> = copy;
  for (const part of parts.slice(0, -1)) target = target[part] as Record<string, unknown>;
  const last = parts[parts.length - 1]!;
  if (remove) delete target[last];
  else target[last] = value;
  return copy;
}

/**
 * The parameters an InputValidationError names (dotted, `input` for the input as a whole): those
 * of its lines, or of the issues it passes on as JSON.
 */
function namedFields(content: string): string[] {
  const body = /^<tool_use_error>InputValidationError: ([\s\S]*)<\/tool_use_error>$/.exec(content)?.[1] ?? '';
  const dotted = (at: readonly unknown[]) => at.map(String).join('.') || 'input';
  if (body.startsWith('[')) {
    const issues = JSON.parse(body) as { path: unknown[]; keys?: string[] }[];
    return issues.flatMap((issue) =>
      issue.keys ? issue.keys.map((key) => dotted([...issue.path, key])) : [dotted(issue.path)],
    );
  }
  return [...body.matchAll(/`([^`]*)`/g)].map((match) => (match[1] ?? '').replace(/\[(\d+)\]/g, '.$1') || 'input');
}

/** [tool, label, input, field the message must name]. */
type Case = [string, string, unknown, string];

function corpus(): Case[] {
  const cases: Case[] = [];
  for (const [name, tool] of Object.entries(TOOLS)) {
    for (const [field, kind] of Object.entries(tool.fields)) {
      for (const [label, value] of badValues(kind)) {
        // Bash lowers a timeout above its maximum to the maximum, as Claude Code does (bash.test.ts).
        if (name === 'Bash' && field === 'timeout' && (label === 'a huge number' || label === 'Infinity')) continue;
        cases.push([name, `${field} is ${label}`, withField(tool.valid, field, value), field]);
      }
    }
    for (const field of tool.required)
      cases.push([name, `${field} is missing`, withField(tool.valid, field, undefined, true), field]);
    cases.push(
      [name, 'the input is null', null, 'input'],
      [name, 'the input is undefined', undefined, 'input'],
      [name, 'the input is a string', 'a.txt', 'input'],
      [name, 'the input is a number', 7, 'input'],
      [name, 'the input is an array of the valid input', [tool.valid], 'input'],
      [name, 'the input is deeply nested', deeplyNested(5000), 'nested'],
      [name, 'an extra field', { ...tool.valid, extra: 1 }, 'extra'],
      [name, 'an extra field with a huge value', { ...tool.valid, junk: TWENTY_MB }, 'junk'],
      [
        name,
        'a __proto__ key',
        JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(tool.valid).slice(1)}`),
        '__proto__',
      ],
      [name, 'a constructor key', { ...tool.valid, constructor: 'x' }, 'constructor'],
      // A name is shown with its invisible characters spelled out.
      [name, 'an extra field with NUL in its name', { ...tool.valid, 'a\0b': 1 }, 'a\\u{0}b'],
    );
  }
  cases.push([
    'MultiEdit',
    'an edit with an extra field',
    { file_path: 'a.txt', edits: [{ old_string: 'x', new_string: 'y', replace: true }] },
    'edits.0.replace',
  ]);
  cases.push([
    'MultiEdit',
    'a bad second edit',
    { file_path: 'a.txt', edits: [{ old_string: 'x', new_string: 'y' }, { old_string: 'y' }] },
    'edits.1.new_string',
  ]);
  return cases;
}

let root: string;
let workspace: string;
let ctx: ToolContext;

/** Every path under `dir` with its content (or '<dir>'), for before/after comparison. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true })) {
    const full = path.join(dir, entry);
    result[entry] = (await lstat(full)).isDirectory() ? '<dir>' : await readFile(full, 'utf8');
  }
  return result;
}

beforeAll(async () => {
  root = await tempWorkspace('tools-fuzz-');
  workspace = path.join(root, 'ws');
  await mkdir(workspace);
  await mkdir(path.join(root, 'outside'));
  await writeFile(path.join(root, 'outside', 'sentinel.txt'), 'untouched\n');
  await writeFile(path.join(workspace, 'a.txt'), 'x\n');
  ctx = plainContext(workspace);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('malformed input corpus', () => {
  const cases = corpus();

  it('covers every tool', () => {
    // TodoWrite, ScheduleWakeup, TaskStop, Agent and the Cron tools are answered by the workflow,
    // not executeTool (test/approvals, test/tools/schedule-wakeup, test/tools/cron and the recorded
    // histories cover their inputs).
    const runnable = TOOL_DEFINITIONS.map((tool) => tool.name).filter(
      (name) =>
        !['TodoWrite', 'ScheduleWakeup', 'TaskStop', 'Agent', 'CronCreate', 'CronList', 'CronDelete'].includes(name),
    );
    expect(new Set(cases.map(([name]) => name))).toEqual(new Set(runnable));
    expect(cases.length).toBeGreaterThan(400);
  });

  it.each(cases)('%s: %s', async (name, _label, input, field) => {
    const before = await snapshot(root);
    const result = await executeTool(name, input, ctx);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^<tool_use_error>InputValidationError: [\s\S]*<\/tool_use_error>$/);
    // The field, or a part of it (`edits.0` for a bad entry of `edits`).
    expect(namedFields(result.content).some((named) => named === field || named.startsWith(`${field}.`))).toBe(true);
    expect(result.content.length).toBeLessThan(2000);
    expect(result.fileStates).toBeUndefined();
    expect(await snapshot(root)).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('odd but valid Unicode goes through every tool and stays in the workspace', () => {
  const NAMES: [string, string][] = [
    ['an emoji', 'notes-😀/🚀 launch.md'],
    ['a right-to-left override', 'docs/report\u202Efdp.txt'],
    ['right-to-left script and marks', 'שלום/\u200Fקובץ.txt'],
    ['combining characters', 'cafe\u0301/e\u0301\u0301\u0301.txt'],
    ['a zero-width joiner sequence', 'family/👨‍👩‍👧.txt'],
    ['CJK and full-width punctuation', '资料/文件（一）.txt'],
  ];

  it.each(NAMES)('%s: %j', async (_label, file) => {
    const outsideBefore = await snapshot(path.join(root, 'outside'));
    const text = `first ${file}\nsecond line 😀\u0301\n`;
    const readState = {};
    const run = async (name: string, input: unknown) => {
      const outcome = await executeTool(name, input, { ...ctx, readState });
      for (const update of outcome.fileStates ?? []) Object.assign(readState, { [update.key]: update.state });
      return outcome;
    };
    expect(await run('Write', { file_path: file, content: text })).toMatchObject({ isError: false });
    expect(await readFile(path.join(workspace, file), 'utf8')).toBe(text);
    expect((await run('Read', { file_path: file })).content).toBe(
      `     1\tfirst ${file}\n     2\tsecond line 😀\u0301\n     3\t`,
    );
    expect(await run('Edit', { file_path: file, old_string: 'second', new_string: 'zweite 🚀' })).toMatchObject({
      isError: false,
    });
    expect(
      await run('MultiEdit', { file_path: file, edits: [{ old_string: 'zweite 🚀', new_string: 'zweite \u202E' }] }),
    ).toMatchObject({
      isError: false,
    });
    expect((await run('Glob', { pattern: `**/${path.basename(file)}` })).content).toBe(file);
    expect((await run('Grep', { pattern: 'zweite \u202E', output_mode: 'content' })).content).toBe(
      `${file}:2:zweite \u202E line 😀\u0301`,
    );
    expect((await run('Bash', { command: `cat "${file}"` })).content).toContain('zweite \u202E');
    expect(await snapshot(path.join(root, 'outside'))).toEqual(outsideBefore);
    await rm(path.join(workspace, file.split('/')[0]!), { recursive: true, force: true });
  });
});
