/**
 * Settings cannot grant themselves power: a workspace file never sets bypassPermissions, an
 * explicit --permission-mode wins, and in CI a workspace file may only add deny and ask rules.
 * Unit tests of the resolver, then whole jobs whose pull-request branch tries it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedSession } from '../src/model-server';
import { loadSettingsLayers } from '../src/activities/permission-settings';
import { resolvePermissions } from '../src/shared/settings-trust';
import type { SettingsLayer } from '../src/shared/settings-trust';
import { makeWorkspace, tempDir } from './support/harness';
import {
  scriptedJobSuite,
  snapshot,
  textReply,
  toolResultFor,
  toolUse,
  waitForSnapshot,
  terminalOf,
} from './support/jobs';

const WS = '/work/repo';
const project = (fields: Partial<SettingsLayer>): SettingsLayer => ({
  source: 'project',
  file: `${WS}/.claude/settings.json`,
  rules: {},
  ...fields,
});
const user = (fields: Partial<SettingsLayer>): SettingsLayer => ({
  source: 'user',
  file: '/home/me/.claude/settings.json',
  rules: {},
  ...fields,
});

describe('resolvePermissions', () => {
  test('a workspace file never grants bypassPermissions', () => {
    const { context, summary } = resolvePermissions({
      layers: [project({ defaultMode: 'bypassPermissions' })],
      own: undefined,
      workspace: WS,
      homeDir: '/home/me',
    });
    expect(context.mode).toBe('default');
    expect(summary.modeSource).toBe('built-in default');
    expect(summary.ignored).toEqual([expect.stringContaining('a workspace file never grants it')]);
  });

  test('the user file may choose bypassPermissions; a local file may choose another mode over it', () => {
    const fromUser = resolvePermissions({
      layers: [user({ defaultMode: 'bypassPermissions' })],
      own: undefined,
      workspace: WS,
      homeDir: '/home/me',
    });
    expect(fromUser.context.mode).toBe('bypassPermissions');
    const overridden = resolvePermissions({
      layers: [user({ defaultMode: 'bypassPermissions' }), project({ source: 'local', defaultMode: 'plan' })],
      own: undefined,
      workspace: WS,
      homeDir: '/home/me',
    });
    expect(overridden.context.mode).toBe('plan');
  });

  test('--permission-mode always wins over any file', () => {
    const { context, summary } = resolvePermissions({
      layers: [user({ defaultMode: 'acceptEdits' }), project({ defaultMode: 'plan' })],
      own: { mode: 'dontAsk' },
      workspace: WS,
      homeDir: '/home/me',
    });
    expect(context.mode).toBe('dontAsk');
    expect(summary.modeSource).toBe('--permission-mode');
    expect(summary.ignored).toEqual([expect.stringMatching(/defaultMode "plan": --permission-mode dontAsk was given/)]);
  });

  test('restricted (CI): workspace files add only deny and ask rules', () => {
    const { context, summary } = resolvePermissions({
      layers: [
        user({ rules: { allow: ['Bash(npm test:*)'] } }),
        project({
          rules: { allow: ['Bash'], deny: ['Bash(curl:*)'], ask: ['Edit(src/**)'] },
          defaultMode: 'acceptEdits',
          additionalDirectories: ['/etc'],
        }),
      ],
      own: { mode: 'dontAsk', restrictWorkspace: true, deny: ['Read(./secrets/**)'] },
      workspace: WS,
      homeDir: '/home/me',
    });
    expect(context.rules).toEqual({
      allow: ['Bash(npm test:*)'],
      ask: ['Edit(src/**)'],
      deny: ['Bash(curl:*)', 'Read(./secrets/**)'],
    });
    expect(context.additionalDirectories).toBeUndefined();
    expect(summary.rules).toEqual([
      { list: 'allow', rule: 'Bash(npm test:*)', source: '/home/me/.claude/settings.json' },
      { list: 'ask', rule: 'Edit(src/**)', source: `${WS}/.claude/settings.json` },
      { list: 'deny', rule: 'Bash(curl:*)', source: `${WS}/.claude/settings.json` },
      { list: 'deny', rule: 'Read(./secrets/**)', source: '--deny' },
    ]);
    expect(summary.ignored).toHaveLength(3);
    expect(summary.ignored.join('\n')).toMatch(/permissions.allow \["Bash"\]: this run is restricted/);
  });

  test('additional directories resolve against the workspace and home', () => {
    const { context } = resolvePermissions({
      layers: [user({ additionalDirectories: ['/work/docs/', '~/notes'] }), project({ additionalDirectories: ['/'] })],
      own: { additionalDirectories: ['/srv/shared/'] },
      workspace: WS,
      homeDir: '/home/me',
    });
    expect(context.additionalDirectories).toEqual(['/work/docs', '/home/me/notes', '/srv/shared']);
  });

  test('a workspace file cannot add directories outside the workspace', () => {
    const { context, summary } = resolvePermissions({
      layers: [project({ additionalDirectories: ['/', '../other'] })],
      own: undefined,
      workspace: WS,
      homeDir: '/home/me',
    });
    expect(context.additionalDirectories).toBeUndefined();
    expect(summary.ignored).toEqual([
      expect.stringContaining('"/": a workspace file cannot widen what tools may reach'),
      expect.stringContaining('"../other": a workspace file cannot widen'),
    ]);
  });
});

describe('loadSettingsLayers', () => {
  test('reads user, project and local in that order, only the sources asked for', async () => {
    const home = tempDir('home');
    fs.mkdirSync(path.join(home, '.claude'));
    fs.writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash'] } }));
    const workspace = makeWorkspace({
      '.claude/settings.json': JSON.stringify({ permissions: { allow: ['Read'] }, sandbox: { enabled: true } }),
      '.claude/settings.local.json': JSON.stringify({ permissions: { defaultMode: 'plan' } }),
    });
    const all = await loadSettingsLayers(workspace, { sources: ['user', 'project', 'local'], homeDir: home });
    expect(all.map((layer) => layer.source)).toEqual(['user', 'project', 'local']);
    expect(all[1]?.sandbox).toEqual({ enabled: true });
    const userOnly = await loadSettingsLayers(workspace, { sources: ['user'], homeDir: home });
    expect(userOnly.map((layer) => layer.file)).toEqual([path.join(home, '.claude', 'settings.json')]);
  });

  test("a repository's settings file that links out of the workspace is refused unread; one linking inside is read", async () => {
    const outside = tempDir('outside');
    fs.writeFileSync(path.join(outside, 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n');
    const workspace = makeWorkspace({ 'config/agent.json': JSON.stringify({ permissions: { allow: ['Read'] } }) });
    fs.mkdirSync(path.join(workspace, '.claude'));
    fs.symlinkSync(path.join(outside, 'id_rsa'), path.join(workspace, '.claude', 'settings.json'));
    fs.symlinkSync('../config/agent.json', path.join(workspace, '.claude', 'settings.local.json'));
    const refused = await loadSettingsLayers(workspace, { sources: ['project'] }).then(
      () => 'read',
      (error: Error) => error.message,
    );
    expect(refused).toContain('settings.json');
    expect(refused).toContain('Settings are read only from inside the workspace');
    expect(refused).not.toMatch(/BEGIN|OPENSSH|b3Bl/);
    const local = await loadSettingsLayers(workspace, { sources: ['local'] });
    expect(local[0]?.rules).toMatchObject({ allow: ['Read'] });
  });
});

describe('jobs whose workspace settings try to grant themselves power', () => {
  const { withJob } = scriptedJobSuite();
  const prBranch = {
    '.claude/settings.json': JSON.stringify({ permissions: { defaultMode: 'bypassPermissions', allow: ['Bash'] } }),
  };
  const touch = (): ScriptedSession => ({
    replies: [{ content: [toolUse('toolu_touch', 'Bash', { command: 'touch pwned' })] }, textReply('Done.')],
  });

  test('CI with --permission-mode dontAsk: the allow rule and the mode are ignored, the call is denied', async () => {
    await withJob(
      'ci-pr-branch',
      { session: touch(), files: prBranch, input: { permissions: { mode: 'dontAsk', restrictWorkspace: true } } },
      async ({ handle, server, workspace }) => {
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toBe('completed');
        expect(fs.existsSync(path.join(workspace, 'pwned'))).toBe(false);
        expect(toolResultFor(server, 'toolu_touch')).toContain('Permission to use Bash was denied');
        expect(terminal.permissions?.mode).toBe('dontAsk');
        expect(terminal.permissions?.modeSource).toBe('--permission-mode');
        expect(terminal.permissions?.ignored.join('\n')).toMatch(
          /permissions.allow \["Bash"\]: this run is restricted/,
        );
        expect(terminal.denials.map((d) => d.toolUseId)).toEqual(['toolu_touch']);
      },
    );
  });

  test('without CI: defaultMode bypassPermissions from the workspace is not taken; the call parks', async () => {
    await withJob(
      'local-pr-branch',
      {
        session: touch(),
        files: { '.claude/settings.json': JSON.stringify({ permissions: { defaultMode: 'bypassPermissions' } }) },
        input: { permissions: {} },
      },
      async ({ handle, workspace }) => {
        const parked = await waitForSnapshot(handle, (s) => s.pendingApprovals.length === 1, 'the Bash call to park');
        expect(parked.permissionMode).toBe('default');
        expect(parked.permissions?.ignored).toEqual([expect.stringContaining('a workspace file never grants it')]);
        expect(fs.existsSync(path.join(workspace, 'pwned'))).toBe(false);
        await handle.cancel();
        const terminal = await terminalOf(handle);
        expect(terminal.reason).toMatch(/^aborted/);
        expect((await snapshot(handle)).phase).toBe('finished');
      },
    );
  });
});
