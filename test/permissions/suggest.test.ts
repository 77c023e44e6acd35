import { decidePermission, parseRule, suggestAllowRule } from '../../src/shared/permissions';

describe('suggestAllowRule', () => {
  it.each([
    ['npm test', 'Bash(npm test:*)'],
    ['npm test -- --watch', 'Bash(npm test:*)'],
    ['npm run build', 'Bash(npm run build:*)'],
    ['npm run build -- --prod', 'Bash(npm run build:*)'],
    ['pnpm exec vitest run', 'Bash(pnpm exec vitest:*)'],
    ['uv run pytest -x', 'Bash(uv run pytest:*)'],
    ['git commit -m "fix: thing"', 'Bash(git commit:*)'],
    ['git status', 'Bash(git status:*)'],
    ['git', 'Bash(git:*)'],
    ['npx tsc --noEmit -p tsconfig.json', 'Bash(npx tsc:*)'],
    ['make test', 'Bash(make test:*)'],
    ['cargo build --release', 'Bash(cargo build:*)'],
    ['pytest tests/unit -k foo', 'Bash(pytest:*)'],
    ['ls -la', 'Bash(ls:*)'],
    ['./scripts/check.sh --fast', 'Bash(./scripts/check.sh:*)'],
    // Options before the subcommand: a prefix would cover every subcommand.
    ['git -C /tmp push', 'Bash(git -C /tmp push)'],
    // Programs where "any arguments" is far more than what was approved.
    ['rm -rf build', 'Bash(rm -rf build)'],
    ['python3 script.py', 'Bash(python3 script.py)'],
    ['curl https://example.com', 'Bash(curl https://example.com)'],
    ['sudo apt install x', 'Bash(sudo apt install x)'],
    // Readers only ask when they read outside the workspace: approve that read, not every read.
    ['cat ~/.aws/config', 'Bash(cat ~/.aws/config)'],
    ['grep -r TODO /srv/app', 'Bash(grep -r TODO /srv/app)'],
    ['FOO=1 npm test', 'Bash(FOO=1 npm test)'],
    ['"npm" test', 'Bash("npm" test)'],
    // Compound commands, redirections and substitutions: the exact command.
    ['npm test && npm run lint', 'Bash(npm test && npm run lint)'],
    ['npm test  |  tee log', 'Bash(npm test | tee log)'],
    ['npm test > out.txt', 'Bash(npm test > out.txt)'],
    ['echo $(date)', 'Bash(echo $\\(date\\))'],
    ['ls *.ts', 'Bash(ls:*)'],
    ['echo "a*b"', 'Bash(echo:*)'],
  ])('Bash %j → %s', (command, expected) => {
    expect(suggestAllowRule('Bash', { command })).toBe(expected);
  });

  it.each([
    ['Edit', { file_path: 'src/a.ts', old_string: 'a', new_string: 'b' }, 'Edit(./src/a.ts)'],
    ['Write', { file_path: '/ws/docs/new.md', content: '' }, 'Edit(./docs/new.md)'],
    ['MultiEdit', { file_path: '/ws/src/../lib/x.ts', edits: [] }, 'Edit(./lib/x.ts)'],
    ['Edit', { file_path: 'top.ts' }, 'Edit(./top.ts)'],
    ['Write', { file_path: '/tmp/out.txt', content: '' }, 'Edit(//tmp/out.txt)'],
    ['Edit', { file_path: '/ws/src/a (1)*.ts' }, 'Edit(./src/a \\(1\\)\\*.ts)'],
    ['Read', { file_path: '/etc/hosts' }, 'Read(//etc/hosts)'],
    ['Read', { file_path: 'src/a.ts' }, 'Read(./src/a.ts)'],
    ['Grep', { pattern: 'x', path: '/opt/lib' }, 'Read(//opt/lib/**)'],
    ['Glob', { pattern: '*', path: '.' }, 'Read(./**)'],
    ['Grep', { pattern: 'x' }, 'Grep'],
    ['TodoWrite', { todos: [] }, 'TodoWrite'],
    ['Frobnicate', {}, 'Frobnicate'],
    ['Bash', {}, 'Bash'],
    ['Edit', { file_path: 3 }, 'Edit'],
  ])('%s %j → %s', (tool, input, expected) => {
    expect(suggestAllowRule(tool, input, '/ws')).toBe(expected);
  });

  it('makes edit paths relative even without a workspace when they are relative', () => {
    expect(suggestAllowRule('Edit', { file_path: './src/../a/b.ts' })).toBe('Edit(./a/b.ts)');
    expect(suggestAllowRule('Edit', { file_path: '../x.ts' })).toBe('Edit(../x.ts)');
    expect(suggestAllowRule('Edit', { file_path: '/abs/x.ts' })).toBe('Edit(//abs/x.ts)');
  });

  // What the user approves "always" must then be allowed, and only that.
  it.each([
    ['Bash', { command: 'npm test' }],
    ['Bash', { command: 'npm test && npm run lint' }],
    ['Bash', { command: 'npm test > out.txt' }],
    ['Bash', { command: 'rm -rf "build dir"' }],
    ['Bash', { command: 'grep -n "a\\|b" src/x.ts | wc -l > count.txt' }],
    ['Bash', { command: 'echo "(paren) and * star" >> log.txt' }],
    ['Bash', { command: 'git -C /tmp push' }],
    ['Edit', { file_path: 'src/a (1)*.ts', old_string: 'a', new_string: 'b' }],
    ['Write', { file_path: '/tmp/out.txt', content: '' }],
    ['Read', { file_path: '/etc/hosts' }],
    ['Grep', { pattern: 'x', path: '/opt/lib' }],
  ])('the suggestion for %s %j parses and allows the call in dontAsk', (tool, input) => {
    const rule = suggestAllowRule(tool, input, '/ws');
    expect(parseRule(rule)).toMatchObject({ ok: true });
    const decision = decidePermission(tool, input, {
      mode: 'dontAsk',
      rules: { allow: [rule], ask: [], deny: [] },
      workspace: '/ws',
    });
    expect(decision).toMatchObject({ behavior: 'allow' });
  });

  it('a suggested prefix rule does not allow a compound command built on it', () => {
    const rule = suggestAllowRule('Bash', { command: 'npm test' });
    const decision = decidePermission(
      'Bash',
      { command: 'npm test && rm -rf /' },
      {
        mode: 'dontAsk',
        rules: { allow: [rule], ask: [], deny: [] },
        workspace: '/ws',
      },
    );
    expect(decision.behavior).toBe('deny');
  });

  it('a suggested edit rule covers only that file', () => {
    const rule = suggestAllowRule('Edit', { file_path: 'a.ts' }, '/ws');
    const decide = (file_path: string) =>
      decidePermission(
        'Edit',
        { file_path },
        { mode: 'dontAsk', rules: { allow: [rule], ask: [], deny: [] }, workspace: '/ws' },
      );
    expect(decide('a.ts').behavior).toBe('allow');
    expect(decide('sub/a.ts').behavior).toBe('deny');
  });
});
