/**
 * bin/durable-agent.js in a checkout whose sources changed after the build (a `git pull` without
 * `npm run build`): it ran the old build in silence, so a fix just pulled seemed not to work (a
 * newcomer's test found the base-URL check "missing": dist/ was a day old). It now says so.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './support/harness';

/** A checkout of bin/, a built cli.js that says it ran, and one source file. */
function checkout(): {
  root: string;
  source: string;
  run: () => { status: number | null; stderr: string; stdout: string };
} {
  const root = tempDir('checkout');
  fs.mkdirSync(path.join(root, 'bin'));
  fs.copyFileSync(path.join(__dirname, '..', 'bin', 'durable-agent.js'), path.join(root, 'bin', 'durable-agent.js'));
  fs.mkdirSync(path.join(root, 'dist', 'src', 'client'), { recursive: true });
  const cli = path.join(root, 'dist', 'src', 'client', 'cli.js');
  fs.writeFileSync(cli, "exports.main = () => process.stdout.write('ran\\n');\n");
  const source = path.join(root, 'src', 'client', 'cli.ts');
  fs.mkdirSync(path.dirname(source), { recursive: true });
  fs.writeFileSync(source, 'export {};\n');
  // Built after the sources, as `npm run build` leaves it.
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(source, past, past);
  const run = () => {
    const result = spawnSync(process.execPath, [path.join(root, 'bin', 'durable-agent.js'), 'ls'], {
      encoding: 'utf8',
    });
    return { status: result.status, stderr: result.stderr, stdout: result.stdout };
  };
  return { root, source, run };
}

test('a build newer than every source runs without a word', () => {
  const { run } = checkout();
  expect(run()).toEqual({ status: 0, stdout: 'ran\n', stderr: '' });
});

test('a source changed after the build: the old build still runs, and says to rebuild', () => {
  const { root, source, run } = checkout();
  const later = new Date(Date.now() + 60_000);
  fs.utimesSync(source, later, later);
  const result = run();
  expect(result.stdout).toBe('ran\n');
  expect(result.stderr).toBe(
    'durable-agent: src/ has changed since the build in dist/ (a pull or an edit): this runs the old build; ' +
      `run \`npm run build\` in ${root} to use the changes\n`,
  );
});

test('an installed package (no src/) is never said to be stale', () => {
  const { root, run } = checkout();
  fs.rmSync(path.join(root, 'src'), { recursive: true });
  expect(run()).toEqual({ status: 0, stdout: 'ran\n', stderr: '' });
});
