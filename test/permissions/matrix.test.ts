import {
  decidePermission,
  type PermissionContext,
  type PermissionMode,
  type PermissionRules,
} from '../../src/shared/permissions';

/**
 * The permission matrix: mode × rule set × tool call → behavior. Each row may also name a piece
 * of the reason (the model reads it) or the rule that decided.
 */

const WS = '/ws';
const HOME = '/home/u';

type Behavior = 'allow' | 'ask' | 'deny';
type Rules = Partial<PermissionRules>;
interface Row {
  mode: PermissionMode;
  rules: Rules;
  tool: string;
  input: unknown;
  expected: Behavior;
  reason?: string;
  rule?: string;
  homeDir?: string | null;
}

const bash = (command: string) => ({ command });
const file = (file_path: string) => ({ file_path, old_string: 'a', new_string: 'b' });
const read = (file_path: string) => ({ file_path });
const write = (file_path: string) => ({ file_path, content: 'x' });
const search = (path?: string) => (path === undefined ? { pattern: 'x' } : { pattern: 'x', path });

const NONE: Rules = {};
const NPM_TEST: Rules = { allow: ['Bash(npm test:*)'] };
const DENY_RM: Rules = { deny: ['Bash(rm:*)'] };
const SECRETS: Rules = { deny: ['Read(./secrets/**)'] };
const SRC_EDITS: Rules = { allow: ['Edit(src/**)'] };

function row(
  mode: PermissionMode,
  rules: Rules,
  tool: string,
  input: unknown,
  expected: Behavior,
  extra: Partial<Pick<Row, 'reason' | 'rule' | 'homeDir'>> = {},
): Row {
  return { mode, rules, tool, input, expected, ...extra };
}

const ROWS: Row[] = [
  // --- Bash allow rules: prefix, exact, wildcard ---------------------------------------------
  row('default', NPM_TEST, 'Bash', bash('npm test'), 'allow', { rule: 'Bash(npm test:*)' }),
  row('default', NPM_TEST, 'Bash', bash('npm test -- --watch'), 'allow', {
    reason: 'Allowed by rule Bash(npm test:*) in permissions.allow',
  }),
  row('default', NPM_TEST, 'Bash', bash('npm  test   --ci'), 'allow'),
  row('default', NPM_TEST, 'Bash', bash('npm testing'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm run test'), 'ask'),
  row('default', { allow: ['Bash(npm test)'] }, 'Bash', bash('npm test'), 'allow'),
  row('default', { allow: ['Bash(npm test)'] }, 'Bash', bash('npm test --ci'), 'ask'),
  row('default', { allow: ['Bash(git commit *)'] }, 'Bash', bash('git commit -m "fix: thing"'), 'allow'),
  row('default', { allow: ['Bash(git commit *)'] }, 'Bash', bash('git commit'), 'allow'),
  row('default', { allow: ['Bash(git commit *)'] }, 'Bash', bash('git commitx'), 'ask'),
  row('default', { allow: ['Bash(ls *)'] }, 'Bash', bash('lsof -i'), 'ask'),
  row('default', { allow: ['Bash(ls*)'] }, 'Bash', bash('lsof -i'), 'allow'),
  row('default', { allow: ['Bash(git * main)'] }, 'Bash', bash('git push origin main'), 'allow'),
  row('default', { allow: ['Bash(git * main)'] }, 'Bash', bash('git push origin dev'), 'ask'),
  row('default', { allow: ['Bash'] }, 'Bash', bash('npm test && rm -rf /'), 'allow', { rule: 'Bash' }),
  row('default', { allow: ['Bash(*)'] }, 'Bash', bash('echo $(whoami)'), 'allow'),

  // --- Compound commands: every part must be allowed on its own --------------------------------
  row('default', NPM_TEST, 'Bash', bash('npm test && rm -rf /'), 'ask', {
    reason: '"rm -rf /" (one part of the command)',
  }),
  row('default', NPM_TEST, 'Bash', bash('npm test; curl x | sh'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test || rm x'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test | sh'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test |& tee log'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test\nrm -rf /'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test & rm -rf /'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test && git status'), 'allow', { reason: '"git status": read-only' }),
  row('default', NPM_TEST, 'Bash', bash('npm test && npm test -- --ci'), 'allow'),
  row('default', { allow: ['Bash(npm test:*)', 'Bash(rm:*)'] }, 'Bash', bash('npm test && rm -rf build'), 'allow'),
  row('default', { allow: ['Bash(npm test && npm run lint)'] }, 'Bash', bash('npm test && npm run lint'), 'allow'),
  row('default', NPM_TEST, 'Bash', bash('npm test # && rm -rf /'), 'allow'),
  row('default', { allow: ['Bash(git commit *)'] }, 'Bash', bash('git commit -m x && git push'), 'ask'),
  row('dontAsk', NPM_TEST, 'Bash', bash('npm test && rm -rf /'), 'deny', {
    reason: 'not allowed by any rule and the mode is dontAsk',
  }),

  // --- Substitutions and unparseable input are never approved by a command rule ---------------
  row('default', NPM_TEST, 'Bash', bash('npm test $(rm -rf /)'), 'ask', {
    reason: 'never approve command substitution',
  }),
  row('default', NPM_TEST, 'Bash', bash('npm test `rm -rf /`'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test "$(curl evil)"'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test <(curl x)'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('(npm test)'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test "unterminated'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('if true; then npm test; fi'), 'ask'),
  row('default', { allow: ['Bash(echo $(date))'] }, 'Bash', bash('echo $(date)'), 'ask'),

  // --- Redirections to files need an exact rule ---------------------------------------------
  row('default', NPM_TEST, 'Bash', bash('npm test > out.txt'), 'ask', { reason: 'redirection to a file' }),
  row('default', NPM_TEST, 'Bash', bash('npm test >> log.txt'), 'ask'),
  row('default', NPM_TEST, 'Bash', bash('npm test 2>&1'), 'allow'),
  row('default', NPM_TEST, 'Bash', bash('npm test > /dev/null 2>&1'), 'allow'),
  row('default', { allow: ['Bash(npm test > out.txt)'] }, 'Bash', bash('npm test > out.txt'), 'allow'),
  row('default', { allow: ['Bash(npm test)'] }, 'Bash', bash('npm test 2>&1'), 'allow'),

  // --- Deny rules: any part matches, in every mode -------------------------------------------
  row('default', DENY_RM, 'Bash', bash('ls && rm x'), 'deny', {
    reason: 'Denied by rule Bash(rm:*) in permissions.deny',
    rule: 'Bash(rm:*)',
  }),
  row('bypassPermissions', DENY_RM, 'Bash', bash('rm -rf x'), 'deny'),
  row('bypassPermissions', { ...DENY_RM, allow: ['Bash'] }, 'Bash', bash('rm -rf x'), 'deny'),
  row('dontAsk', { deny: ['Bash(rm:*)'], allow: ['Bash(rm:*)'] }, 'Bash', bash('rm x'), 'deny'),
  row('default', DENY_RM, 'Bash', bash('echo $(rm -rf x)'), 'deny'),
  row('default', DENY_RM, 'Bash', bash('sudo rm -rf /'), 'deny'),
  row('default', DENY_RM, 'Bash', bash('timeout 5 rm -rf x'), 'deny'),
  row('default', DENY_RM, 'Bash', bash('FOO=1 rm x'), 'deny'),
  row('default', DENY_RM, 'Bash', bash('bash -c "rm -rf x"'), 'deny'),
  row('default', DENY_RM, 'Bash', bash('find . -name "*.o" | xargs rm'), 'deny'),
  row('default', DENY_RM, 'Bash', bash('if true; then rm x; fi'), 'deny'),
  row('default', DENY_RM, 'Bash', bash('rmdir build'), 'ask'),
  row('default', DENY_RM, 'Bash', bash('git status'), 'allow'),
  row('acceptEdits', { deny: ['Bash(git push:*)'] }, 'Bash', bash('git add . && git push --force'), 'deny'),
  row('plan', DENY_RM, 'Bash', bash('rm x'), 'deny', { reason: 'permissions.deny' }),
  row('default', { deny: ['Bash(*--force*)'] }, 'Bash', bash('git push --force origin main'), 'deny'),

  // --- Ask rules ------------------------------------------------------------------------------
  row('default', { allow: ['Bash(git:*)'], ask: ['Bash(git push:*)'] }, 'Bash', bash('git push'), 'ask', {
    rule: 'Bash(git push:*)',
  }),
  row('default', { allow: ['Bash(git:*)'], ask: ['Bash(git push:*)'] }, 'Bash', bash('git pull'), 'allow'),
  row('default', { ask: ['Bash(git push:*)'] }, 'Bash', bash('git status && git push'), 'ask'),
  row('bypassPermissions', { ask: ['Bash(git push:*)'] }, 'Bash', bash('git push'), 'ask'),
  row('dontAsk', { allow: ['Bash(git:*)'], ask: ['Bash(git push:*)'] }, 'Bash', bash('git push'), 'deny', {
    reason: 'permissions.ask',
  }),
  row('acceptEdits', { ask: ['Edit(package.json)'] }, 'Edit', file('package.json'), 'ask'),
  row('dontAsk', { ask: ['Edit'] }, 'Edit', file('src/a.ts'), 'deny'),

  // --- Bash mode defaults ---------------------------------------------------------------------
  row('default', NONE, 'Bash', bash('git status'), 'allow'),
  row('default', NONE, 'Bash', bash('cat a.txt | grep foo | wc -l'), 'allow'),
  row('default', NONE, 'Bash', bash('rm -rf build'), 'ask'),
  row('acceptEdits', NONE, 'Bash', bash('npm install'), 'ask'),
  row('acceptEdits', NONE, 'Bash', bash('ls src'), 'allow'),
  row('plan', NONE, 'Bash', bash('ls -la'), 'allow'),
  row('plan', NONE, 'Bash', bash('npm test'), 'deny', { reason: 'plan mode is read-only' }),
  row('plan', NPM_TEST, 'Bash', bash('npm test'), 'deny', { reason: 'plan mode is read-only' }),
  row('dontAsk', NONE, 'Bash', bash('cat README.md'), 'allow'),
  row('dontAsk', NONE, 'Bash', bash('npm test'), 'deny', { reason: 'Bash(npm test:*)' }),
  row('dontAsk', NPM_TEST, 'Bash', bash('npm test'), 'allow'),
  row('bypassPermissions', NONE, 'Bash', bash('rm -rf /'), 'allow'),
  row('bypassPermissions', NONE, 'Bash', bash('echo $(whoami)'), 'allow'),

  // --- Read, Glob, Grep and Read(...) path rules ---------------------------------------------
  row('default', NONE, 'Read', read('src/a.ts'), 'allow'),
  row('default', NONE, 'Read', read('/ws/src/a.ts'), 'allow'),
  row('default', NONE, 'Read', read('/etc/passwd'), 'ask', { reason: 'Read(//etc/passwd)' }),
  row('default', NONE, 'Read', read('../outside.txt'), 'ask'),
  row('default', NONE, 'Read', read('src/../../etc/passwd'), 'ask'),
  row('default', SECRETS, 'Read', read('secrets/key.pem'), 'deny', { rule: 'Read(./secrets/**)' }),
  row('default', SECRETS, 'Read', read('/ws/secrets/deep/x'), 'deny'),
  row('default', SECRETS, 'Read', read('src/../secrets/key'), 'deny'),
  row('default', SECRETS, 'Read', read('./src/./../secrets//key'), 'deny'),
  row('default', SECRETS, 'Read', read('secretsx/a'), 'allow'),
  row('default', SECRETS, 'Grep', search('secrets'), 'deny'),
  row('default', SECRETS, 'Glob', search('secrets/sub'), 'deny'),
  row('default', SECRETS, 'Glob', search(), 'allow'),
  row('default', { deny: ['Read(secrets)'] }, 'Read', read('secrets/nested/key'), 'deny'),
  row('default', { deny: ['Read(.env)'] }, 'Read', read('config/.env'), 'deny'),
  row('default', { deny: ['Read(./.env)'] }, 'Read', read('config/.env'), 'allow'),
  row('default', { deny: ['Read(./.env)'] }, 'Read', read('.env'), 'deny'),
  row('default', { deny: ['Read(*.pem)'] }, 'Read', read('a/b/c.pem'), 'deny'),
  row('default', { deny: ['Read(src/*.ts)'] }, 'Read', read('src/deep/a.ts'), 'allow'),
  row('default', { deny: ['Read(src/**/*.ts)'] }, 'Read', read('src/deep/a.ts'), 'deny'),
  row('default', { deny: ['Read(~/.ssh/**)'] }, 'Read', read('/home/u/.ssh/id_rsa'), 'deny'),
  row('default', { deny: ['Read(~/.ssh/**)'] }, 'Read', read('/home/u/.ssh/id_rsa'), 'ask', {
    homeDir: null,
    reason: 'home directory is unknown',
  }),
  row('default', { deny: ['Read(~/.ssh/**)'] }, 'Read', read('src/a.ts'), 'allow', { homeDir: null }),
  row('default', { deny: ['Read(~/x)'] }, 'Read', read('~/x'), 'allow'),
  row('bypassPermissions', { deny: ['Read(//etc/**)'] }, 'Read', read('/etc/passwd'), 'deny'),
  row('default', { allow: ['Read(//etc/hosts)'] }, 'Read', read('/etc/hosts'), 'allow'),
  row('default', { deny: ['Read(/etc/**)'] }, 'Read', read('/etc/passwd'), 'ask'),
  row('default', { deny: ['Read(/etc/**)'] }, 'Read', read('etc/passwd'), 'deny'),
  row('default', { deny: ['Read'] }, 'Grep', search(), 'deny', { rule: 'Read' }),
  row('default', { deny: ['Grep'] }, 'Grep', search(), 'deny'),
  row('default', { deny: ['Grep'] }, 'Read', read('a'), 'allow'),
  row('plan', NONE, 'Read', read('src/a.ts'), 'allow'),
  row('plan', NONE, 'Grep', search('src'), 'allow'),
  row('plan', NONE, 'Glob', search(), 'allow'),
  row('dontAsk', NONE, 'Read', read('src/a.ts'), 'allow'),
  row('dontAsk', NONE, 'Read', read('/etc/passwd'), 'deny', { reason: 'dontAsk' }),
  row('dontAsk', { allow: ['Read(~/docs/**)'] }, 'Read', read('/home/u/docs/a.md'), 'allow'),

  // --- Edit, MultiEdit, Write and Edit(...) path rules ---------------------------------------
  row('default', NONE, 'Edit', file('src/a.ts'), 'ask'),
  row('default', NONE, 'Write', write('new.txt'), 'ask'),
  row('acceptEdits', NONE, 'Edit', file('src/a.ts'), 'allow'),
  row('acceptEdits', NONE, 'MultiEdit', { file_path: 'src/a.ts', edits: [] }, 'allow'),
  row('acceptEdits', NONE, 'Write', write('/ws/docs/new.md'), 'allow'),
  row('acceptEdits', NONE, 'Write', write('/tmp/x'), 'ask', { reason: 'outside the workspace' }),
  row('acceptEdits', NONE, 'Edit', file('../x'), 'ask'),
  row('acceptEdits', NONE, 'Write', write('src/../../x'), 'ask'),
  row('acceptEdits', NONE, 'Write', write('/wsx/a'), 'ask'),
  row('acceptEdits', NONE, 'Edit', file('.git/config'), 'ask', { reason: 'protected directory .git/' }),
  row('acceptEdits', NONE, 'Write', write('.claude/settings.json'), 'ask'),
  row('acceptEdits', NONE, 'Write', write('.claude/commands/x.md'), 'allow'),
  row('acceptEdits', { allow: ['Edit(.claude/**)'] }, 'Write', write('.claude/settings.json'), 'allow'),
  // Issue 25: the names the sandbox keeps read-only for Bash, the same for the file tools.
  row('acceptEdits', NONE, 'Write', write('.mcp.json'), 'ask', { reason: '.mcp.json is a protected file' }),
  row('acceptEdits', NONE, 'Write', write('.gitmodules'), 'ask'),
  row('acceptEdits', NONE, 'Write', write('/ws/.bashrc'), 'ask'),
  row('acceptEdits', NONE, 'Write', write('.durable-agent/journal/x.json'), 'ask', {
    reason: 'protected directory .durable-agent/',
  }),
  row('acceptEdits', NONE, 'Write', write('docs/.mcp.json'), 'allow'),
  row('acceptEdits', { allow: ['Edit(.mcp.json)'] }, 'Write', write('.mcp.json'), 'allow'),
  row('default', SRC_EDITS, 'Write', write('src/new/file.ts'), 'allow', { rule: 'Edit(src/**)' }),
  row('default', SRC_EDITS, 'Edit', file('src/../package.json'), 'ask'),
  row('default', SRC_EDITS, 'MultiEdit', { file_path: 'lib/x.ts', edits: [] }, 'ask'),
  row('default', { allow: ['Edit(/src/**)'] }, 'Edit', file('src/a.ts'), 'allow'),
  row('default', { allow: ['Edit(/src/**)'] }, 'Edit', file('/src/a.ts'), 'ask'),
  row('default', { allow: ['Edit(//tmp/**)'] }, 'Write', write('/tmp/out.txt'), 'allow'),
  row('default', { allow: ['Write'] }, 'Write', write('a.txt'), 'allow'),
  row('default', { allow: ['Write'] }, 'Edit', file('a.txt'), 'ask'),
  row('bypassPermissions', { deny: ['Edit(.env)'] }, 'Write', write('.env'), 'deny'),
  row('bypassPermissions', { deny: ['Edit(src/**)'], allow: ['Edit'] }, 'Edit', file('src/a.ts'), 'deny'),
  row('bypassPermissions', NONE, 'Write', write('/etc/x'), 'allow'),
  row('plan', { allow: ['Edit'] }, 'Edit', file('src/a.ts'), 'deny', { reason: 'plan mode is read-only' }),
  row('plan', NONE, 'Write', write('a.txt'), 'deny'),
  row('dontAsk', NONE, 'Edit', file('src/a.ts'), 'deny', { reason: 'Edit(./src/a.ts)' }),
  row('dontAsk', SRC_EDITS, 'Edit', file('src/a.ts'), 'allow'),
  row('default', { deny: ['Edit(~/**)'] }, 'Write', write('/home/u/.bashrc'), 'deny'),

  // --- TodoWrite, unknown tools, invalid rules and inputs ------------------------------------
  row('default', NONE, 'TodoWrite', { todos: [] }, 'allow'),
  row('plan', NONE, 'TodoWrite', { todos: [] }, 'allow'),
  row('dontAsk', NONE, 'TodoWrite', { todos: [] }, 'allow'),
  row('default', { deny: ['TodoWrite'] }, 'TodoWrite', { todos: [] }, 'deny'),
  row('default', NONE, 'Frobnicate', {}, 'allow'),
  row('dontAsk', NONE, 'Frobnicate', {}, 'allow'),
  row('default', { deny: ['Bash(rm:* -rf)'] }, 'Bash', bash('rm x'), 'ask', { reason: 'is invalid' }),
  row('bypassPermissions', { deny: ['Bash(rm:* -rf)'] }, 'Bash', bash('rm x'), 'ask'),
  row('default', { deny: ['Bash(rm:* -rf)'] }, 'Read', read('a'), 'allow'),
  row('default', NONE, 'Bash', {}, 'allow', { reason: 'will reject it' }),
  row('default', { deny: ['Bash'] }, 'Bash', {}, 'deny'),
  row('default', NONE, 'Read', { file_path: 3 }, 'allow'),
  row('dontAsk', NONE, 'Edit', 'not an object', 'allow'),
];

function context(r: Row): PermissionContext {
  return {
    mode: r.mode,
    rules: { allow: [], ask: [], deny: [], ...r.rules },
    workspace: WS,
    ...(r.homeDir === null ? {} : { homeDir: r.homeDir ?? HOME }),
  };
}

function label(r: Row): string {
  const rules = Object.entries(r.rules)
    .map(([list, values]) => `${list}=${JSON.stringify(values)}`)
    .join(' ');
  return `${r.mode} | ${rules || 'no rules'} | ${r.tool} ${JSON.stringify(r.input)} → ${r.expected}`;
}

describe('permission matrix', () => {
  it('has at least 80 rows', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(80);
  });

  it.each(ROWS.map((r) => [label(r), r] as const))('%s', (_label, r) => {
    const decision = decidePermission(r.tool, r.input, context(r));
    expect(decision.behavior).toBe(r.expected);
    expect(decision.reason.length).toBeGreaterThan(10);
    if (r.reason !== undefined) expect(decision.reason).toContain(r.reason);
    if (r.rule !== undefined) expect(decision.rule).toBe(r.rule);
  });
});

describe('decision details', () => {
  const ctx = (mode: PermissionMode, rules: Rules): PermissionContext => ({
    mode,
    rules: { allow: [], ask: [], deny: [], ...rules },
    workspace: WS,
    homeDir: HOME,
  });

  it('names the rule, the list and the matching part when a deny rule decides', () => {
    expect(decidePermission('Bash', bash('ls && rm -rf build'), ctx('default', DENY_RM))).toEqual({
      behavior: 'deny',
      reason: 'Denied by rule Bash(rm:*) in permissions.deny (it matches "rm -rf build").',
      rule: 'Bash(rm:*)',
    });
  });

  it('turns an ask into a deny in dontAsk and suggests the rule that would allow it', () => {
    const decision = decidePermission('Bash', bash('npm run build'), ctx('dontAsk', {}));
    expect(decision.behavior).toBe('deny');
    expect(decision.reason).toMatch(/^Denied: not allowed by any rule and the mode is dontAsk \(/);
    expect(decision.reason).toContain('Bash(npm run build:*)');
    expect(decision.reason).not.toContain('asks before');
  });

  it('says which rules allowed each part of a compound command', () => {
    const decision = decidePermission(
      'Bash',
      bash('npm test && npm run lint'),
      ctx('default', { allow: ['Bash(npm test:*)', 'Bash(npm run lint)'] }),
    );
    expect(decision.behavior).toBe('allow');
    expect(decision.rule).toBe('Bash(npm test:*), Bash(npm run lint)');
  });

  it('is deterministic and does not mutate its inputs', () => {
    const rules = { allow: ['Bash(npm test:*)'], ask: [], deny: ['Read(./secrets/**)'] };
    const frozen = JSON.stringify(rules);
    const first = decidePermission('Bash', bash('npm test && rm x'), ctx('default', rules));
    const second = decidePermission('Bash', bash('npm test && rm x'), ctx('default', rules));
    expect(second).toEqual(first);
    expect(JSON.stringify(rules)).toBe(frozen);
  });

  it('accepts a workspace with a trailing slash or dots', () => {
    const decision = decidePermission('Edit', file('src/a.ts'), { ...ctx('acceptEdits', {}), workspace: '/ws/./' });
    expect(decision.behavior).toBe('allow');
    expect(
      decidePermission('Edit', file('/ws/src/a.ts'), { ...ctx('acceptEdits', {}), workspace: '/ws/' }).behavior,
    ).toBe('allow');
  });
});
