/**
 * The parity suite's scenarios: one row each. A scenario is a scripted session, the same for
 * Claude Code and for durable-agent: each turn the model calls the listed tools, then it answers
 * with a final text. What is compared is chosen by `compare` (see run.ts):
 *
 * - `tool-results` (default): every tool_result the next request carries, is_error and content;
 * - `result-object`: the `--output-format json` result object's fields;
 * - `event-types`: the `--output-format stream-json` event type sequence.
 *
 * Inputs may say `{ws}` for the workspace's absolute path, `{port}` for a TCP port on 127.0.0.1
 * that accepts connections (the runner listens on it). Each side runs in a fresh copy of
 * `files` (default: {@link FILES}). To add a scenario, add a row; if the two sides differ on
 * purpose, list it in expectations.ts.
 */

export interface Call {
  tool: string;
  input: Record<string, unknown>;
  /** A precondition (e.g. the Read before an Edit): run, but its result is not compared. */
  setup?: boolean;
}

export interface Scenario {
  name: string;
  /** Each entry is one model reply's tool calls; one call per turn when built with {@link s}. */
  turns: Call[][];
  files?: Record<string, string>;
  compare?: 'tool-results' | 'result-object' | 'event-types';
  /** The final answer's text. */
  final?: string;
}

const numbered = (n: number, prefix = 'line'): string =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

/** The default workspace. */
export const FILES: Record<string, string> = {
  'a.txt': 'hello\nworld\n',
  'long.txt': numbered(60),
  'src/app.ts': "import { greet } from './util';\n\nconsole.log(greet('World'));\n// TODO: handle errors\n",
  'src/util.ts': 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n// todo: tests\n',
  'src/legacy.js': 'function hello() {\n  return "Hello";\n}\nmodule.exports = { hello };\n',
  'README.md': '# Demo\n\nSay hello to the world.\n',
  'notes/todo.md': '- [ ] Hello again\n- [x] done\n',
  'dup.txt': 'foo\nbar\nfoo\n',
  'empty.txt': '',
  'nonl.txt': 'no trailing newline',
  'crlf.txt': 'one\r\ntwo\r\n',
  'unicode.txt': 'café ☕\nnaïve 日本語\n',
  'wide.txt': `${'x'.repeat(2500)}\nshort\n`,
  'multi.txt': 'start {\n  inner\n} end\n',
  'nb.ipynb': JSON.stringify({
    cells: [{ cell_type: 'code', id: 'c1', metadata: {}, source: ['print(1)'], outputs: [], execution_count: null }],
    metadata: {},
    nbformat: 4,
    nbformat_minor: 5,
  }),
};

const call = (tool: string, input: Record<string, unknown>): Call => ({ tool, input });
/** A scenario whose calls come one per turn. */
const s = (name: string, ...calls: Call[]): Scenario => ({ name, turns: calls.map((c) => [c]) });
const read = (file_path: string, extra: Record<string, unknown> = {}): Call => call('Read', { file_path, ...extra });
/** The Read a change needs first, not compared: each Read scenario compares Read itself. */
const readFirst = (file_path: string): Call => ({ ...read(file_path), setup: true });
/** A file's content after a change, as the model could check it: through Bash, whose output both format alike. */
const cat = (file: string): Call => call('Bash', { command: `cat ${file}` });
const grep = (input: Record<string, unknown>): Call => call('Grep', input);
const bash = (command: string, extra: Record<string, unknown> = {}): Call => call('Bash', { command, ...extra });
const edit = (file_path: string, old_string: string, new_string: string, extra: Record<string, unknown> = {}): Call =>
  call('Edit', { file_path, old_string, new_string, ...extra });

export const SCENARIOS: Scenario[] = [
  // Read
  s('read-relative', read('a.txt')),
  s('read-absolute', read('{ws}/a.txt')),
  s('read-missing-file', read('nope.txt')),
  s('read-offset', read('long.txt', { offset: 55 })),
  s('read-limit', read('long.txt', { limit: 3 })),
  s('read-offset-limit', read('long.txt', { offset: 10, limit: 2 })),
  s('read-offset-past-end', read('long.txt', { offset: 1000 })),
  s('read-empty-file', read('empty.txt')),
  s('read-no-trailing-newline', read('nonl.txt')),
  s('read-crlf', read('crlf.txt')),
  s('read-unicode', read('unicode.txt')),
  s('read-long-line', read('wide.txt')),
  s('read-directory', read('src')),
  s('read-outside-workspace', read('/etc/hostname')),
  s('read-missing-file_path', call('Read', {})),
  s('read-offset-wrong-type', read('a.txt', { offset: 'ten' })),
  s('read-twice', read('a.txt'), read('a.txt')),
  // Write
  s('write-new-file', call('Write', { file_path: 'new.txt', content: 'fresh\n' }), cat('new.txt')),
  s('write-new-nested', call('Write', { file_path: 'deep/er/new.txt', content: 'x\n' }), cat('deep/er/new.txt')),
  s('write-absolute', call('Write', { file_path: '{ws}/abs.txt', content: 'abs\n' })),
  s('write-existing-unread', call('Write', { file_path: 'a.txt', content: 'over\n' })),
  s(
    'write-existing-after-read',
    readFirst('a.txt'),
    call('Write', { file_path: 'a.txt', content: 'over\n' }),
    cat('a.txt'),
  ),
  // Outside the workspace, but inside the scenario's own folder: nothing of the host is touched.
  s('write-outside-workspace', call('Write', { file_path: '{ws}/../outside.txt', content: 'x\n' })),
  s('write-missing-content', call('Write', { file_path: 'x.txt' })),
  s('write-content-wrong-type', call('Write', { file_path: 'x.txt', content: 42 })),
  s('write-empty-content', call('Write', { file_path: 'blank.txt', content: '' }), cat('blank.txt')),
  // Edit
  s('edit-unread', edit('a.txt', 'hello', 'bye')),
  s('edit-after-read', readFirst('a.txt'), edit('a.txt', 'hello', 'bye'), cat('a.txt')),
  s('edit-not-found', readFirst('a.txt'), edit('a.txt', 'absent', 'x')),
  s('edit-not-unique', readFirst('dup.txt'), edit('dup.txt', 'foo', 'baz')),
  s('edit-replace-all', readFirst('dup.txt'), edit('dup.txt', 'foo', 'baz', { replace_all: true }), cat('dup.txt')),
  s('edit-replace-all-false', readFirst('dup.txt'), edit('dup.txt', 'foo', 'baz', { replace_all: false })),
  s('edit-same-strings', readFirst('a.txt'), edit('a.txt', 'hello', 'hello')),
  s('edit-missing-file', edit('nope.txt', 'a', 'b')),
  s('edit-create-empty-old', edit('created.txt', '', 'new content\n'), cat('created.txt')),
  s('edit-multiline', readFirst('multi.txt'), edit('multi.txt', '{\n  inner\n}', '{ flat }'), cat('multi.txt')),
  s('edit-delete-text', readFirst('a.txt'), edit('a.txt', 'world\n', '')),
  s('edit-absolute', readFirst('{ws}/a.txt'), edit('{ws}/a.txt', 'world', 'there')),
  s('edit-outside-workspace', edit('/etc/hostname', 'parity: never in the file', 'x')),
  s('edit-missing-old_string', readFirst('a.txt'), call('Edit', { file_path: 'a.txt', new_string: 'x' })),
  s('edit-replace_all-wrong-type', readFirst('a.txt'), edit('a.txt', 'hello', 'x', { replace_all: 'yes' })),
  s('edit-crlf', readFirst('crlf.txt'), edit('crlf.txt', 'one', 'uno'), cat('crlf.txt')),
  // Glob
  s('glob-recursive-ts', call('Glob', { pattern: '**/*.ts' })),
  s('glob-top-level', call('Glob', { pattern: '*.txt' })),
  s('glob-braces', call('Glob', { pattern: '*.{md,js}' })),
  s('glob-no-match', call('Glob', { pattern: '**/*.py' })),
  s('glob-path', call('Glob', { pattern: '*.ts', path: 'src' })),
  s('glob-path-absolute', call('Glob', { pattern: '*.md', path: '{ws}/notes' })),
  s('glob-path-missing', call('Glob', { pattern: '*', path: 'nowhere' })),
  s('glob-outside-workspace', call('Glob', { pattern: 'host*', path: '/etc' })),
  s('glob-missing-pattern', call('Glob', {})),
  // Grep
  s('grep-default-mode', grep({ pattern: 'hello' })),
  s('grep-files-with-matches', grep({ pattern: 'Hello', output_mode: 'files_with_matches' })),
  s('grep-content', grep({ pattern: 'Hello', output_mode: 'content' })),
  s('grep-count', grep({ pattern: 'o', output_mode: 'count' })),
  s('grep-i', grep({ pattern: 'HELLO', '-i': true })),
  s('grep-i-content', grep({ pattern: 'todo', '-i': true, output_mode: 'content' })),
  s('grep-n-false', grep({ pattern: 'Hello', output_mode: 'content', '-n': false })),
  s('grep-A', grep({ pattern: 'greet', path: 'src/util.ts', output_mode: 'content', '-A': 1 })),
  s('grep-B', grep({ pattern: 'return', path: 'src/util.ts', output_mode: 'content', '-B': 1 })),
  s('grep-C', grep({ pattern: 'line 30$', path: 'long.txt', output_mode: 'content', '-C': 2 })),
  s('grep-context', grep({ pattern: 'line 30$', path: 'long.txt', output_mode: 'content', context: 1 })),
  s('grep-glob', grep({ pattern: 'hello', '-i': true, glob: '*.md' })),
  s('grep-type', grep({ pattern: 'Hello', type: 'js' })),
  s('grep-head-limit', grep({ pattern: 'line', path: 'long.txt', output_mode: 'content', head_limit: 3 })),
  s('grep-offset', grep({ pattern: 'line', path: 'long.txt', output_mode: 'content', head_limit: 2, offset: 5 })),
  s('grep-multiline', grep({ pattern: '\\{\\n  inner', multiline: true, output_mode: 'content' })),
  s('grep-o', grep({ pattern: 'H[a-z]+', '-o': true, output_mode: 'content', path: 'README.md' })),
  s('grep-no-match', grep({ pattern: 'zebra' })),
  s('grep-no-match-content', grep({ pattern: 'zebra', output_mode: 'content' })),
  s('grep-path-file', grep({ pattern: 'world', path: 'a.txt', output_mode: 'content' })),
  s('grep-path-missing', grep({ pattern: 'x', path: 'nowhere' })),
  s('grep-invalid-regex', grep({ pattern: '(unclosed' })),
  s('grep-missing-pattern', grep({ output_mode: 'content' })),
  s('grep-wrong-mode', grep({ pattern: 'x', output_mode: 'lines' })),
  s('grep-count-glob', grep({ pattern: 'line', output_mode: 'count', glob: 'long.*' })),
  s('grep-outside-workspace', grep({ pattern: 'root', path: '/etc/passwd' })),
  // Bash
  s('bash-echo', bash('echo hi')),
  s('bash-exit-1', bash('false')),
  s('bash-exit-42-with-output', bash('echo partial; exit 42')),
  s('bash-stderr', bash('echo oops >&2')),
  s('bash-stdout-and-stderr', bash('echo out; echo err >&2')),
  s('bash-stderr-and-fail', bash('echo bad >&2; exit 3')),
  s('bash-timeout', bash('sleep 5; echo late', { timeout: 1000 })),
  s('bash-long-output', bash('seq 1 40000')),
  s('bash-long-output-fail', bash('seq 1 40000; exit 1')),
  s('bash-empty-output', bash('true')),
  s('bash-pwd', bash('pwd')),
  s('bash-cat-file', bash('cat a.txt')),
  s('bash-description', bash('ls src', { description: 'List the sources' })),
  s('bash-writes-file', bash('echo made > made.txt && cat made.txt'), cat('made.txt')),
  s('bash-command-not-found', bash('nosuchcommand-parity')),
  s('bash-trailing-newlines', bash('printf "a\\n\\n\\n"')),
  s('bash-missing-command', call('Bash', {})),
  s('bash-timeout-wrong-type', bash('echo x', { timeout: 'soon' })),
  s('bash-timeout-too-large', bash('echo x', { timeout: 99_999_999 })),
  s('bash-run-in-background', bash('echo bg', { run_in_background: true })),
  s('bash-credentials-in-env', bash('printenv ANTHROPIC_API_KEY || echo unset')),
  s(
    'bash-network',
    bash(
      `python3 -c "import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')" 2>&1 | tail -n 1`,
    ),
  ),
  s('bash-read-outside-workspace', bash('cat /etc/hostname > /dev/null && echo readable')),
  // TodoWrite
  s(
    'todowrite-basic',
    call('TodoWrite', {
      todos: [
        { content: 'Write tests', status: 'pending', activeForm: 'Writing tests' },
        { content: 'Fix bug', status: 'in_progress', activeForm: 'Fixing bug' },
      ],
    }),
  ),
  s('todowrite-empty', call('TodoWrite', { todos: [] })),
  s('todowrite-bad-status', call('TodoWrite', { todos: [{ content: 'x', status: 'later', activeForm: 'x-ing' }] })),
  // NotebookEdit
  s(
    'notebookedit-replace',
    readFirst('nb.ipynb'),
    call('NotebookEdit', { notebook_path: 'nb.ipynb', cell_id: 'c1', new_source: 'print(2)' }),
  ),
  // Unknown tools, several calls in one reply
  s('unknown-tool', call('NoSuchTool', { x: 1 })),
  s(
    'multiedit',
    readFirst('a.txt'),
    call('MultiEdit', { file_path: 'a.txt', edits: [{ old_string: 'hello', new_string: 'bye' }] }),
  ),
  { name: 'two-calls-one-reply', turns: [[read('a.txt'), read('nope.txt')]] },
  { name: 'three-turns', turns: [[bash('echo first')], [bash('echo second')], [call('Glob', { pattern: '*.md' })]] },
  // Endings and output formats
  { name: 'json-text-only', turns: [], compare: 'result-object', final: 'All done.' },
  { name: 'json-after-tool', turns: [[read('a.txt')]], compare: 'result-object', final: 'Read it.' },
  { name: 'json-after-failed-tool', turns: [[read('nope.txt')]], compare: 'result-object', final: 'It is missing.' },
  { name: 'stream-text-only', turns: [], compare: 'event-types', final: 'All done.' },
  { name: 'stream-after-tool', turns: [[read('a.txt')]], compare: 'event-types', final: 'Read it.' },
  { name: 'stream-after-two-tools', turns: [[read('a.txt'), bash('echo x')]], compare: 'event-types', final: 'Done.' },
];
