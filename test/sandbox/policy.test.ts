import { buildBwrapArgs, orderMounts, type Mount } from '../../src/activities/sandbox/bwrap-args';
import { isWritableIn, resolveSettingsPath } from '../../src/activities/sandbox/mounts';
import {
  DEFAULT_JOB_SANDBOX,
  describeJobSandbox,
  jobSandboxOrDefault,
  mergeSandboxSettings,
  parseSandboxSettings,
  resolveJobSandbox,
  sandboxNetworkMode,
} from '../../src/shared/sandbox';

/** The pure half of the sandbox: settings, the job policy, the mount order and the bwrap argv. */

describe('sandbox settings', () => {
  it("parses Claude Code's sandbox block, keeping unknown keys", () => {
    const parsed = parseSandboxSettings(
      {
        enabled: true,
        autoAllowBashIfSandboxed: true,
        excludedCommands: ['docker'],
        network: { allowedDomains: ['github.com'], allowLocalBinding: true, futureKey: 1 },
        filesystem: { allowWrite: ['~/.npm'], denyRead: ['~/.aws/credentials'] },
        somethingNew: { x: 1 },
      },
      '/repo/.claude/settings.json',
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.settings.network?.allowedDomains).toEqual(['github.com']);
    expect((parsed.settings as Record<string, unknown>).somethingNew).toEqual({ x: 1 });
  });

  it('names the file and the field of a malformed block', () => {
    const parsed = parseSandboxSettings({ enabled: 'yes', filesystem: { denyRead: '~/.ssh' } }, '/r/s.json');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.message).toContain('/r/s.json');
    expect(parsed.message).toContain('sandbox.enabled');
    expect(parsed.message).toContain('sandbox.filesystem.denyRead');
  });

  it('merges layers: scalars from the last, lists added up', () => {
    expect(
      mergeSandboxSettings(
        { enabled: false, network: { allowedDomains: ['a.com'] }, filesystem: { denyRead: ['~/x'] } },
        undefined,
        { enabled: true, network: { allowedDomains: ['b.com', 'a.com'] }, filesystem: { allowWrite: ['/w'] } },
      ),
    ).toEqual({
      enabled: true,
      network: { allowedDomains: ['a.com', 'b.com'] },
      filesystem: { denyRead: ['~/x'], allowWrite: ['/w'] },
    });
  });
});

describe('the job policy', () => {
  it('is required with the default policy when nothing is said', () => {
    expect(resolveJobSandbox({ layers: [] })).toEqual({ sandbox: DEFAULT_JOB_SANDBOX, ignored: [] });
    expect(jobSandboxOrDefault(undefined)).toEqual({ enabled: true, source: 'default' });
  });

  it('opts out with --no-sandbox or a user-level enabled: false', () => {
    expect(resolveJobSandbox({ layers: [], noSandbox: true }).sandbox).toEqual({
      enabled: false,
      source: '--no-sandbox',
    });
    const user = { source: 'user', file: '/home/u/.claude/settings.json', sandbox: { enabled: false } };
    expect(resolveJobSandbox({ layers: [user] }).sandbox).toEqual({
      enabled: false,
      source: '/home/u/.claude/settings.json sandbox.enabled',
    });
  });

  it('lets a workspace file tighten the sandbox but not turn it off or widen it', () => {
    const project = {
      source: 'project',
      file: '/repo/.claude/settings.json',
      sandbox: {
        enabled: false,
        network: { allowedDomains: ['*'], deniedDomains: ['evil.com'] },
        filesystem: { allowWrite: ['~'], denyRead: ['./secrets'], denyWrite: ['./locked'] },
      },
    };
    const { sandbox, ignored } = resolveJobSandbox({ layers: [project] });
    expect(sandbox).toEqual({
      enabled: true,
      source: 'default',
      network: { deniedDomains: ['evil.com'] },
      filesystem: { denyRead: ['./secrets'], denyWrite: ['./locked'] },
    });
    expect(ignored).toHaveLength(3);
    expect(ignored[0]).toContain('cannot turn the sandbox off');
    expect(sandboxNetworkMode(sandbox)).toBe('none');
  });

  it('opens the network only for "*"', () => {
    expect(sandboxNetworkMode({ enabled: true, source: 't', network: { allowedDomains: ['*'] } })).toBe('host');
    expect(sandboxNetworkMode({ enabled: true, source: 't', network: { allowedDomains: ['github.com'] } })).toBe(
      'none',
    );
    expect(
      sandboxNetworkMode({ enabled: true, source: 't', network: { allowedDomains: ['*'], deniedDomains: ['x.com'] } }),
    ).toBe('none');
    expect(describeJobSandbox({ enabled: true, source: 't', network: { allowedDomains: ['github.com'] } })).toContain(
      'cannot be enforced by name',
    );
    expect(describeJobSandbox({ enabled: false, source: '--no-sandbox' })).toBe('Bash runs unsandboxed (--no-sandbox)');
  });
});

describe('paths in settings', () => {
  it.each([
    ['~/.npm', '/home/u/.npm'],
    ['~', '/home/u'],
    ['//etc/x', '/etc/x'],
    ['/opt/cache', '/opt/cache'],
    ['./build', '/ws/build'],
    ['build/**', '/ws/build'],
    ['../other', '/other'],
  ])('%s is %s', (entry, expected) => {
    expect(resolveSettingsPath(entry, '/ws', '/home/u')).toBe(expected);
  });
});

describe('the bwrap command line', () => {
  const mounts: Mount[] = [
    { kind: 'hide', path: '/home/u/.ssh', directory: true },
    { kind: 'read-only', path: '/ws/.git/hooks' },
    { kind: 'write', path: '/ws' },
    { kind: 'show', path: '/home/u/.ssh/config' },
    { kind: 'hide', path: '/home/u', directory: true },
    { kind: 'write', path: '/var/tmp/job', dest: '/tmp' },
    { kind: 'hide', path: '/home/u/ws-inside-home', directory: true },
    { kind: 'write', path: '/home/u/ws-inside-home' },
    { kind: 'pin', path: '/ws/.git' },
  ];

  it('applies rules from the outermost path in; on one path a deny beats a write, a show beats a hide', () => {
    const order = orderMounts(mounts).map((m) => `${m.kind} ${m.kind === 'write' && m.dest ? m.dest : m.path}`);
    expect(order).toEqual([
      'write /ws',
      'write /tmp',
      'pin /ws/.git',
      'hide /home/u',
      'write /home/u/ws-inside-home',
      'read-only /ws/.git/hooks',
      'hide /home/u/.ssh',
      'hide /home/u/ws-inside-home',
      'show /home/u/.ssh/config',
    ]);
  });

  it('counts a path as writable only where the deepest trusted rule on it is a writable mount', () => {
    const trusted = mounts.filter((m) => m.kind !== 'pin' && m.kind !== 'read-only');
    expect(isWritableIn(trusted, '/ws/.vscode')).toBe(true);
    expect(isWritableIn(trusted, '/ws/.git/config')).toBe(true);
    expect(isWritableIn([...trusted, { kind: 'write', path: '/home/u/proj' }], '/home/u/proj/.git/config')).toBe(true);
    // Hidden, only readable, or seen under /tmp with other content: a protection there is dropped.
    expect(isWritableIn(trusted, '/home/u/ws-inside-home/.git/config')).toBe(false);
    expect(isWritableIn(trusted, '/home/u/.ssh/id_rsa')).toBe(false);
    expect(isWritableIn(trusted, '/home/u/.ssh/config')).toBe(false);
    expect(isWritableIn(trusted, '/home/u/.bashrc')).toBe(false);
    expect(isWritableIn(trusted, '/etc/passwd')).toBe(false);
    expect(isWritableIn(trusted, '/tmp/x')).toBe(false);
    expect(isWritableIn(trusted, '/var/tmp/job/x')).toBe(false);
  });

  it('isolates the network unless the policy opens it, and runs bash -c in the workspace', () => {
    const plan = {
      bwrap: '/usr/bin/bwrap',
      baseFlags: ['--unshare-pid'],
      mounts: [{ kind: 'hide', path: '/etc/shadow', directory: false } as Mount],
      network: 'none' as const,
      cwd: '/ws',
      command: 'echo "$HOME"',
    };
    const { file, args } = buildBwrapArgs(plan);
    expect(file).toBe('/usr/bin/bwrap');
    expect(args).toEqual([
      '--unshare-pid',
      '--unshare-net',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--ro-bind',
      '/dev/null',
      '/etc/shadow',
      '--chdir',
      '/ws',
      '--',
      'bash',
      '-c',
      'echo "$HOME"',
    ]);
    expect(buildBwrapArgs({ ...plan, network: 'host' }).args).not.toContain('--unshare-net');
    expect(buildBwrapArgs({ ...plan, mounts: [{ kind: 'hide', path: '/d', directory: true }] }).args).toEqual(
      expect.arrayContaining(['--perms', '0111', '--tmpfs', '/d']),
    );
  });
});
