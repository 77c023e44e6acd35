/**
 * The git lines of the system prompt, from one `git status --short --branch` in real repositories:
 * a branch with an upstream it is ahead of, a repository with no commits yet, a detached HEAD.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { branchOfStatusHeader, buildSystemPrompt } from '../src/activities/system-prompt';
import { FileContentStore } from '../src/activities/store/content-store';
import { tempDir } from './support/harness';

describe('system prompt: git branch and status', () => {
  const home = tempDir('git-home');
  const toolEnv = { PATH: process.env.PATH, HOME: home };
  const git = (cwd: string, args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd,
      env: toolEnv,
      stdio: 'pipe',
    }).toString();

  async function gitLines(workspace: string): Promise<string> {
    const store = new FileContentStore(tempDir('store'));
    const { ref } = await buildSystemPrompt(
      { store, clock: () => new Date('2026-12-01T00:00:00Z'), toolEnv },
      { workspace, model: 'claude-sonnet-5-5' },
    );
    const prompt = await store.get<string>(ref);
    return prompt.slice(prompt.indexOf('Git branch:')).split('\n\n')[0]!;
  }

  function repo(branch: string): string {
    const dir = tempDir('repo');
    git(dir, ['init', '-q', '-b', branch]);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    return dir;
  }

  test('a branch ahead of its upstream: its name, and status lines as git prints them', async () => {
    const upstream = repo('main');
    git(upstream, ['add', 'a.txt']);
    git(upstream, ['commit', '-q', '-m', 'one']);
    const clone = tempDir('clone');
    git(clone, ['clone', '-q', upstream, '.']);
    git(clone, ['checkout', '-q', '-b', 'feature/login', '--track', 'origin/main']);
    fs.writeFileSync(path.join(clone, 'b.txt'), 'b\n');
    git(clone, ['add', 'b.txt']);
    git(clone, ['commit', '-q', '-m', 'two']);
    fs.writeFileSync(path.join(clone, 'a.txt'), 'changed\n');
    fs.writeFileSync(path.join(clone, 'new.txt'), 'new\n');

    expect(await gitLines(clone)).toBe('Git branch: feature/login\nGit status:\n M a.txt\n?? new.txt');
  });

  test('a repository with no commits yet names its branch', async () => {
    expect(await gitLines(repo('trunk'))).toBe('Git branch: trunk\nGit status:\n?? a.txt');
  });

  test('a clone of an empty repository names its branch', async () => {
    const bare = tempDir('bare');
    git(bare, ['init', '-q', '--bare', '-b', 'main']);
    const clone = tempDir('empty-clone');
    git(clone, ['clone', '-q', bare, '.']);
    expect(await gitLines(clone)).toBe('Git branch: main\nGit status:\n(clean)');
  });

  test('a header the repository config colours still names the branch', async () => {
    const dir = repo('main');
    git(dir, ['add', 'a.txt']);
    git(dir, ['commit', '-q', '-m', 'one']);
    git(dir, ['config', 'color.ui', 'always']);
    git(dir, ['config', 'color.status', 'always']);
    git(dir, ['checkout', '-q', '-b', 'topic']);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'changed\n');
    const lines = await gitLines(dir);
    expect(lines).toBe('Git branch: topic\nGit status:\n M a.txt');
  });

  test('a detached HEAD, with a clean tree', async () => {
    const dir = repo('main');
    git(dir, ['add', 'a.txt']);
    git(dir, ['commit', '-q', '-m', 'one']);
    git(dir, ['checkout', '-q', '--detach']);
    expect(await gitLines(dir)).toBe('Git branch: (detached HEAD)\nGit status:\n(clean)');
  });

  test("core.worktree in the repository's config does not put another folder's file names in the prompt", async () => {
    // Issue 25: a repository naming a hidden folder as its work tree listed the files in it.
    const hidden = tempDir('hidden');
    fs.writeFileSync(path.join(hidden, 'id_ed25519-of-someone-else'), 'key\n');
    const dir = repo('main');
    git(dir, ['config', 'core.worktree', hidden]);
    const store = new FileContentStore(tempDir('store'));
    const { ref } = await buildSystemPrompt(
      { store, clock: () => new Date('2026-12-01T00:00:00Z'), toolEnv },
      { workspace: dir, model: 'claude-sonnet-5-5' },
    );
    const prompt = await store.get<string>(ref);
    expect(prompt).not.toContain('id_ed25519-of-someone-else');
    expect(prompt).toContain("Git: this repository's config sets core.worktree, so its status is not shown");
  });

  test.each([
    ['## main', 'main'],
    ['## main...origin/main [ahead 1, behind 2]', 'main'],
    ['## feature/x...origin/feature/x', 'feature/x'],
    ['## release-1.2...origin/release-1.2 [gone]', 'release-1.2'],
    ['## No commits yet on trunk', 'trunk'],
    ['## No commits yet on main...origin/main [gone]', 'main'],
    ['## Initial commit on master', 'master'],
    ['## Initial commit on master...origin/master', 'master'],
    ['## HEAD (no branch)', '(detached HEAD)'],
    ['', '(unknown)'],
  ])('status header %j names branch %j', (header, branch) => {
    expect(branchOfStatusHeader(header)).toBe(branch);
  });
});
