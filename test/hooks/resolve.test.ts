import { hookStdin, parseHooksSettings, resolveHooks } from '../../src/shared/hooks';
import type { SettingsLayer } from '../../src/shared/settings-trust';

const USER = '/home/me/.claude/settings.json';
const PROJECT = '/repo/.claude/settings.json';
const LOCAL = '/repo/.claude/settings.local.json';

function layer(source: SettingsLayer['source'], file: string, hooks: unknown): SettingsLayer {
  return { source, file, rules: {}, hooks: parseHooksSettings(hooks, file).hooks };
}
const command = (text: string) => ({ type: 'command', command: text });

describe('resolveHooks', () => {
  const layers = [
    layer('user', USER, {
      PreToolUse: [{ matcher: 'Bash', hooks: [command('~/guard.sh')] }],
      Notification: [{ hooks: [command('notify-send a'), command('notify-send b')] }],
    }),
    layer('project', PROJECT, {
      PreToolUse: [{ matcher: 'Bash', hooks: [command('./repo-guard.sh')] }],
      Stop: [{ hooks: [command('npm test'), { type: 'prompt', prompt: 'Done?' }] }],
      SessionStart: [{ hooks: [command('./setup.sh')] }],
    }),
    layer('local', LOCAL, { PostToolUse: [{ matcher: 'Write', hooks: [command('./fmt.sh')] }] }),
  ];

  it('merges every layer in order and adds the --stop-hook commands last', () => {
    const { config, ignored, notRun } = resolveHooks({ layers, stopHooks: ['./check.sh'] });
    expect(ignored).toEqual([]);
    expect(config).toEqual({
      PreToolUse: [
        { matcher: 'Bash', hooks: [{ command: '~/guard.sh', source: USER }] },
        { matcher: 'Bash', hooks: [{ command: './repo-guard.sh', source: PROJECT }] },
      ],
      Stop: [
        { hooks: [{ command: 'npm test', source: PROJECT }] },
        { hooks: [{ command: './check.sh', source: '--stop-hook' }] },
      ],
      PostToolUse: [{ matcher: 'Write', hooks: [{ command: './fmt.sh', source: LOCAL }] }],
    });
    expect(notRun).toEqual([
      `Notification (2 hooks in ${USER}): not run by durable-agent`,
      `Stop hook in ${PROJECT}: prompt hook "Done?" (hooks.Stop[0].hooks[1]): durable-agent runs only "command" hooks`,
      `SessionStart (1 hook in ${PROJECT}): not run by durable-agent`,
    ]);
  });

  it("in a restricted run (CI), ignores the workspace files' hooks and keeps the user's and --stop-hook", () => {
    const { config, ignored, notRun } = resolveHooks({ layers, restrictWorkspace: true, stopHooks: ['./check.sh'] });
    expect(config).toEqual({
      PreToolUse: [{ matcher: 'Bash', hooks: [{ command: '~/guard.sh', source: USER }] }],
      Stop: [{ hooks: [{ command: './check.sh', source: '--stop-hook' }] }],
    });
    expect(ignored).toEqual([
      expect.stringMatching(
        /^\/repo\/\.claude\/settings\.json hooks\.PreToolUse \(1 hook\): this run is restricted \(CI\), so a workspace file may not run commands nobody approved/,
      ),
      expect.stringContaining(`${PROJECT} hooks.Stop (2 hooks): this run is restricted (CI)`),
      expect.stringContaining(`${PROJECT} hooks.SessionStart (1 hook): this run is restricted (CI)`),
      expect.stringContaining(`${LOCAL} hooks.PostToolUse (1 hook): this run is restricted (CI)`),
    ]);
    expect(notRun).toEqual([`Notification (2 hooks in ${USER}): not run by durable-agent`]);
  });

  it('reports an event Claude Code does not know', () => {
    const odd = layer('user', USER, { BeforeLunch: [{ hooks: [command('true')] }] });
    expect(resolveHooks({ layers: [odd] }).notRun).toEqual([
      `BeforeLunch (1 hook in ${USER}): not a Claude Code hook event, not run`,
    ]);
  });

  it('with nothing configured, runs nothing', () => {
    expect(resolveHooks({ layers: [{ source: 'user', file: USER, rules: {} }] })).toEqual({
      config: {},
      ignored: [],
      notRun: [],
    });
  });
});

describe('hookStdin', () => {
  const session = { sessionId: 'wf-1/run-1', cwd: '/ws', permissionMode: 'default' };

  it("gives PreToolUse Claude Code's fields", () => {
    expect(
      hookStdin(session, { event: 'PreToolUse', toolName: 'Bash', toolInput: { command: 'ls' }, toolUseId: 'toolu_1' }),
    ).toEqual({
      session_id: 'wf-1/run-1',
      transcript_path: '',
      cwd: '/ws',
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_1',
    });
  });

  it('gives PostToolUse the tool response when it is known', () => {
    const facts = {
      event: 'PostToolUse',
      toolName: 'Write',
      toolInput: { file_path: '/ws/a' },
      toolUseId: 't',
    } as const;
    expect(hookStdin(session, facts)).not.toHaveProperty('tool_response');
    expect(hookStdin({ ...session, transcriptPath: '/t.jsonl' }, { ...facts, toolResponse: 'ok' })).toMatchObject({
      transcript_path: '/t.jsonl',
      hook_event_name: 'PostToolUse',
      tool_response: 'ok',
      tool_use_id: 't',
    });
  });

  it('gives Stop stop_hook_active and the last message', () => {
    expect(hookStdin(session, { event: 'Stop', stopHookActive: true, lastAssistantMessage: 'Done.' })).toEqual({
      session_id: 'wf-1/run-1',
      transcript_path: '',
      cwd: '/ws',
      permission_mode: 'default',
      hook_event_name: 'Stop',
      stop_hook_active: true,
      last_assistant_message: 'Done.',
    });
  });
});
