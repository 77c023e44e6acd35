import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
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
    expect(result.content).toContain('+ONE');
    expect(markersMade()).toEqual([]);
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

describe("the system prompt's git", () => {
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
    // (It fails too: the repository's filter process exits at once.)
    expect(() => git(['status', '--short'])).toThrow();
    expect(markersMade()).toEqual(expect.arrayContaining(['fsmonitor', 'process']));
  });
});
