import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettingsLayers, parseSettings } from '../../src/activities/permission-settings';
import { HOOK_EVENTS, parseHooksSettings } from '../../src/shared/hooks';

const FILE = '/repo/.claude/settings.json';
const command = (text: string, extra: Record<string, unknown> = {}) => ({ type: 'command', command: text, ...extra });

describe('parseHooksSettings', () => {
  it("reads Claude Code's format, tagging each command with its file", () => {
    const { hooks, problems } = parseHooksSettings(
      {
        PreToolUse: [{ matcher: 'Bash', hooks: [command('./guard.sh', { timeout: 5 })] }],
        PostToolUse: [{ matcher: 'Edit|Write', hooks: [command('./lint.sh', { if: 'Edit(*.ts)' })] }],
        Stop: [{ hooks: [command('npm test')] }],
      },
      FILE,
    );
    expect(problems).toEqual([]);
    expect(hooks).toEqual({
      PreToolUse: [{ matcher: 'Bash', hooks: [{ command: './guard.sh', timeoutSec: 5, source: FILE }] }],
      PostToolUse: [{ matcher: 'Edit|Write', hooks: [{ command: './lint.sh', source: FILE, if: 'Edit(*.ts)' }] }],
      Stop: [{ hooks: [{ command: 'npm test', source: FILE }] }],
    });
  });

  it('loads every Claude Code event, so a shared settings file loads', () => {
    const raw = Object.fromEntries(HOOK_EVENTS.map((event) => [event, [{ hooks: [command(`echo ${event}`)] }]]));
    const { hooks, problems } = parseHooksSettings(raw, FILE);
    expect(Object.keys(hooks)).toEqual([...HOOK_EVENTS]);
    expect(problems).toEqual([]);
    for (const event of [
      'Notification',
      'SessionStart',
      'UserPromptSubmit',
      'PreCompact',
      'SubagentStop',
      'SessionEnd',
    ]) {
      expect(HOOK_EVENTS).toContain(event);
    }
  });

  it('accepts prompt, agent and http hooks but reports them as not run', () => {
    const { hooks, problems } = parseHooksSettings(
      {
        Stop: [
          {
            hooks: [
              { type: 'prompt', prompt: 'Evaluate if Claude should stop: $ARGUMENTS' },
              { type: 'agent', prompt: 'Verify that the tests pass' },
              { type: 'http', url: 'http://localhost:8080/hook' },
              command('./ok.sh'),
            ],
          },
        ],
      },
      FILE,
    );
    expect(hooks.Stop?.[0]?.hooks).toEqual([{ command: './ok.sh', source: FILE }]);
    expect(hooks.Stop?.[0]?.notes).toEqual([
      'prompt hook "Evaluate if Claude should stop: $ARGUMENTS" (hooks.Stop[0].hooks[0]): durable-agent runs only "command" hooks',
      'agent hook "Verify that the tests pass" (hooks.Stop[0].hooks[1]): durable-agent runs only "command" hooks',
      'http hook "http://localhost:8080/hook" (hooks.Stop[0].hooks[2]): durable-agent runs only "command" hooks',
    ]);
    expect(problems).toEqual(hooks.Stop?.[0]?.notes);
  });

  it('reports async and PowerShell hooks, a matcher on Stop, and if on Stop', () => {
    const { hooks, problems } = parseHooksSettings(
      {
        PostToolUse: [
          {
            matcher: 'Write',
            hooks: [command('./bg.sh', { async: true }), command('Write-Host x', { shell: 'powershell' })],
          },
        ],
        Stop: [{ matcher: 'Bash', hooks: [command('./a.sh'), command('./b.sh', { if: 'Bash(git *)' })] }],
      },
      FILE,
    );
    expect(hooks.PostToolUse?.[0]?.hooks).toEqual([]);
    expect(hooks.Stop?.[0]?.hooks).toEqual([{ command: './a.sh', source: FILE }]);
    expect(problems).toEqual([
      expect.stringContaining(
        'command hook "./bg.sh" (hooks.PostToolUse[0].hooks[0]): async hooks run in the background',
      ),
      expect.stringContaining(
        '(hooks.PostToolUse[0].hooks[1]): shell "powershell"; durable-agent runs hooks with bash only',
      ),
      expect.stringContaining('(hooks.Stop[0].hooks[1]): has "if", which Claude Code never runs on Stop'),
      expect.stringContaining('hooks.Stop[0].matcher "Bash": Stop has no matcher support, so the matcher is ignored'),
    ]);
  });

  it('keeps an event name Claude Code does not know, reported, but refuses a slip of a known one', () => {
    const unknown = parseHooksSettings({ BeforeLunch: [{ hooks: [command('true')] }] }, FILE);
    expect(unknown.problems).toEqual([expect.stringContaining('hooks.BeforeLunch is not a Claude Code hook event')]);
    expect(unknown.hooks.BeforeLunch).toHaveLength(1);
    expect(() => parseHooksSettings({ PreToolUSe: [{ hooks: [command('true')] }] }, FILE)).toThrow(
      `${FILE}: hooks.PreToolUSe is not a Claude Code hook event; did you mean "PreToolUse"? Rename the key.`,
    );
    expect(() => parseHooksSettings({ PostToolUse_: [] }, FILE)).toThrow('did you mean "PostToolUse"');
  });

  it.each<[string, unknown, string]>([
    ['not an object', ['x'], 'hooks must be an object from event name to matcher groups'],
    ['an event that is not a list', { Stop: { hooks: [] } }, 'hooks.Stop must be an array of matcher groups'],
    ['a group that is a string', { Stop: ['./x.sh'] }, 'hooks.Stop[0] must be a matcher group'],
    ['a group without hooks', { Stop: [{ matcher: '' }] }, 'hooks.Stop[0].hooks is missing: each matcher group lists'],
    ['a handler without type', { Stop: [{ hooks: [{ command: 'x' }] }] }, 'hooks.Stop[0].hooks[0].type is missing'],
    [
      'a command hook without command',
      { Stop: [{ hooks: [{ type: 'command' }] }] },
      'hooks.Stop[0].hooks[0].command is missing',
    ],
    ['an empty command', { Stop: [{ hooks: [command('  ')] }] }, 'hooks.Stop[0].hooks[0].command is empty'],
    [
      'a timeout in text',
      { Stop: [{ hooks: [command('x', { timeout: '30' })] }] },
      'hooks.Stop[0].hooks[0].timeout must be a number of seconds',
    ],
    [
      'a negative timeout',
      { Stop: [{ hooks: [command('x', { timeout: -1 })] }] },
      'timeout must be a positive number of seconds',
    ],
    [
      'a matcher that is a list',
      { PreToolUse: [{ matcher: ['Bash'], hooks: [] }] },
      'hooks.PreToolUse[0].matcher must be a string',
    ],
    [
      'a broken regex',
      { PreToolUse: [{ matcher: 'mcp__(', hooks: [] }] },
      'hooks.PreToolUse[0].matcher "mcp__(" is not a valid regular expression',
    ],
    [
      'a broken if rule',
      { PreToolUse: [{ hooks: [command('x', { if: 'Bash(git *' })] }] },
      'hooks.PreToolUse[0].hooks[0].if "Bash(git *"',
    ],
  ])('refuses %s, naming the file, the JSON path and the fix', (_what, raw, message) => {
    let error: Error | undefined;
    try {
      parseHooksSettings(raw, FILE);
    } catch (caught) {
      error = caught as Error;
    }
    expect(error?.message).toContain(FILE);
    expect(error?.message).toContain(message);
  });

  it('lists every problem of a file at once', () => {
    expect(() =>
      parseHooksSettings({ Stop: [{ hooks: [{ type: 'command' }, { type: 'command', command: '' }] }] }, FILE),
    ).toThrow(`${FILE} has 2 problems in hooks:\n  - hooks.Stop[0].hooks[0].command is missing`);
  });
});

describe('settings files carry their hooks', () => {
  it('parseSettings validates the hooks block beside permissions and sandbox', () => {
    const text = JSON.stringify({
      permissions: { allow: ['Read'] },
      hooks: { Stop: [{ hooks: [command('npm test')] }] },
    });
    expect(parseSettings(FILE, text)).toEqual({
      rules: { allow: ['Read'] },
      hooks: { Stop: [{ hooks: [{ command: 'npm test', source: FILE }] }] },
    });
    expect(parseSettings(FILE, JSON.stringify({ hooks: { Stop: [{ hooks: [command('x')] }] } })).hooks).toBeDefined();
  });

  it('a malformed hooks block makes the file fail to load', () => {
    expect(() => parseSettings(FILE, JSON.stringify({ hooks: { Stop: 'npm test' } }))).toThrow(
      `${FILE}: hooks.Stop must be an array of matcher groups`,
    );
  });

  it('loadSettingsLayers gives each layer its hooks', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hooks-layers-'));
    try {
      const home = path.join(root, 'home');
      const workspace = path.join(root, 'ws');
      fs.mkdirSync(path.join(home, '.claude'), { recursive: true });
      fs.mkdirSync(path.join(workspace, '.claude'), { recursive: true });
      fs.writeFileSync(
        path.join(home, '.claude', 'settings.json'),
        JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [command('~/guard.sh')] }] } }),
      );
      fs.writeFileSync(
        path.join(workspace, '.claude', 'settings.json'),
        JSON.stringify({ permissions: { deny: ['Bash(rm *)'] } }),
      );
      const layers = await loadSettingsLayers(workspace, { sources: ['user', 'project'], homeDir: home });
      expect(layers.map((layer) => [layer.source, layer.hooks])).toEqual([
        [
          'user',
          {
            PreToolUse: [
              {
                matcher: 'Bash',
                hooks: [{ command: '~/guard.sh', source: path.join(home, '.claude', 'settings.json') }],
              },
            ],
          },
        ],
        ['project', undefined],
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
