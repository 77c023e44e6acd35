import { rm } from 'node:fs/promises';
import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_MAX_OUTPUT_CHARS,
  BASH_MAX_TIMEOUT_MS,
  bashInputSchema,
} from '../../src/shared/tools/bash';
import { writeFixture } from './support/fixture';
import { ToolSession, tempWorkspace } from './support/session';

/** Golden outputs of Bash, and its limits as Claude Code sets them. */
let workspace: string;
let session: ToolSession;
const run = (input: unknown) => session.seen('Bash', input);
const ok = (...lines: string[]) => ({ isError: false, content: lines.join('\n') });
const error = (...lines: string[]) => ({ isError: true, content: lines.join('\n') });

beforeAll(async () => {
  workspace = await tempWorkspace('tools-golden-bash-');
  writeFixture(workspace);
  session = new ToolSession(workspace);
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('golden: Bash', () => {
  it('has Claude Code limits: 2 min default, 10 min max, 30,000 characters of output', () => {
    expect([BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, BASH_MAX_OUTPUT_CHARS]).toEqual([120_000, 600_000, 30_000]);
    expect(bashInputSchema.safeParse({ command: 'x', timeout: 600_000 }).success).toBe(true);
    expect(bashInputSchema.safeParse({ command: 'x', timeout: 600_001 }).success).toBe(false);
  });

  it('output, stderr, no output', async () => {
    expect(await run({ command: '{ echo hello; echo oops >&2; } 2>&1' })).toEqual(ok('hello', 'oops'));
    expect(await run({ command: 'true' })).toEqual(ok('(Bash completed with no output)'));
  });

  it("exit code, timeout, a failed command's cut output", async () => {
    expect(await run({ command: 'ls src; exit 4' })).toEqual(error('Exit code 4', 'index.ts', 'legacy.js', 'util'));
    expect(await run({ command: 'echo started; sleep 5', timeout: 1200 })).toEqual(
      error('Exit code 137', 'Command timed out after 1s', 'started'),
    );
    expect(await run({ command: "printf 'x%.0s' $(seq 30010); exit 2" })).toEqual(
      error('Exit code 2', 'x'.repeat(30_000), '... [output truncated: 10 more characters not shown]'),
    );
  });
});
