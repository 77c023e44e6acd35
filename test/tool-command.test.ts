import fs from 'node:fs';
import path from 'node:path';
import { runToolCommand } from '../src/client/tool-command';
import type { ToolCommandOptions } from '../src/client/tool-command';
import { makeWorkspace } from './support/harness';

async function run(name: string, json: string, options: Partial<ToolCommandOptions> & { cwd: string }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runToolCommand(
    name,
    json,
    { allow: [], deny: [], ask: [], ...options },
    { write: (line) => out.push(line) },
    { write: (line) => err.push(line) },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('durable-agent tool', () => {
  test('prints the tool_result a job would give the model', async () => {
    const cwd = makeWorkspace({ 'a.txt': 'alpha\nbeta\n' });
    const result = await run('Read', '{"file_path":"a.txt"}', { cwd });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out)).toEqual({
      type: 'tool_result',
      tool_use_id: 'cli',
      content: '     1\talpha\n     2\tbeta\n     3\t',
    });
    expect(result.err).toContain('permission: allow');
  });

  test('applies the workspace settings and the flags: deny wins, ask needs --yes', async () => {
    const cwd = makeWorkspace({
      'a.txt': 'alpha\n',
      '.claude/settings.json': JSON.stringify({ permissions: { deny: ['Bash(rm:*)'] } }),
    });
    const denied = await run('Bash', '{"command":"rm a.txt"}', { cwd, permissionMode: 'bypassPermissions' });
    expect(denied.code).toBe(2);
    expect(denied.err).toContain('Bash(rm:*)');
    expect(fs.existsSync(path.join(cwd, 'a.txt'))).toBe(true);

    const asks = await run('Bash', '{"command":"touch b.txt"}', { cwd });
    expect(asks.code).toBe(2);
    expect(asks.err).toContain('--yes');
    expect(fs.existsSync(path.join(cwd, 'b.txt'))).toBe(false);

    const yes = await run('Bash', '{"command":"touch b.txt"}', { cwd, yes: true });
    expect(yes.code).toBe(0);
    expect(fs.existsSync(path.join(cwd, 'b.txt'))).toBe(true);
  });

  test('an Edit needs no prior Read in a one-shot call; a bad input is an error result', async () => {
    const cwd = makeWorkspace({ 'a.txt': 'alpha\n' });
    const edit = await run('Edit', '{"file_path":"a.txt","old_string":"alpha","new_string":"omega"}', {
      cwd,
      permissionMode: 'acceptEdits',
    });
    expect(edit.code).toBe(0);
    expect(fs.readFileSync(path.join(cwd, 'a.txt'), 'utf8')).toBe('omega\n');

    const bad = await run('Read', '{"file_path":42}', { cwd });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toMatchObject({ is_error: true });
    expect(JSON.parse(bad.out).content).toContain('file_path');

    const notJson = await run('Read', '{file_path:', { cwd });
    expect(notJson.code).toBe(2);
    expect(notJson.err).toContain('not valid JSON');
  });
});
