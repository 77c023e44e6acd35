import {
  matcherKind,
  matchesHookMatcher,
  matchHooks,
  type HookCommand,
  type HooksConfig,
} from '../../src/shared/hooks';

const hook = (command: string, extra: Partial<HookCommand> = {}): HookCommand => ({
  command,
  source: 'test',
  ...extra,
});

describe("Claude Code's matcher rules", () => {
  it.each([undefined, '', '*'])('%p matches every tool', (matcher) => {
    expect(matcherKind(matcher)).toBe('all');
    expect(matchesHookMatcher(matcher, 'Bash')).toBe(true);
    expect(matchesHookMatcher(matcher, 'mcp__memory__create_entities')).toBe(true);
  });

  it('letters, digits, _ and | are exact names, not a regex', () => {
    expect(matcherKind('Bash')).toBe('exact');
    expect(matchesHookMatcher('Bash', 'Bash')).toBe(true);
    expect(matchesHookMatcher('Bash', 'BashOutput')).toBe(false);
    expect(matchesHookMatcher('Bash', 'bash')).toBe(false);
    expect(matchesHookMatcher('Edit|Write', 'Write')).toBe(true);
    expect(matchesHookMatcher('Edit|Write', 'NotebookEdit')).toBe(false);
    expect(matchesHookMatcher('Edit|Write', 'MultiEdit')).toBe(false);
    // The reference's own warning: this is an exact string and matches no tool.
    expect(matchesHookMatcher('mcp__memory', 'mcp__memory__create_entities')).toBe(false);
  });

  it('anything else is a JavaScript regex, tested unanchored', () => {
    expect(matcherKind('mcp__memory__.*')).toBe('regex');
    expect(matchesHookMatcher('mcp__memory__.*', 'mcp__memory__create_entities')).toBe(true);
    expect(matchesHookMatcher('mcp__memory__.*', 'mcp__github__search')).toBe(false);
    expect(matchesHookMatcher('^Notebook', 'NotebookEdit')).toBe(true);
    expect(matchesHookMatcher('^Notebook', 'MyNotebook')).toBe(false);
    expect(matchesHookMatcher('Edit.*', 'MultiEdit')).toBe(true);
    expect(matchesHookMatcher('^(Edit|Write)$', 'MultiEdit')).toBe(false);
    expect(matchesHookMatcher('mcp__(', 'mcp__x')).toBe(false);
  });
});

describe('matchHooks', () => {
  const config: HooksConfig = {
    PreToolUse: [
      { matcher: 'Bash', hooks: [hook('./guard.sh'), hook('./log.sh')] },
      { matcher: 'Edit|Write', hooks: [hook('./lint.sh')] },
      { hooks: [hook('./log.sh', { timeoutSec: 5, source: 'other' }), hook('./all.sh')] },
    ],
    Stop: [{ matcher: 'Ignored', hooks: [hook('npm test')] }, { hooks: [hook('npm test'), hook('./done.sh')] }],
  };

  it('runs the groups whose matcher selects the tool, each command once', () => {
    expect(matchHooks(config, 'PreToolUse', 'Bash').map((h) => h.command)).toEqual([
      './guard.sh',
      './log.sh',
      './all.sh',
    ]);
    expect(matchHooks(config, 'PreToolUse', 'Write').map((h) => h.command)).toEqual([
      './lint.sh',
      './log.sh',
      './all.sh',
    ]);
    expect(matchHooks(config, 'PreToolUse', 'Read').map((h) => h.command)).toEqual(['./log.sh', './all.sh']);
  });

  it('keeps the first of identical commands', () => {
    expect(matchHooks(config, 'PreToolUse', 'Bash')[1]).toEqual(hook('./log.sh'));
  });

  it('ignores the matcher on Stop, which has none', () => {
    expect(matchHooks(config, 'Stop').map((h) => h.command)).toEqual(['npm test', './done.sh']);
  });

  it('without a tool name, a tool event runs only the match-all groups', () => {
    expect(matchHooks(config, 'PreToolUse').map((h) => h.command)).toEqual(['./log.sh', './all.sh']);
    expect(matchHooks(config, 'PostToolUse', 'Bash')).toEqual([]);
  });

  describe('if conditions (permission rule syntax)', () => {
    const guarded: HooksConfig = {
      PreToolUse: [
        {
          hooks: [
            hook('./git-guard.sh', { if: 'Bash(git *)' }),
            hook('./ts-lint.sh', { if: 'Edit(*.ts)' }),
            hook('./always.sh'),
          ],
        },
      ],
      Stop: [{ hooks: [hook('./never.sh', { if: 'Bash' })] }],
    };
    const call = (input: unknown) => ({ input, workspace: '/ws' });
    const names = (toolName: string, input: unknown) =>
      matchHooks(guarded, 'PreToolUse', toolName, call(input)).map((h) => h.command);

    it('runs a hook only for calls its rule matches, any subcommand counting', () => {
      expect(names('Bash', { command: 'git push' })).toEqual(['./git-guard.sh', './always.sh']);
      expect(names('Bash', { command: 'npm test && git push' })).toEqual(['./git-guard.sh', './always.sh']);
      expect(names('Bash', { command: 'npm test' })).toEqual(['./always.sh']);
      expect(names('Edit', { file_path: '/ws/src/a.ts', old_string: 'a', new_string: 'b' })).toEqual([
        './ts-lint.sh',
        './always.sh',
      ]);
      expect(names('Write', { file_path: '/ws/src/a.ts', content: '' })).toEqual(['./ts-lint.sh', './always.sh']);
      expect(names('Edit', { file_path: '/ws/README.md', old_string: 'a', new_string: 'b' })).toEqual(['./always.sh']);
      expect(names('Read', { file_path: '/ws/src/a.ts' })).toEqual(['./always.sh']);
    });

    it('keeps conditional hooks when the call is not given, and never runs them on Stop', () => {
      expect(matchHooks(guarded, 'PreToolUse', 'Bash').map((h) => h.command)).toEqual([
        './git-guard.sh',
        './ts-lint.sh',
        './always.sh',
      ]);
      expect(matchHooks(guarded, 'Stop')).toEqual([]);
    });
  });
});
