import fs from 'node:fs';
import path from 'node:path';
import { readDenyHiddenPaths } from '../../src/activities/sandbox/read-deny-mounts';
import { executeTool } from '../../src/activities/tools/index';
import { fixtureEngine, makeSandboxFixture, sandboxContext, type SandboxFixture } from './support';

/**
 * Issue 25, finding 5: with `Read(./secrets/**)` denied, `cat s` where `s` is a link into
 * `secrets/` was read-only to the rules (they see the name `s`) and printed the key. The sandbox
 * now hides what the job's Read deny rules name outright, under every name that leads there.
 */
let fixture: SandboxFixture;
const KEY = 'sk-secret-key-for-the-read-deny-test';

beforeEach(() => {
  fixture = makeSandboxFixture();
  fs.mkdirSync(path.join(fixture.workspace, 'secrets'));
  fs.writeFileSync(path.join(fixture.workspace, 'secrets', 'key'), `${KEY}\n`);
  fs.writeFileSync(path.join(fixture.workspace, 'notes.txt'), 'plain notes\n');
  fs.symlinkSync('secrets/key', path.join(fixture.workspace, 's'));
  fs.symlinkSync('secrets', path.join(fixture.workspace, 'd'));
});
afterEach(() => fixture.cleanup());

const READS = 'cat s; cat d/key; cat secrets/key; ls secrets; cat notes.txt';

describe("the sandbox hides what a job's Read deny rules name", () => {
  it('no name reaches a denied folder; the rest of the workspace reads as before', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), undefined, { readDenyRules: ['Read(./secrets/**)'] });
    const result = await executeTool('Bash', { command: READS }, ctx);
    expect(result.content).not.toContain(KEY);
    expect(result.content).toContain('plain notes');
    // The files are still there for the job's own later, permitted work.
    expect(fs.readFileSync(path.join(fixture.workspace, 'secrets', 'key'), 'utf8')).toBe(`${KEY}\n`);
  });

  it('a rule naming one file hides that file', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), undefined, { readDenyRules: ['Read(secrets/key)'] });
    const result = await executeTool('Bash', { command: 'cat s; cat d/key' }, ctx);
    expect(result.content).not.toContain(KEY);
  });

  it('without the rule the set-up is a real one: the link leads to the key', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture));
    const result = await executeTool('Bash', { command: 'cat s' }, ctx);
    expect(result.content).toContain(KEY);
  });
});

describe('readDenyHiddenPaths', () => {
  it('takes the places a rule names outright, and leaves wildcards to the rules', () => {
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
          'Edit(./secrets/**)',
          'Bash(rm:*)',
        ],
        '/ws/app',
        '/home/u',
      ),
    ).toEqual(['/ws/app/secrets', '/ws/app/config/prod.env', '/etc/app.key', '/home/u/.aws', '/ws/shared/keys']);
  });
});
