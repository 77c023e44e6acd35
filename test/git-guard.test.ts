import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { GIT_GUARD_ENV, gitShimDir } from '../src/activities/sandbox/git-hardening';
import { makeWorkspace, tempDir } from './support/harness';

/**
 * Issue 25, finding 4: with a Bash deny or ask rule in the job, a program the repository's own
 * config names for git to run (`core.sshCommand` on `git fetch`, a merge driver on `git merge`)
 * would walk around the rule, which only sees `git fetch`. The worker's git shim refuses to run
 * git in such a repository, naming the setting, and leaves ordinary repositories alone.
 */
const home = tempDir('git-guard-home');

function repository(): string {
  const workspace = makeWorkspace({ 'a.txt': 'one\n' });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: workspace, env: { ...process.env, HOME: home } });
  return workspace;
}

function setConfig(workspace: string, key: string, value: string): void {
  execFileSync('git', ['config', key, value], { cwd: workspace, env: { ...process.env, HOME: home } });
}

/** A key as git lists it: section and name in lower case, a subsection as written. */
function asGitPrints(key: string): string {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  return key.slice(0, first).toLowerCase() + key.slice(first, last) + key.slice(last).toLowerCase();
}

/** The agent's git: the shim first on PATH, guarded or not. */
function agentGit(workspace: string, args: string[], guarded = true) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    PATH: `${gitShimDir()}${path.delimiter}${process.env.PATH}`,
  };
  if (guarded) env[GIT_GUARD_ENV] = '1';
  else delete env[GIT_GUARD_ENV];
  return spawnSync('git', args, { cwd: workspace, env, encoding: 'utf8' });
}

describe("a guarded git and the repository's own config", () => {
  it.each([
    ['core.sshCommand', 'touch MARK'],
    ['core.editor', 'touch MARK'],
    ['sequence.editor', 'touch MARK'],
    ['core.askpass', 'touch MARK'],
    ['diff.external', 'touch MARK'],
    ['diff.x.textconv', 'touch MARK'],
    ['merge.x.driver', 'touch MARK'],
    ['mergetool.x.cmd', 'touch MARK'],
    ['filter.a=b.clean', 'touch MARK'],
    ['filter.lfs.smudge', 'git-lfs smudge -- %f; touch MARK'],
    // A git-lfs of the workspace's own, not the one on PATH.
    ['filter.lfs.clean', './bin/git-lfs clean -- %f'],
    ['instaweb.httpd', 'touch MARK'],
    ['sendemail.sendmailCmd', 'touch MARK'],
    ['credential.helper', '!touch MARK'],
    ['credential.https://example.com.helper', '/tmp/helper'],
    ['remote.origin.uploadpack', 'touch MARK'],
    ['protocol.ext.allow', 'always'],
    ['submodule.lib.update', '!touch MARK'],
    ['interactive.diffFilter', 'touch MARK'],
    ['trailer.sign.command', 'touch MARK'],
  ])('refuses every git command where %s is set, naming it', (key, value) => {
    const workspace = repository();
    setConfig(workspace, key, value);
    const run = agentGit(workspace, ['log', '--oneline']);
    expect(run.status).toBe(128);
    expect(run.stderr).toContain(`git: not run: this repository's own config sets ${asGitPrints(key)}`);
    expect(fs.existsSync(path.join(workspace, 'MARK'))).toBe(false);
  });

  it('runs a push the config would have turned into a program, once the guard is off', () => {
    // The control: the same repository, unguarded, does run the program.
    const workspace = repository();
    const bare = tempDir('git-guard-remote');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    execFileSync('git', ['add', 'a.txt'], { cwd: workspace });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'one'], {
      cwd: workspace,
      env: { ...process.env, HOME: home },
    });
    setConfig(workspace, 'remote.origin.url', bare);
    setConfig(workspace, 'remote.origin.receivepack', `touch ${path.join(workspace, 'MARK')}; git-receive-pack`);
    expect(agentGit(workspace, ['push', 'origin', 'HEAD'], true).status).toBe(128);
    expect(fs.existsSync(path.join(workspace, 'MARK'))).toBe(false);
    agentGit(workspace, ['push', 'origin', 'HEAD'], false);
    expect(fs.existsSync(path.join(workspace, 'MARK'))).toBe(true);
  });

  it.each([
    ['filter.lfs.clean', 'git-lfs clean -- %f'],
    ['filter.lfs.process', 'git-lfs filter-process'],
    ['filter.git-crypt.smudge', '"git-crypt" smudge'],
    ['diff.git-crypt.textconv', '"git-crypt" diff'],
    ['filter.git-crypt-prod.clean', '"/usr/local/bin/git-crypt" clean --key-name prod'],
    ['filter.lfs.smudge', 'git-lfs smudge --skip -- %f'],
    ['credential.helper', 'cache --timeout=3600'],
    ['credential.helper', 'store'],
    ['submodule.lib.update', 'rebase'],
    ['protocol.ext.allow', 'never'],
    ['core.hooksPath', '.husky'],
    ['core.pager', 'less'],
    ['alias.co', 'checkout'],
    ['remote.origin.url', 'git@example.com:x/y.git'],
  ])('leaves a repository alone where %s is %s', (key, value) => {
    const workspace = repository();
    setConfig(workspace, key, value);
    const run = agentGit(workspace, ['status', '--short']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('lets git config read and remove the setting, but not open an editor', () => {
    const workspace = repository();
    setConfig(workspace, 'core.editor', 'touch MARK');
    expect(agentGit(workspace, ['config', '--get', 'core.editor']).stdout).toBe('touch MARK\n');
    expect(agentGit(workspace, ['config', '-e']).status).toBe(128);
    expect(agentGit(workspace, ['config', '--ed']).status).toBe(128);
    // `edit` as a value is not the subcommand.
    expect(agentGit(workspace, ['config', 'user.name', 'edit']).status).toBe(0);
    expect(fs.existsSync(path.join(workspace, 'MARK'))).toBe(false);
    expect(agentGit(workspace, ['config', '--unset', 'core.editor']).status).toBe(0);
    expect(agentGit(workspace, ['log', '--oneline']).stderr).not.toContain('not run');
  });

  it("checks the repository git is pointed at with -C, and not the user's own config", () => {
    const here = repository();
    const other = repository();
    setConfig(other, 'core.sshCommand', 'touch MARK');
    expect(agentGit(here, ['-C', other, 'status']).status).toBe(128);
    const userHome = tempDir('git-guard-user');
    fs.writeFileSync(path.join(userHome, '.gitconfig'), '[core]\n\tsshCommand = ssh -i ~/.ssh/deploy\n');
    const run = spawnSync('git', ['status', '--short'], {
      cwd: here,
      encoding: 'utf8',
      env: {
        ...process.env,
        HOME: userHome,
        PATH: `${gitShimDir()}${path.delimiter}${process.env.PATH}`,
        [GIT_GUARD_ENV]: '1',
      },
    });
    expect(run.status).toBe(0);
  });
});
