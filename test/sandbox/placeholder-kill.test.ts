import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WantedPlaceholder } from '../../src/activities/sandbox/placeholders';
import { Placeholders } from '../../src/activities/sandbox/placeholders';
import { TS_NODE_ARGS } from '../support/ts-run';

/**
 * A worker can be SIGKILLed at any instruction, also while it makes or removes a stand-in. Whatever
 * it leaves must be known again and cleared by the next command in that workspace: before, a kill
 * between making a folder and stamping it left an empty `.gitconfig/` that nothing ever removed
 * (seen in the chaos test), and a kill while a `.git` stand-in lost its `hooks` left an unstamped
 * `.git`.
 */
const root = path.join(__dirname, '..', '..');
const KILLS = 30;
const STAGING = '.durable-agent-stand-in.';

function gitEntries(git: string): WantedPlaceholder[] {
  return [
    { path: path.join(git, 'config'), placeholder: { type: 'file', content: '' } },
    { path: path.join(git, 'commondir'), placeholder: { type: 'file', content: '.\n' } },
    { path: path.join(git, 'hooks'), placeholder: { type: 'directory' } },
    { path: path.join(git, 'info'), placeholder: { type: 'directory' } },
  ];
}

/**
 * A child that makes and removes stand-ins over and over until it is killed. `whole`: one command
 * at a time wants a missing `.gitconfig` and a missing `.git` with entries in it. `nested`: one
 * command holds a `.git` stand-in while another makes and removes the git entries inside it, as
 * a second command sees that `.git` present and protects what a git directory holds.
 */
const CHILD = `
const { Placeholders } = require(${JSON.stringify(path.join(root, 'src/activities/sandbox/placeholders'))});
const [mode, workspace, entries] = JSON.parse(process.argv[1]);
const path = require('node:path');
const git = path.join(workspace, '.git');
(async () => {
  const placeholders = new Placeholders();
  if (mode === 'nested') await placeholders.acquire([{ path: git, placeholder: { type: 'directory' } }]);
  process.stdout.write('ready\\n');
  for (;;) {
    const lease =
      mode === 'nested'
        ? await placeholders.acquireFound(async () => ({ wanted: entries, present: [git] }))
        : await placeholders.acquire([
            { path: path.join(workspace, '.gitconfig'), placeholder: { type: 'directory' } },
            { path: git, placeholder: { type: 'directory' } },
            ...entries.slice(1, 3),
          ]);
    await lease.release();
  }
})();
`;

function listAll(dir: string): Array<{ entry: string; mtimeMs: number }> {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((entry) => ({
    entry,
    mtimeMs: fs.lstatSync(path.join(dir, entry)).mtimeMs,
  }));
}

async function runAndKill(args: unknown[], delayMs: number): Promise<void> {
  const child = spawn(process.execPath, [...TS_NODE_ARGS, '-e', CHILD, JSON.stringify(args)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the child exited with ${code} before it was ready`)));
    });
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

let workspace: string;
beforeEach(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'placeholder-kill-'));
  fs.writeFileSync(path.join(workspace, 'file.txt'), 'real\n');
});
afterEach(() => fs.rmSync(workspace, { recursive: true, force: true }));

test(`SIGKILL while whole stand-ins are made and removed leaves nothing the next command cannot clear (${KILLS} kills)`, async () => {
  const git = path.join(workspace, '.git');
  const wanted: WantedPlaceholder[] = [
    { path: path.join(workspace, '.gitconfig'), placeholder: { type: 'directory' } },
    { path: git, placeholder: { type: 'directory' } },
    ...gitEntries(git).slice(1, 3),
  ];
  let leftBehind = 0;
  for (let kill = 0; kill < KILLS; kill++) {
    await runAndKill(['whole', workspace, gitEntries(git)], 5 + Math.floor(Math.random() * 40));
    // Every stand-in left is stamped (known again); anything else is a staging entry.
    const unknown = listAll(workspace).filter(
      ({ entry, mtimeMs }) =>
        entry !== 'file.txt' && mtimeMs !== 0 && !entry.split(path.sep).some((part) => part.startsWith(STAGING)),
    );
    expect({ kill, unknown }).toEqual({ kill, unknown: [] });
    if (fs.readdirSync(workspace).length > 1) leftBehind++;
    // The next command there adopts what was left and its end clears it all.
    const lease = await new Placeholders().acquire(wanted);
    await lease.release();
    expect({ kill, left: fs.readdirSync(workspace, { recursive: true }) }).toEqual({ kill, left: ['file.txt'] });
  }
  // The kills did land while stand-ins stood, not only between rounds.
  expect(leftBehind).toBeGreaterThan(0);
}, 180_000);

test(`SIGKILL while stand-ins come and go inside a held .git stand-in: the journal's cleanup clears it all (${KILLS} kills)`, async () => {
  const git = path.join(workspace, '.git');
  for (let kill = 0; kill < KILLS; kill++) {
    await runAndKill(['nested', workspace, gitEntries(git)], 5 + Math.floor(Math.random() * 40));
    // The next worker: a command that finds .git present and protects its entries; then, once the
    // dead worker's commands are known to have ended, what their journal records name.
    const placeholders = new Placeholders();
    const there = fs.existsSync(git);
    const lease = await placeholders.acquireFound(async () => ({
      wanted: there ? gitEntries(git).filter((item) => !fs.existsSync(item.path)) : [],
      present: there ? [git, ...gitEntries(git).flatMap((item) => (fs.existsSync(item.path) ? [item.path] : []))] : [],
    }));
    await lease.release();
    await placeholders.releaseLeftovers([git, ...gitEntries(git).map((item) => item.path)]);
    expect({ kill, left: fs.readdirSync(workspace, { recursive: true }) }).toEqual({ kill, left: ['file.txt'] });
  }
}, 180_000);
