import { mergeRules, parseRule, validateRules } from '../../src/shared/permissions';

describe('parseRule', () => {
  it.each([
    ['Bash', { kind: 'tool', tool: 'Bash' }],
    ['  Read  ', { kind: 'tool', tool: 'Read', text: 'Read' }],
    ['Bash(*)', { kind: 'tool', tool: 'Bash' }],
    ['Bash(npm test)', { kind: 'bash-exact', command: 'npm test' }],
    ['Bash(npm   test)', { kind: 'bash-exact', command: 'npm test' }],
    ['Bash(npm test:*)', { kind: 'bash-prefix', prefix: 'npm test' }],
    ['Bash(npm test :*)', { kind: 'bash-prefix', prefix: 'npm test' }],
    ['Bash(git commit *)', { kind: 'bash-wildcard', pattern: 'git commit *', optionalTail: true }],
    ['Bash(ls*)', { kind: 'bash-wildcard', pattern: 'ls*', optionalTail: false }],
    ['Bash(git * main)', { kind: 'bash-wildcard', pattern: 'git * main', optionalTail: false }],
    ['Bash(* --version)', { kind: 'bash-wildcard', optionalTail: false }],
    ['Bash(npm * test:*)', { kind: 'bash-wildcard', pattern: 'npm * test *', optionalTail: true }],
    ['Bash(echo \\*)', { kind: 'bash-exact', command: 'echo *' }],
    ['Bash(echo \\(a\\))', { kind: 'bash-exact', command: 'echo (a)' }],
    ['Bash(echo (a))', { kind: 'bash-exact', command: 'echo (a)' }],
    ['Bash(grep a\\|b)', { kind: 'bash-exact', command: 'grep a\\|b' }],
    [
      'Read(./secrets/**)',
      { kind: 'path', tool: 'Read', pattern: { anchor: 'workspace', up: 0, segments: ['secrets', '**'] } },
    ],
    ['Read(.env)', { kind: 'path', pattern: { anchor: 'workspace', up: 0, segments: ['**', '.env'] } }],
    ['Read(*.pem)', { kind: 'path', pattern: { anchor: 'workspace', up: 0, segments: ['**', '*.pem'] } }],
    ['Edit(src/**)', { kind: 'path', tool: 'Edit', pattern: { anchor: 'workspace', up: 0, segments: ['src', '**'] } }],
    ['Edit(/src/**/*.ts)', { kind: 'path', pattern: { anchor: 'workspace', up: 0, segments: ['src', '**', '*.ts'] } }],
    ['Read(//etc/**)', { kind: 'path', pattern: { anchor: 'root', up: 0, segments: ['etc', '**'] } }],
    ['Read(~/.ssh/**)', { kind: 'path', pattern: { anchor: 'home', up: 0, segments: ['.ssh', '**'] } }],
    ['Read(~)', { kind: 'path', pattern: { anchor: 'home', up: 0, segments: [] } }],
    ['Read(../shared/**)', { kind: 'path', pattern: { anchor: 'workspace', up: 1, segments: ['shared', '**'] } }],
    ['Read(./a/../b)', { kind: 'path', pattern: { anchor: 'workspace', up: 0, segments: ['b'] } }],
    ['Read(secrets/)', { kind: 'path', pattern: { anchor: 'workspace', up: 0, segments: ['**', 'secrets'] } }],
    ['WebFetch(domain:example.com)', { kind: 'other', tool: 'WebFetch', specifier: 'domain:example.com' }],
    ['mcp__github__create_issue', { kind: 'tool', tool: 'mcp__github__create_issue' }],
    ['TodoWrite', { kind: 'tool', tool: 'TodoWrite' }],
  ])('%s', (text, expected) => {
    const parsed = parseRule(text);
    expect(parsed).toMatchObject({ ok: true, rule: expected });
  });

  it.each([
    ['', /empty/, /Bash\(npm test:\*\)/],
    ['   ', /empty/, /"Read"/],
    ['Bash()', /specifier is empty/, /"Bash" alone/],
    ['Bash(  )', /specifier is empty/, /Bash\(npm test\)/],
    ['Read()', /specifier is empty/, /Read\(\.\/src\/\*\*\)/],
    ['Bash(:*)', /prefix before ":\*" is empty/, /"Bash"/],
    ['Bash(npm test', /"\(" is never closed/, /Bash\(\.\.\.\)/],
    ['Bash npm test)', /without "\("/, /Tool\(specifier\)/],
    ['Bash(ls) extra', /after the closing "\)"/, /nothing after/],
    ['Bash(ls)) ', /closes nothing/, /\\\)/],
    ['Bash(echo (a)', /never closed/, /\\\(/],
    ['Bash (ls)', /remove the space/, /"Bash\(\.\.\.\)"/],
    ['(ls)', /no tool name/, /Bash\(npm test\)/],
    ['Bash(git:* commit)', /only valid at the end/, /"Bash\(git \* commit\)"/],
    ['Bash(npm:*:*)', /only valid at the end/, /"Bash\(npm \*:\*\)"/],
    ['bash(ls)', /case-sensitive/, /"Bash"/],
    ['read', /case-sensitive/, /"Read"/],
    ['Reed(x)', /unknown tool "Reed"/, /did you mean "Read"/],
    ['Frobnicate', /unknown tool/, /The tools here are Bash, Read, Edit/],
    ['Bash!(x)', /not a tool name/, /optionally followed/],
    ['Write(src/**)', /Write rules take no specifier/, /"Edit\(src\/\*\*\)"/],
    ['MultiEdit(src/**)', /take no specifier/, /Edit, MultiEdit and Write/],
    ['Glob(src/**)', /take no specifier/, /"Read\(src\/\*\*\)"/],
    ['Grep(*.ts)', /take no specifier/, /Read, Glob and Grep/],
    ['TodoWrite(x)', /TodoWrite takes no specifier/, /just "TodoWrite"/],
    ['Read(~bob/x)', /only "~\/"/, /\/\/absolute\/path/],
    ['Read(src:*)', /Bash prefix syntax/, /"src\/\*\*"/],
    ['Read(**/../x)', /cannot follow "\*\*"/, /write the directory out/],
  ])('rejects %j', (text, what, fix) => {
    const parsed = parseRule(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toMatch(what);
    expect(parsed.error).toMatch(fix);
  });

  it('rejects a value that is not a string', () => {
    expect(parseRule(42 as unknown as string)).toEqual({ ok: false, error: expect.stringMatching(/must be a string/) });
  });
});

describe('validateRules', () => {
  it('accepts a typical settings file', () => {
    expect(
      validateRules({
        allow: ['Bash(npm test:*)', 'Bash(git diff:*)', 'Read', 'Edit(src/**)', 'WebFetch(domain:docs.rs)'],
        ask: ['Bash(git push:*)'],
        deny: ['Read(./.env)', 'Read(./secrets/**)', 'Bash(rm -rf *)', 'Edit(//etc/**)', 'Read(~/.ssh/**)'],
      }),
    ).toEqual([]);
  });

  it('reports every problem, each naming the list, the position and the rule', () => {
    const problems = validateRules({
      allow: ['Bash(npm test:*)', 'Bash()', 'Write(src/**)'],
      ask: ['bash(git push:*)'],
      deny: ['Bash(rm:* -rf)', 'Read(./.env'],
    });
    expect(problems).toHaveLength(5);
    expect(problems[0]).toMatch(/^permissions\.allow\[1\] "Bash\(\)": the specifier is empty/);
    expect(problems[1]).toMatch(/^permissions\.allow\[2\] "Write\(src\/\*\*\)": .*Edit\(src\/\*\*\)/);
    expect(problems[2]).toMatch(/^permissions\.ask\[0\] "bash\(git push:\*\)": .*case-sensitive/);
    expect(problems[3]).toMatch(/^permissions\.deny\[0\] "Bash\(rm:\* -rf\)": ":\*" is only valid at the end/);
    expect(problems[4]).toMatch(/^permissions\.deny\[1\] "Read\(\.\/\.env": unbalanced parentheses/);
  });

  it('reports entries that are not strings and lists that are not arrays', () => {
    const problems = validateRules({
      allow: ['Read', 7 as unknown as string],
      ask: 'Bash' as unknown as string[],
      deny: [],
    });
    expect(problems).toEqual([
      'permissions.allow[1] must be a string such as "Bash(npm test:*)", not a number',
      'permissions.ask must be an array of rule strings, e.g. ["Bash(npm test:*)"]',
    ]);
  });
});

describe('mergeRules', () => {
  it('concatenates in order and drops repeats', () => {
    expect(
      mergeRules(
        { allow: ['Read', 'Bash(npm test:*)'], deny: ['Read(./.env)'] },
        undefined,
        { allow: ['Bash(npm test:*)', 'Edit(src/**)'], ask: ['Bash(git push:*)'] },
        {},
      ),
    ).toEqual({
      allow: ['Read', 'Bash(npm test:*)', 'Edit(src/**)'],
      ask: ['Bash(git push:*)'],
      deny: ['Read(./.env)'],
    });
  });

  it('returns empty lists for no sources', () => {
    expect(mergeRules()).toEqual({ allow: [], ask: [], deny: [] });
  });
});
