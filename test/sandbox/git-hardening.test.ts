import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SandboxEngine } from '../../src/activities/sandbox/engine';
import { gitShimDir, repositoryFilterOverrides } from '../../src/activities/sandbox/git-hardening';
import { FileContentStore } from '../../src/activities/store/content-store';
import { buildSystemPrompt } from '../../src/activities/system-prompt';
import { executeTool } from '../../src/activities/tools/index';
import { fixtureEngine, makeSandboxFixture, sandboxContext, type SandboxFixture } from './support';

/**
 * A repository's own .git/config naming programs that read-only git commands would run:
 * core.fsmonitor (`git status`), diff.external and diff.<driver>.command (`git diff`, `log -p`,
 * `show`), diff.<driver>.textconv (the same, and `blame`), filter drivers (`git status`). Each
 * touches a marker file; none may appear.
 */
let fixture: SandboxFixture;
let markers: string;

function git(args: string[], cwd = fixture.workspace): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, HOME: fixture.home } });
}

beforeEach(() => {
  fixture = makeSandboxFixture();
  markers = path.join(fixture.workspace, 'markers');
  fs.mkdirSync(markers);
  git(['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(fixture.workspace, 'a.txt'), 'one\n');
  fs.writeFileSync(path.join(fixture.workspace, '.gitattributes'), '*.txt diff=evil\n');
  git(['add', 'a.txt', '.gitattributes']);
  git(['commit', '-q', '-m', 'first']);
  // Same size, new content: git has to read the file (through any clean filter) to see the change.
  fs.writeFileSync(path.join(fixture.workspace, 'a.txt'), 'ONE\n');
  fs.utimesSync(path.join(fixture.workspace, 'a.txt'), new Date(), new Date(Date.now() + 5000));
  git(['config', 'core.fsmonitor', `touch ${markers}/fsmonitor; false`]);
  git(['config', 'diff.external', `touch ${markers}/external; true`]);
  git(['config', 'diff.evil.command', `touch ${markers}/driver-command; true`]);
  git(['config', 'diff.evil.textconv', `touch ${markers}/textconv; cat`]);
});
afterEach(() => fixture.cleanup());

const READ_ONLY_GIT = [
  'git status',
  'git diff',
  'git diff HEAD',
  'git log -p -1',
  'git show',
  'git -C . show HEAD',
  'git blame a.txt',
  'git diff --stat',
].join('; ');

const markersMade = () => fs.readdirSync(markers).sort();

describe("the agent's git", () => {
  it('runs none of them inside the sandbox', async () => {
    const result = await executeTool(
      'Bash',
      { command: READ_ONLY_GIT },
      sandboxContext(fixture, fixtureEngine(fixture)),
    );
    // Markers first: "external" here means the shim was not on the sandbox's PATH, and git ran
    // diff.external, whose `true` prints nothing (so no "+ONE" either).
    expect(markersMade()).toEqual([]);
    expect(result.content).toContain('+ONE');
  });

  it('uses the shim inside the sandbox even when the package lives under /tmp', async () => {
    // A checkout under /tmp (as some CI runners make) put the shim under the host's /tmp, which
    // the sandbox replaces with the job's private folder: the shim was not mounted at all.
    const shim = fs.mkdtempSync('/tmp/durable-agent-shim-test-');
    try {
      fs.copyFileSync(path.join(gitShimDir()!, 'git'), path.join(shim, 'git'));
      fs.chmodSync(path.join(shim, 'git'), 0o755);
      const engine = new SandboxEngine({
        homeDir: fixture.home,
        workerPrivatePaths: [fixture.dataHome],
        tempRoot: fixture.tempRoot,
        gitShimDir: shim,
      });
      const result = await executeTool(
        'Bash',
        { command: `command -v git; ${READ_ONLY_GIT}` },
        sandboxContext(fixture, engine),
      );
      expect(result.content.split('\n')[0]).toBe(path.join(shim, 'git'));
      expect(markersMade()).toEqual([]);
      expect(result.content).toContain('+ONE');
    } finally {
      fs.rmSync(shim, { recursive: true, force: true });
    }
  });

  it('runs none of them without the sandbox either', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), { enabled: false, source: 'test' });
    const result = await executeTool('Bash', { command: READ_ONLY_GIT }, ctx);
    expect(ctx.starts).toEqual([{ sandboxed: false }]);
    expect(result.content).toContain('+ONE');
    expect(markersMade()).toEqual([]);
  });

  it('still lets the command line ask for an external diff explicitly', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), { enabled: false, source: 'test' });
    await executeTool('Bash', { command: 'git diff --ext-diff' }, ctx);
    expect(markersMade()).toEqual(['driver-command']);
  });
});

/** A commit carrying a signature of `kind`, made by hand: no key is needed for git to verify it. */
function signedCommit(kind: 'openpgp' | 'ssh' | 'x509'): void {
  const armour = { openpgp: 'PGP SIGNATURE', ssh: 'SSH SIGNATURE', x509: 'SIGNED MESSAGE' }[kind];
  const tree = git(['rev-parse', 'HEAD^{tree}']).trim();
  const parent = git(['rev-parse', 'HEAD']).trim();
  const body = [
    `tree ${tree}`,
    `parent ${parent}`,
    'author A <a@example.com> 0 +0000',
    'committer A <a@example.com> 0 +0000',
    `gpgsig -----BEGIN ${armour}-----`,
    ' U0lHTkVE',
    ` -----END ${armour}-----`,
    '',
    `signed ${kind}`,
    '',
  ].join('\n');
  const file = path.join(fixture.outside, `commit-${kind}`);
  fs.writeFileSync(file, body);
  const commit = git(['hash-object', '-t', 'commit', '-w', file]).trim();
  git(['update-ref', 'HEAD', commit]);
}

describe("the agent's git and signatures", () => {
  const SIGNATURE_READS = [
    'git log -1 --pretty="%G? %GG %GS %GK"',
    'git log -1 --show-signature',
    'git show --show-signature --stat HEAD',
    'git log -3 --pretty=%G?',
  ].join('; ');

  beforeEach(() => {
    for (const [key, name] of [
      ['gpg.program', 'gpg'],
      ['gpg.openpgp.program', 'openpgp'],
      ['gpg.ssh.program', 'ssh'],
      ['gpg.x509.program', 'x509'],
    ] as const) {
      const program = path.join(fixture.outside, `sign-${name}`);
      fs.writeFileSync(program, `#!/bin/sh\ntouch ${markers}/${name}\necho "[GNUPG:] GOODSIG 0 x"\n`);
      fs.chmodSync(program, 0o755);
      git(['config', key, program]);
    }
    // ssh-keygen is only asked once there is a list of allowed signers.
    fs.writeFileSync(path.join(fixture.outside, 'allowed-signers'), '');
    git(['config', 'gpg.ssh.allowedSignersFile', path.join(fixture.outside, 'allowed-signers')]);
    signedCommit('x509');
    signedCommit('ssh');
    signedCommit('openpgp');
    for (const made of markersMade()) fs.rmSync(path.join(markers, made));
  });

  it('runs no signature program the repository names, sandboxed or not', async () => {
    for (const policy of [undefined, { enabled: false, source: 'test' }]) {
      const result = await executeTool(
        'Bash',
        { command: SIGNATURE_READS },
        sandboxContext(fixture, fixtureEngine(fixture), policy),
      );
      expect(result.content).toContain('signed openpgp');
      expect(markersMade()).toEqual([]);
    }
    // Plain git runs them: the set-up is a real attack.
    git(['log', '-3', '--pretty=%G?']);
    expect(markersMade()).toEqual(['openpgp', 'ssh', 'x509']);
  });
});

describe("the agent's git and the repository's filter drivers", () => {
  beforeEach(() => {
    fs.writeFileSync(path.join(fixture.workspace, '.gitattributes'), '*.txt filter=evil\n');
    git(['config', 'filter.evil.clean', `touch ${markers}/clean; cat`]);
    git(['config', 'filter.evil.required', 'true']);
    git(['config', '--unset', 'core.fsmonitor']);
    for (const made of markersMade()) fs.rmSync(path.join(markers, made));
  });

  it('outside the sandbox, read-only git runs without them; git add still uses them', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), { enabled: false, source: 'test' });
    const read = await executeTool('Bash', { command: 'git status --short; git diff; git log -p -1 >/dev/null' }, ctx);
    expect(read.content).toContain('+ONE');
    expect(markersMade()).toEqual([]);
    // A write keeps the repository's filter: git-crypt's clean filter is what keeps plain text
    // out of a commit.
    await executeTool('Bash', { command: 'git add a.txt' }, ctx);
    expect(markersMade()).toEqual(['clean']);
  });

  it("outside the sandbox, a driver whose name holds '=' is switched off too", async () => {
    // `-c filter.a=b.clean=` would set "filter.a" to "b.clean=": the name must not be split.
    fs.writeFileSync(path.join(fixture.workspace, '.gitattributes'), '*.txt filter=a=b\n');
    git(['config', 'filter.a=b.clean', `touch ${markers}/clean-eq; cat`]);
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), { enabled: false, source: 'test' });
    const read = await executeTool('Bash', { command: 'git status --short; git diff' }, ctx);
    expect(read.content).toContain('+ONE');
    expect(markersMade()).toEqual([]);
  });

  it("read-only git runs none of the repository's hooks, in the sandbox or not", async () => {
    // a.txt is modified, so refreshing it changes nothing in the index; an unmodified tracked
    // file whose time moved does: status records its new time, writes the index, and git then
    // runs post-index-change. (Relying on a.txt alone wrote the index only when the index and
    // the file fell in the same second, which a loaded machine does not promise.)
    const kept = path.join(fixture.workspace, 'kept.md');
    fs.writeFileSync(kept, 'kept\n');
    git(['add', 'kept.md']);
    git(['commit', '-q', '-m', 'kept']);
    let moved = 0;
    const moveKeptTime = () => {
      moved += 1;
      fs.utimesSync(kept, new Date(), new Date(Date.now() + moved * 60_000));
    };
    const hook = path.join(fixture.workspace, '.git', 'hooks', 'post-index-change');
    fs.writeFileSync(hook, `#!/bin/sh\ntouch ${markers}/hook\n`);
    fs.chmodSync(hook, 0o755);
    for (const policy of [undefined, { enabled: false, source: 'test' }]) {
      moveKeptTime();
      const ctx = sandboxContext(fixture, fixtureEngine(fixture), policy);
      const status = await executeTool('Bash', { command: 'git status --short' }, ctx);
      expect(status.content).toContain('a.txt');
      // (The filter driver this block sets up runs in the sandbox, by design: only the hook is looked for.)
      expect(markersMade()).not.toContain('hook');
    }
    // Plain git runs it: the set-up is a real one.
    moveKeptTime();
    git(['status', '--short']);
    expect(markersMade()).toContain('hook');
  });

  it('inside the sandbox they run, contained like any other program', async () => {
    const result = await executeTool('Bash', { command: 'git diff' }, sandboxContext(fixture, fixtureEngine(fixture)));
    expect(result.content).toContain('+ONE');
    expect(markersMade()).toEqual(['clean']);
  });

  it('outside the sandbox, a config that cannot be read stops read-only git', async () => {
    fs.appendFileSync(path.join(fixture.workspace, '.git/config'), '[broken\n');
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), { enabled: false, source: 'test' });
    const result = await executeTool('Bash', { command: 'git diff' }, ctx);
    expect(result.isError).toBe(true);
    expect(result.content).toContain("could not read this repository's config");
    expect(markersMade()).toEqual([]);
  });
});

describe("the system prompt's git", () => {
  it('fails closed: when the filter drivers cannot be listed, no git runs', async () => {
    git(['config', 'filter.evil.clean', `touch ${markers}/clean; cat`]);
    fs.writeFileSync(path.join(fixture.workspace, '.gitattributes'), '*.txt filter=evil\n');
    for (const made of markersMade()) fs.rmSync(path.join(markers, made));
    // A git whose `config` fails (as an unreadable include or a timeout would) and that otherwise
    // is the real one.
    const bin = path.join(fixture.outside, 'bin');
    fs.mkdirSync(bin);
    const realGit = execFileSync('bash', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    fs.writeFileSync(
      path.join(bin, 'git'),
      `#!/bin/sh\n[ "$1" = config ] && exit 1\nexec ${realGit} -c core.fsmonitor=false "$@"\n`,
    );
    fs.chmodSync(path.join(bin, 'git'), 0o755);
    const toolEnv = { PATH: `${bin}:${process.env.PATH}`, HOME: fixture.home };
    await expect(repositoryFilterOverrides(fixture.workspace, toolEnv)).rejects.toThrow();
    const store = new FileContentStore(path.join(fixture.dataHome, 'store'));
    const { ref } = await buildSystemPrompt(
      { store, clock: () => new Date('2026-12-01T00:00:00Z'), toolEnv },
      { workspace: fixture.workspace, model: 'claude-sonnet-5-5' },
    );
    const prompt = await store.get<string>(ref);
    expect(prompt).not.toContain('Git status');
    expect(markersMade()).toEqual([]);
  });

  it('runs nothing the repository names, and sees no credential', async () => {
    fs.writeFileSync(path.join(fixture.workspace, 'b.txt'), 'bee\n');
    git(['add', 'b.txt']);
    git(['commit', '-q', '-m', 'second']);
    fs.writeFileSync(path.join(fixture.workspace, 'b.txt'), 'BEE\n');
    fs.utimesSync(path.join(fixture.workspace, 'b.txt'), new Date(), new Date(Date.now() + 5000));
    git(['config', 'filter.evil.clean', `touch ${markers}/clean; cat`]);
    git(['config', 'filter.evil.process', `touch ${markers}/process; false`]);
    // A filter the user's own ~/.gitconfig defines is theirs and still runs: it shows what
    // environment git got.
    fs.appendFileSync(
      path.join(fixture.home, '.gitconfig'),
      `[filter "dump"]\n\tclean = "env > ${markers}/env; cat"\n`,
    );
    fs.writeFileSync(path.join(fixture.workspace, '.gitattributes'), 'a.txt filter=dump\nb.txt filter=evil\n');
    // The set-up's own plain git calls ran the repository's fsmonitor: start from no markers.
    for (const made of markersMade()) fs.rmSync(path.join(markers, made));
    const store = new FileContentStore(path.join(fixture.dataHome, 'store'));
    const toolEnv = { PATH: process.env.PATH, HOME: fixture.home };
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-test-SECRET-prompt';
    try {
      const { ref } = await buildSystemPrompt(
        { store, clock: () => new Date('2026-12-01T00:00:00Z'), toolEnv },
        { workspace: fixture.workspace, model: 'claude-sonnet-5-5' },
      );
      const prompt = await store.get<string>(ref);
      expect(prompt).toContain('Git branch: main');
      expect(prompt).toContain('M b.txt');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
    expect(markersMade()).toEqual(['env']);
    const env = fs.readFileSync(path.join(markers, 'env'), 'utf8');
    expect(env).not.toContain('SECRET');
    expect(env).toContain('GIT_CONFIG_KEY_0=core.fsmonitor');

    // The same status, plain, runs what the repository named: the setup above is a real attack.
    fs.rmSync(path.join(markers, 'env'));
    // Whether git itself then fails depends on a race (the filter process exits at once: git dies of
    // the broken pipe, or sees end of file and goes on unfiltered); what it ran does not.
    spawnSync('git', ['status', '--short'], { cwd: fixture.workspace, env: { ...process.env, HOME: fixture.home } });
    expect(markersMade()).toEqual(expect.arrayContaining(['fsmonitor', 'process']));
  });
});
