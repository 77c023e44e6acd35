import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { probeSandbox } from '../../src/activities/sandbox/probe';
import { executeTool } from '../../src/activities/tools/index';
import { resolveJobSandbox, type JobSandbox } from '../../src/shared/sandbox';
import { fixtureEngine, makeSandboxFixture, sandboxContext, type SandboxFixture } from './support';

/**
 * What a sandboxed command may not do to the workspace's protected paths, and what it may not
 * uncover through them: a protected name that is a symlink to a key, a workspace `denyWrite` that
 * names a key, renaming a protected folder away, creating a protected path that was missing, and
 * pointing `.git/commondir` at config and hooks of its own.
 */
let fixture: SandboxFixture;
beforeEach(() => {
  fixture = makeSandboxFixture();
});
afterEach(() => fixture.cleanup());

beforeAll(async () => {
  const availability = await probeSandbox('bwrap');
  if (!availability.available) throw new Error(`these tests need bubblewrap: ${availability.reason}`);
});

const bash = (command: string, policy?: JobSandbox) =>
  executeTool('Bash', { command }, sandboxContext(fixture, fixtureEngine(fixture), policy));

const secretOf = (suffix: string) => fixture.credentials.find((c) => c.file.endsWith(suffix))!;

function git(args: string[], cwd = fixture.workspace): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: fixture.home, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

function initRepository(): void {
  git(['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(fixture.workspace, 'a.txt'), 'one\n');
  git(['add', 'a.txt']);
  git(['commit', '-q', '-m', 'first']);
}

/** Every entry of the workspace root, `.git`'s own and the host's view of the git status. */
function workspaceState() {
  return {
    root: fs.readdirSync(fixture.workspace).sort(),
    gitDir: fs.readdirSync(path.join(fixture.workspace, '.git')).sort(),
    status: git(['status', '--porcelain', '--untracked-files=all']),
  };
}

describe('protections cannot uncover what is hidden', () => {
  it('a protected name that is a symlink to a key or to the data folder shows nothing', async () => {
    const key = secretOf('.ssh/id_ed25519');
    const store = secretOf('store/ab/cdef');
    fs.symlinkSync(path.relative(fixture.workspace, key.file), path.join(fixture.workspace, '.vscode'));
    fs.symlinkSync(path.join(fixture.dataHome, 'store'), path.join(fixture.workspace, '.idea'));
    fs.symlinkSync(secretOf('.aws/credentials').file, path.join(fixture.workspace, '.mcp.json'));
    const result = await bash('cat .vscode; ls -R .idea; cat .idea/ab/cdef; cat .mcp.json');
    expect(result.content).not.toContain('SECRET');
    expect(result.content).not.toContain(key.secret);
    expect(result.content).not.toContain(store.secret);
    expect(result.content).not.toMatch(/^cdef$/m);
  });

  it("a workspace file's denyWrite of a key or of temporal.db shows nothing", async () => {
    const key = secretOf('.ssh/id_ed25519');
    const db = secretOf('temporal.db');
    const { sandbox } = resolveJobSandbox({
      layers: [
        {
          source: 'project',
          file: path.join(fixture.workspace, '.claude/settings.json'),
          sandbox: {
            filesystem: { denyWrite: ['~/.ssh/id_ed25519', `${fixture.dataHome}/temporal.db`, '~/.ssh', 'locked.txt'] },
          },
        },
      ],
    });
    // A workspace file's denyWrite is kept: it can only make writable places read-only.
    expect(sandbox.filesystem?.denyWrite).toHaveLength(4);
    fs.writeFileSync(path.join(fixture.workspace, 'locked.txt'), 'locked\n');
    const result = await bash(
      `cat ~/.ssh/id_ed25519; ls ~/.ssh; cat ${fixture.dataHome}/temporal.db; echo x >> locked.txt`,
      sandbox,
    );
    expect(result.content).not.toContain(key.secret);
    expect(result.content).not.toContain(db.secret);
    expect(result.content).not.toContain('id_ed25519\n');
    expect(result.content).toContain('locked.txt: Read-only file system');
  });

  it("a symlink planted in the workspace does not steer the user's allowWrite or allowRead", async () => {
    // Trusted rules with workspace-relative paths: a command replaced both with links.
    fs.symlinkSync(fixture.home, path.join(fixture.workspace, 'build'));
    fs.symlinkSync(path.join(fixture.home, '.ssh'), path.join(fixture.workspace, 'docs'));
    const result = await bash('touch build/.planted; ls docs; cat docs/id_ed25519', {
      enabled: true,
      source: 'test',
      filesystem: { allowWrite: ['./build'], allowRead: ['./docs'] },
    });
    // (The home is hidden: the planted link leads to an empty folder nothing can be made in.)
    expect(result.content).toMatch(/build\/\.planted': (?:Read-only file system|Permission denied)/);
    expect(result.content).not.toContain(secretOf('.ssh/id_ed25519').secret);
    expect(fs.existsSync(path.join(fixture.home, '.planted'))).toBe(false);
  });
});

describe('protected paths cannot be replaced', () => {
  it('.git and .claude cannot be renamed away and rebuilt; config, hooks, commondir and info stay', async () => {
    initRepository();
    fs.mkdirSync(path.join(fixture.workspace, '.claude'));
    fs.writeFileSync(path.join(fixture.workspace, '.claude/settings.json'), '{}');
    const configBefore = fs.readFileSync(path.join(fixture.workspace, '.git/config'), 'utf8');
    const result = await bash(
      [
        'mv .git .git.orig',
        'mkdir -p .git/hooks',
        'mv .claude .claude.orig',
        'echo \'{"hooks":{}}\' > .claude/settings.local.json',
        'echo ../evil > .git/commondir',
        'echo "[core] hooksPath = /x" > .git/config.worktree',
        'echo "*.txt filter=evil" > .git/info/attributes',
        'rm -rf .git/hooks',
        'mv .git/config .git/config.orig',
        'true',
      ].join('; '),
    );
    expect(result.content).toContain("mv: cannot move '.git' to '.git.orig': Device or resource busy");
    expect(result.content).toContain("mv: cannot move '.claude' to '.claude.orig': Device or resource busy");
    expect(result.content).toContain("mv: cannot move '.git/config' to '.git/config.orig': Device or resource busy");
    for (const file of ['.git/commondir', '.git/config.worktree', '.git/info/attributes']) {
      expect(result.content).toContain(`${file}: Read-only file system`);
    }
    expect(fs.existsSync(path.join(fixture.workspace, '.git.orig'))).toBe(false);
    expect(fs.existsSync(path.join(fixture.workspace, '.claude.orig'))).toBe(false);
    expect(fs.readFileSync(path.join(fixture.workspace, '.git/config'), 'utf8')).toBe(configBefore);
    expect(fs.readdirSync(path.join(fixture.workspace, '.claude'))).toEqual(['settings.json']);
    // The placeholders are gone again: nothing was left behind in .git.
    for (const name of ['commondir', 'config.worktree']) {
      expect(fs.existsSync(path.join(fixture.workspace, '.git', name))).toBe(false);
    }
  });

  it("a redirected commondir cannot make the person's next git run the sandbox's hooks", async () => {
    initRepository();
    const marker = path.join(fixture.outside, 'HOOK-RAN');
    await bash(
      [
        'mkdir -p evil/hooks',
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > evil/hooks/pre-commit`,
        'chmod +x evil/hooks/pre-commit',
        'printf "[core]\\n\\trepositoryformatversion = 0\\n" > evil/config',
        'echo ../evil > .git/commondir',
        'mkdir -p .git/hooks && cp evil/hooks/pre-commit .git/hooks/pre-commit',
      ].join('; '),
    );
    git(['commit', '-q', '--allow-empty', '-m', 'by the person']);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('missing protected paths cannot be created, and leave nothing behind', async () => {
    initRepository();
    const before = workspaceState();
    const result = await bash(
      [
        'mkdir -p .vscode && echo "{}" > .vscode/tasks.json',
        'echo "{}" > .mcp.json',
        'mkdir -p .claude && echo "{}" > .claude/settings.local.json',
        'echo "export X=1" > .bashrc',
        'echo "[submodule]" > .gitmodules',
        // What the sandbox's own git sees meanwhile: the placeholders are empty folders.
        'git status --porcelain --untracked-files=all; echo status-done',
      ].join('; '),
    );
    expect(result.content).toContain('Read-only file system');
    expect(result.content).toContain('status-done');
    expect(result.content.split('status-done')[0]).not.toMatch(/^\?\?/m);
    expect(workspaceState()).toEqual(before);
  });

  it('a workspace that is not a repository cannot become one inside the sandbox', async () => {
    const result = await bash('git init -q && echo initialised; mkdir -p .git/hooks; ls -a');
    expect(result.content).not.toContain('initialised');
    expect(fs.existsSync(path.join(fixture.workspace, '.git'))).toBe(false);
  });

  it('stand-ins a worker killed before it recorded its command left are removed by the next command', async () => {
    // A worker prepares a sandboxed command (its stand-ins are made) and dies before the journal
    // names them: nothing on record says they are there.
    const dead = await fixtureEngine(fixture).prepare({
      command: 'true',
      workspace: fs.realpathSync(fixture.workspace),
      sessionKey: 'killed',
      policy: { enabled: true, source: 'test' },
      env: { PATH: process.env.PATH },
    });
    expect('refused' in dead).toBe(false);
    expect(fs.existsSync(path.join(fixture.workspace, '.git'))).toBe(true);
    // The retry of its call (a new worker) runs the command.
    const result = await bash('echo ran');
    expect(result.content).toContain('ran');
    expect(fs.existsSync(path.join(fixture.workspace, '.git'))).toBe(false);
  });

  it("a worktree's .git file cannot be pointed elsewhere", async () => {
    const main = path.join(fixture.outside, 'main');
    fs.mkdirSync(main);
    git(['init', '-q', '-b', 'main'], main);
    git(['commit', '-q', '--allow-empty', '-m', 'first'], main);
    git(['worktree', 'add', '-q', '-b', 'side', fixture.workspace], main);
    const pointer = fs.readFileSync(path.join(fixture.workspace, '.git'), 'utf8');
    const result = await bash('echo "gitdir: /elsewhere" > .git; mv .git .git.orig; cat .git');
    expect(result.content).toContain('Read-only file system');
    expect(fs.readFileSync(path.join(fixture.workspace, '.git'), 'utf8')).toBe(pointer);
  });

  it('git add and commit still work inside the sandbox', async () => {
    initRepository();
    const result = await bash(
      'echo two >> a.txt && echo new > b.txt && git add -A && git commit -q -m "from the sandbox" && git log --oneline | head -1',
    );
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(/^[0-9a-f]+ from the sandbox$/);
    expect(git(['log', '-1', '--format=%s'])).toBe('from the sandbox\n');
    expect(git(['show', 'HEAD:b.txt'])).toBe('new\n');
    expect(git(['status', '--porcelain'])).toBe('');
  });

  it('commands running side by side share the placeholders, and the last one removes them', async () => {
    initRepository();
    const before = workspaceState();
    const engine = fixtureEngine(fixture);
    const slow = executeTool(
      'Bash',
      { command: 'sleep 0.6; touch .mcp.json; echo slow-done' },
      sandboxContext(fixture, engine),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const quick = await executeTool(
      'Bash',
      { command: 'test -d .mcp.json && echo placeholder' },
      sandboxContext(fixture, engine),
    );
    expect(quick.content).toBe('placeholder');
    // The quick command has ended; the slow one still needs the placeholder.
    expect(fs.statSync(path.join(fixture.workspace, '.mcp.json')).isDirectory()).toBe(true);
    const slowResult = await slow;
    expect(slowResult.content).toContain('slow-done');
    expect(workspaceState()).toEqual(before);
  });
});

describe('placeholders', () => {
  it('something that only bears a staging name is neither swept nor in the way', async () => {
    const { Placeholders } = await import('../../src/activities/sandbox/placeholders');
    const vscode = path.join(fixture.workspace, '.vscode');
    // A link at a live pid's name, and notes of somebody's at a name whose pid cannot exist.
    const link = path.join(fixture.workspace, `.durable-agent-stand-in.${process.pid}.1`);
    fs.symlinkSync('/nonexistent', link);
    const notes = path.join(fixture.workspace, '.durable-agent-stand-in.4194305.a');
    fs.mkdirSync(notes);
    fs.writeFileSync(path.join(notes, 'notes.txt'), 'mine\n');
    const lease = await new Placeholders().acquire([{ path: vscode, placeholder: { type: 'directory' } }]);
    expect(lease.paths).toEqual([vscode]);
    expect(fs.statSync(vscode).isDirectory()).toBe(true);
    await lease.release();
    expect(fs.existsSync(vscode)).toBe(false);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(notes, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it('a real folder whose every mtime is 0 (unpacked from an epoch-0 archive) is never taken for one', async () => {
    const { Placeholders } = await import('../../src/activities/sandbox/placeholders');
    const vscode = path.join(fixture.workspace, '.vscode');
    const settings = path.join(vscode, 'settings.json');
    fs.mkdirSync(vscode);
    fs.writeFileSync(settings, '{"editor.tabSize": 2}\n');
    fs.utimesSync(settings, 0, 0);
    fs.utimesSync(vscode, 0, 0);
    const placeholders = new Placeholders();
    const lease = await placeholders.acquire([{ path: vscode, placeholder: { type: 'directory' } }]);
    expect(lease.paths).toEqual([]);
    await lease.release();
    await placeholders.releaseLeftovers([vscode]);
    expect(fs.readFileSync(settings, 'utf8')).toBe('{"editor.tabSize": 2}\n');
  });

  it('are made once, removed by the last lease, and never when somebody has written into them', async () => {
    const { Placeholders } = await import('../../src/activities/sandbox/placeholders');
    const placeholders = new Placeholders();
    const vscode = path.join(fixture.workspace, '.vscode');
    const commondir = path.join(fixture.workspace, 'commondir');
    const wanted = [
      { path: vscode, placeholder: { type: 'directory' as const } },
      { path: commondir, placeholder: { type: 'file' as const, content: '.\n' } },
    ];
    const first = await placeholders.acquire(wanted);
    const second = await placeholders.acquire(wanted);
    expect(fs.statSync(vscode).isDirectory()).toBe(true);
    expect(fs.readFileSync(commondir, 'utf8')).toBe('.\n');
    await first.release();
    await first.release();
    expect(fs.existsSync(vscode)).toBe(true);
    await second.release();
    expect(fs.existsSync(vscode)).toBe(false);
    expect(fs.existsSync(commondir)).toBe(false);

    // Somebody outside the sandbox started using the folder meanwhile: it stays, with their file.
    const third = await placeholders.acquire(wanted);
    fs.writeFileSync(path.join(vscode, 'settings.json'), '{}');
    await third.release();
    expect(fs.readdirSync(vscode)).toEqual(['settings.json']);
  });

  it('nested ones (a .git with its hooks and config) are made and removed whole, even when a killed worker left them', async () => {
    const { Placeholders } = await import('../../src/activities/sandbox/placeholders');
    const git = path.join(fixture.workspace, 'nested', '.git');
    fs.mkdirSync(path.dirname(git), { recursive: true });
    const wanted = [
      { path: path.join(git, 'hooks'), placeholder: { type: 'directory' as const } },
      { path: git, placeholder: { type: 'directory' as const } },
      { path: path.join(git, 'config'), placeholder: { type: 'file' as const, content: '' } },
    ];
    // A worker that dies holding them leaves them all.
    await new Placeholders().acquire(wanted);
    expect(fs.readdirSync(git).sort()).toEqual(['config', 'hooks']);
    // The next command's lease knows the whole tree again and removes it at its end.
    const lease = await new Placeholders().acquire(wanted);
    expect(lease.paths.sort()).toEqual(wanted.map((item) => item.path).sort());
    await lease.release();
    expect(fs.existsSync(git)).toBe(false);

    // A worker that adopts the dead one's command removes what it left, from the command's record.
    const made = await new Placeholders().acquire(wanted);
    await new Placeholders().releaseLeftovers(made.paths);
    expect(fs.existsSync(git)).toBe(false);
  });

  it("a command that finds another command's stand-ins present holds them too, so the other's end leaves them", async () => {
    const { Placeholders } = await import('../../src/activities/sandbox/placeholders');
    const placeholders = new Placeholders();
    const git = path.join(fixture.workspace, 'shared', '.git');
    const config = path.join(git, 'config');
    fs.mkdirSync(path.dirname(git), { recursive: true });
    const wanted = [
      { path: git, placeholder: { type: 'directory' as const } },
      { path: config, placeholder: { type: 'file' as const, content: '' } },
    ];
    const first = await placeholders.acquire(wanted);
    // The second command's look at the workspace sees the first one's .git and .git/config as present:
    // it wants no stand-in for them, yet binds them into its sandbox.
    const second = await placeholders.acquireFound(async () => ({ wanted: [], present: [git, config] }));
    expect(second.paths.sort()).toEqual([git, config]);
    await first.release();
    // Before: the first command's end removed them under the second one's running sandbox.
    expect(fs.existsSync(config)).toBe(true);
    await second.release();
    expect(fs.existsSync(git)).toBe(false);
  });

  it('a stand-in made inside one another command holds does not keep that one from being removed', async () => {
    const { Placeholders } = await import('../../src/activities/sandbox/placeholders');
    const placeholders = new Placeholders();
    const git = path.join(fixture.workspace, 'side-by-side', '.git');
    fs.mkdirSync(path.dirname(git), { recursive: true });
    // The first command's sandbox wants .git; the second starts once .git exists, and wants what is in it.
    const first = await placeholders.acquire([{ path: git, placeholder: { type: 'directory' } }]);
    const second = await placeholders.acquire([{ path: path.join(git, 'hooks'), placeholder: { type: 'directory' } }]);
    await second.release();
    await first.release();
    expect(fs.existsSync(git)).toBe(false);
  });

  it('are known again after a killed worker left them behind, and a real path is never touched', async () => {
    const { Placeholders } = await import('../../src/activities/sandbox/placeholders');
    const leftover = path.join(fixture.workspace, '.idea');
    const real = path.join(fixture.workspace, '.mcp.json');
    await new Placeholders().acquire([{ path: leftover, placeholder: { type: 'directory' } }]);
    fs.writeFileSync(real, '{}');
    const lease = await new Placeholders().acquire([
      { path: leftover, placeholder: { type: 'directory' } },
      { path: real, placeholder: { type: 'directory' } },
    ]);
    expect(lease.paths).toEqual([leftover]);
    await lease.release();
    expect(fs.existsSync(leftover)).toBe(false);
    expect(fs.readFileSync(real, 'utf8')).toBe('{}');
  });
});
