import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readDenyHiddenPaths } from '../../src/activities/sandbox/read-deny-mounts';
import { executeTool } from '../../src/activities/tools/index';
import { fixtureEngine, makeSandboxFixture, sandboxContext, type SandboxFixture } from './support';

/**
 * Issue 25, finding 5: with a Read deny rule, `cat s` where `s` is a link to the denied place was
 * read-only to the rules (they see the name `s`) and printed the key. The sandbox now hides the
 * places outside the workspace that the job's Read deny rules name outright, under every name.
 */
let fixture: SandboxFixture;
const KEY = 'sk-secret-key-for-the-read-deny-test';
let secrets: string;

beforeEach(() => {
  fixture = makeSandboxFixture();
  secrets = path.join(fixture.outside, 'secrets');
  fs.mkdirSync(secrets);
  fs.writeFileSync(path.join(secrets, 'key'), `${KEY}\n`);
  fs.writeFileSync(path.join(fixture.workspace, 'notes.txt'), 'plain notes\n');
  fs.symlinkSync(path.join(secrets, 'key'), path.join(fixture.workspace, 's'));
  fs.symlinkSync(secrets, path.join(fixture.workspace, 'd'));
});
afterEach(() => fixture.cleanup());

describe("the sandbox hides the places a job's Read deny rules name", () => {
  it('no name reaches a denied folder; the workspace reads as before', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), undefined, {
      readDenyRules: [`Read(/${secrets}/**)`],
    });
    // `tac`, not `cat`: the worker refuses a known reader (`cat s`) before the sandbox is involved;
    // the sandbox must hold for every other program too.
    const result = await executeTool('Bash', { command: `tac s; tac d/key; tac ${secrets}/key; cat notes.txt` }, ctx);
    expect(result.content).not.toContain(KEY);
    expect(result.content).toContain('plain notes');
    expect(fs.readFileSync(path.join(secrets, 'key'), 'utf8')).toBe(`${KEY}\n`);
  });

  it('a rule naming one file hides that file', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), undefined, {
      readDenyRules: [`Read(/${secrets}/key)`],
    });
    const result = await executeTool('Bash', { command: 'tac s; tac d/key' }, ctx);
    expect(result.content).not.toContain(KEY);
  });

  it('without the rule the set-up is a real one: the link leads to the key', async () => {
    const result = await executeTool('Bash', { command: 'tac s' }, sandboxContext(fixture, fixtureEngine(fixture)));
    expect(result.content).toContain(KEY);
  });

  it('a place inside the workspace is left to the rules: git must not see its files deleted', async () => {
    fs.mkdirSync(path.join(fixture.workspace, 'config'));
    fs.writeFileSync(path.join(fixture.workspace, 'config', 'prod.env'), 'TOKEN=x\n');
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: fixture.workspace, env: { ...process.env, HOME: fixture.home } });
    git('init', '-q');
    git('add', 'config/prod.env');
    git('commit', '-q', '-m', 'config');
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), undefined, {
      readDenyRules: ['Read(./config/**)'],
    });
    const result = await executeTool('Bash', { command: 'git status --short config' }, ctx);
    expect(result.content).not.toContain('D config/prod.env');
  });
});

describe('readDenyHiddenPaths', () => {
  it('takes the places outside the workspace a rule names outright; wildcards are left to the rules', () => {
    expect(
      readDenyHiddenPaths(
        [
          'Read(./secrets/**)',
          'Read(/config/prod.env)',
          'Read(//etc/app.key)',
          'Read(~/.aws/**)',
          'Read(../shared/keys)',
          'Read(.env)',
          'Read(**/*.pem)',
          'Read(./certs/*.key)',
          'Read',
          'Edit(//etc/other.key)',
          'Bash(rm:*)',
        ],
        '/ws/app',
        '/home/u',
      ),
    ).toEqual(['/etc/app.key', '/home/u/.aws', '/ws/shared/keys']);
  });
});
