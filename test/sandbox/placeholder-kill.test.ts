import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WantedPlaceholder } from '../../src/activities/sandbox/placeholders';
import { Placeholders } from '../../src/activities/sandbox/placeholders';

/**
 * A worker can be SIGKILLed at any instruction, also while it makes or removes a stand-in. Whatever
 * it leaves must be known again and cleared by the next command in that workspace: before, a kill
 * between making a folder and stamping it left an empty `.gitconfig/` that nothing ever removed
 * (seen in the chaos test), and a kill while a `.git` stand-in lost its `hooks` left an unstamped
 * `.git`.
 */
const root = path.join(__dirname, '..', '..');
const KILLS = 30;

function wantedIn(workspace: string): WantedPlaceholder[] {
  const git = path.join(workspace, '.git');
  return [
    { path: path.join(workspace, '.gitconfig'), placeholder: { type: 'directory' } },
    { path: git, placeholder: { type: 'directory' } },
    { path: path.join(git, 'hooks'), placeholder: { type: 'directory' } },
    { path: path.join(git, 'commondir'), placeholder: { type: 'file', content: '.\n' } },
  ];
}

/** A child that makes and removes the stand-ins over and over until it is killed. */
const CHILD = `
const { Placeholders } = require(${JSON.stringify(path.join(root, 'src/activities/sandbox/placeholders'))});
const wanted = JSON.parse(process.argv[1]);
(async () => {
  const placeholders = new Placeholders();
  process.stdout.write('ready\\n');
  for (;;) {
    const lease = await placeholders.acquire(wanted);
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

async function runAndKill(wanted: WantedPlaceholder[], delayMs: number): Promise<void> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-e', CHILD, JSON.stringify(wanted)],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
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

test(`SIGKILL while stand-ins are made and removed leaves nothing the next command cannot clear (${KILLS} kills)`, async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'placeholder-kill-'));
  try {
    fs.writeFileSync(path.join(workspace, 'file.txt'), 'real\n');
    const wanted = wantedIn(workspace);
    let leftBehind = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      await runAndKill(wanted, 5 + Math.floor(Math.random() * 40));
      // Every stand-in left is stamped (known again); anything else is a staging entry.
      const unknown = listAll(workspace).filter(
        ({ entry, mtimeMs }) =>
          entry !== 'file.txt' &&
          mtimeMs !== 0 &&
          !entry.split(path.sep).some((part) => part.startsWith('.durable-agent-stand-in.')),
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
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}, 180_000);
