import fs from 'node:fs';
import path from 'node:path';
import { homeShownPlaces } from '../../src/activities/sandbox/mounts';
import { executeTool } from '../../src/activities/tools/index';
import { fixtureEngine, makeSandboxFixture, sandboxContext, type SandboxFixture } from './support';

/**
 * Issue 25: 13 credential files outside the hidden list (`~/.yarnrc`, `pip.conf`,
 * `~/.terraformrc`, a fish config, `~/.bash_aliases`, ...) were readable from Bash. The home is
 * now hidden as a whole; toolchains, caches, the user's git config and the `PATH` are shown.
 */
let fixture: SandboxFixture;

const SECRET_FILES = [
  '.yarnrc',
  '.config/pip/pip.conf',
  '.pip/pip.conf',
  '.terraformrc',
  '.config/fish/config.fish',
  '.bash_aliases',
  '.notes-with-a-token',
];

beforeEach(() => {
  fixture = makeSandboxFixture();
  for (const relative of SECRET_FILES) {
    fs.mkdirSync(path.dirname(path.join(fixture.home, relative)), { recursive: true });
    fs.writeFileSync(path.join(fixture.home, relative), `HOME-SECRET ${relative}\n`);
  }
  // A toolchain installed under the home, on the PATH.
  const bin = path.join(fixture.home, '.mytool', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'mytool'), '#!/bin/sh\necho mytool-ran\n', { mode: 0o755 });
  fs.mkdirSync(path.join(fixture.home, '.cache', 'pip'), { recursive: true });
  fs.writeFileSync(path.join(fixture.home, '.cache', 'pip', 'wheel.txt'), 'cached wheel\n');
});
afterEach(() => fixture.cleanup());

describe('the home folder in the sandbox', () => {
  it('hides what no list names; shows toolchains on the PATH, caches and the git identity', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture));
    const env = { ...ctx.env, PATH: `${path.join(fixture.home, '.mytool', 'bin')}:${ctx.env?.PATH ?? ''}` };
    const reads = SECRET_FILES.map((relative) => `cat ~/${relative}`).join('; ');
    const result = await executeTool(
      'Bash',
      { command: `${reads}; ls -a ~; mytool; cat ~/.cache/pip/wheel.txt; git config --global user.name` },
      { ...ctx, env },
    );
    expect(result.content).not.toContain('HOME-SECRET');
    expect(result.content).toMatch(/ls: cannot open directory '[^']*': Permission denied/);
    expect(result.content).toContain('mytool-ran');
    expect(result.content).toContain('cached wheel');
    expect(result.content).toContain('Sandbox Test');
  });

  it('shows the whole home again when the job allows reading "~"; credentials stay hidden', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), {
      enabled: true,
      source: 'test',
      filesystem: { allowRead: ['~'] },
    });
    const result = await executeTool('Bash', { command: 'cat ~/.terraformrc; cat ~/.ssh/id_ed25519' }, ctx);
    expect(result.content).toContain('HOME-SECRET .terraformrc');
    expect(result.content).not.toMatch(/PRIVATE KEY|SECRET-/);
  });
});

describe('what the hidden home never does', () => {
  it('a PATH entry in a credential place does not show it', async () => {
    fs.mkdirSync(path.join(fixture.home, '.docker', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(fixture.home, '.docker', 'config.json'), '{"auths":{"x":"HOME-SECRET"}}\n');
    const ctx = sandboxContext(fixture, fixtureEngine(fixture));
    const env = { ...ctx.env, PATH: `${path.join(fixture.home, '.docker', 'bin')}:${ctx.env?.PATH ?? ''}` };
    const result = await executeTool('Bash', { command: 'cat ~/.docker/config.json' }, { ...ctx, env });
    expect(result.content).not.toContain('HOME-SECRET');
  });

  it("a user's denyRead of a place it would show wins", async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), {
      enabled: true,
      source: 'test',
      filesystem: { denyRead: ['~/.cache'] },
    });
    const result = await executeTool('Bash', { command: 'cat ~/.cache/pip/wheel.txt' }, ctx);
    expect(result.content).not.toContain('cached wheel');
  });

  it('a workspace that is the home stays visible and writable; credentials stay hidden', async () => {
    const ctx = sandboxContext(fixture, fixtureEngine(fixture), undefined, { workspace: fixture.home });
    const result = await executeTool(
      'Bash',
      { command: 'touch made-here && echo made; cat .terraformrc; cat .ssh/id_ed25519' },
      ctx,
    );
    expect(result.content).toContain('made');
    expect(result.content).toContain('HOME-SECRET .terraformrc');
    expect(result.content).not.toMatch(/PRIVATE KEY|SECRET-/);
    expect(fs.existsSync(path.join(fixture.home, 'made-here'))).toBe(true);
  });
});

describe('homeShownPlaces', () => {
  it('shows the top folder of a PATH entry under the home, or only the entry in a broad one', () => {
    const places = homeShownPlaces(
      '/home/u',
      '/home/u/.nvm/versions/node/v24/bin:/home/u/.local/bin:/home/u/.docker/bin:/usr/bin:bin',
    );
    expect(places).toEqual(
      expect.arrayContaining(['/home/u/.nvm', '/home/u/.local/bin', '/home/u/.docker/bin', '/home/u/.gitconfig']),
    );
    expect(places).not.toContain('/home/u/.local');
    expect(places).not.toContain('/home/u/.docker');
    expect(places).not.toContain('/usr/bin');
    expect(places.some((place) => !place.startsWith('/home/u/'))).toBe(false);
  });
});
