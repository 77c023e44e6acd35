import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadPermissionSettings } from '../../src/activities/permission-settings';

describe('loadPermissionSettings', () => {
  let workspace: string;

  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'perm-settings-'));
  });
  afterEach(() => {
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  const write = (name: string, content: unknown) => {
    fs.mkdirSync(path.join(workspace, '.claude'), { recursive: true });
    fs.writeFileSync(
      path.join(workspace, '.claude', name),
      typeof content === 'string' ? content : JSON.stringify(content, null, 2),
    );
    return path.join(workspace, '.claude', name);
  };
  const project = (content: unknown) => write('settings.json', content);
  const local = (content: unknown) => write('settings.local.json', content);
  const failure = async () => {
    try {
      await loadPermissionSettings(workspace);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected loadPermissionSettings to throw');
  };

  it('returns empty rules when there is no .claude directory', async () => {
    await expect(loadPermissionSettings(workspace)).resolves.toEqual({
      rules: { allow: [], ask: [], deny: [] },
      sources: [],
    });
  });

  it('treats a .claude that is a file like a missing directory', async () => {
    fs.writeFileSync(path.join(workspace, '.claude'), 'not a directory');
    await expect(loadPermissionSettings(workspace)).resolves.toMatchObject({ sources: [] });
  });

  it('reads the project file alone, ignoring other Claude Code settings', async () => {
    const file = project({
      $schema: 'https://json.schemastore.org/claude-code-settings.json',
      model: 'claude-sonnet',
      env: { FOO: '1' },
      hooks: { Stop: [] },
      permissions: {
        allow: ['Bash(npm test:*)', 'Read'],
        deny: ['Read(./.env)'],
        defaultMode: 'acceptEdits',
        additionalDirectories: ['../docs'],
        disableBypassPermissionsMode: 'disable',
      },
    });
    await expect(loadPermissionSettings(workspace)).resolves.toEqual({
      rules: { allow: ['Bash(npm test:*)', 'Read'], ask: [], deny: ['Read(./.env)'] },
      defaultMode: 'acceptEdits',
      sources: [file],
    });
  });

  it('concatenates rule lists and lets the local file win for defaultMode', async () => {
    const projectFile = project({
      permissions: { allow: ['Bash(npm test:*)'], ask: ['Bash(git push:*)'], defaultMode: 'default' },
    });
    const localFile = local({
      permissions: { allow: ['Bash(npm test:*)', 'Edit(src/**)'], deny: ['Bash(rm:*)'], defaultMode: 'dontAsk' },
    });
    await expect(loadPermissionSettings(workspace)).resolves.toEqual({
      rules: { allow: ['Bash(npm test:*)', 'Edit(src/**)'], ask: ['Bash(git push:*)'], deny: ['Bash(rm:*)'] },
      defaultMode: 'dontAsk',
      sources: [projectFile, localFile],
    });
  });

  it('keeps the project defaultMode when the local file sets none', async () => {
    project({ permissions: { defaultMode: 'plan' } });
    local({ permissions: { allow: ['Read'] } });
    await expect(loadPermissionSettings(workspace)).resolves.toMatchObject({ defaultMode: 'plan' });
  });

  it('accepts files without permissions, and the "manual" alias of default', async () => {
    project({ model: 'x' });
    local({ permissions: { defaultMode: 'manual' } });
    await expect(loadPermissionSettings(workspace)).resolves.toMatchObject({ defaultMode: 'default' });
  });

  it('reports malformed JSON with the file, the position and the fix', async () => {
    const file = project('{\n  "permissions": {\n    "allow": ["Read",]\n  }\n}');
    const message = await failure();
    expect(message).toContain(file);
    expect(message).toMatch(/not valid JSON/);
    expect(message).toMatch(/line 3, column \d+/);
    expect(message).toMatch(/no trailing commas/);
  });

  it('reports an empty file', async () => {
    local('');
    expect(await failure()).toMatch(
      /settings\.local\.json: not valid JSON: the file is empty; write \{\} for no settings/,
    );
  });

  it.each([
    [
      { permissions: { allow: 'Bash(npm test:*)' } },
      /permissions\.allow must be an array of rule strings .*not the string "Bash\(npm test:\*\)"/,
    ],
    [
      { permissions: { deny: ['Read(./.env)', 42] } },
      /permissions\.deny\[1\] must be a string such as "Bash\(npm test:\*\)", not the number 42/,
    ],
    [{ permissions: { ask: [null] } }, /permissions\.ask\[0\] must be a string .*not null/],
    [{ permissions: ['Read'] }, /permissions must be an object such as \{"allow"/],
    [{ permissions: { defaultMode: 3 } }, /permissions\.defaultMode must be a string, one of "default", "acceptEdits"/],
    [
      { permissions: { defaultMode: 'yolo' } },
      /permissions\.defaultMode "yolo" is not a permission mode; use one of "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"/,
    ],
    [
      { permissions: { defaultMode: 'auto' } },
      /"auto" is Claude Code's classifier mode, which durable-agent does not support/,
    ],
    [
      { permissions: { additionalDirectories: '../x' } },
      /permissions\.additionalDirectories must be an array of directory paths/,
    ],
    [['Read'], /the file must hold a JSON object/],
    ['"just a string"', /the file must hold a JSON object/],
  ])('reports wrong types: %j', async (content, pattern) => {
    const file = project(content);
    const message = await failure();
    expect(message.startsWith(file)).toBe(true);
    expect(message).toMatch(pattern);
  });

  it('reports every problem of a file at once', async () => {
    local({ permissions: { allow: [1, 'Read'], deny: {} } });
    const message = await failure();
    expect(message).toMatch(/settings\.local\.json has 2 problems:/);
    expect(message).toMatch(/- permissions\.allow\[0\] must be a string/);
    expect(message).toMatch(/- permissions\.deny must be an array/);
  });

  it('reports invalid rules with the list, the rule and the fix', async () => {
    const file = local({ permissions: { allow: ['Bash(npm test:*)', 'Write(src/**)'], deny: ['Bash(rm:* -rf)'] } });
    const message = await failure();
    expect(message).toContain(`${file} has 2 problems:`);
    expect(message).toContain('permissions.allow[1] "Write(src/**)": Write rules take no specifier');
    expect(message).toContain('write "Edit(src/**)"');
    expect(message).toContain('permissions.deny[0] "Bash(rm:* -rf)": ":*" is only valid at the end');
  });

  it('reports a rule problem and a bad mode together', async () => {
    project({ permissions: { allow: ['Bash()'], defaultMode: 'Plan' } });
    const message = await failure();
    expect(message).toMatch(/has 2 problems/);
    expect(message).toMatch(/defaultMode "Plan" is not a permission mode/);
    expect(message).toMatch(/permissions\.allow\[0\] "Bash\(\)": the specifier is empty/);
  });

  it('fails on the first bad file even when the other is fine', async () => {
    project({ permissions: { allow: ['Read'] } });
    const file = local('{ nope');
    expect(await failure()).toContain(file);
  });

  it('reports a settings path it cannot read', async () => {
    fs.mkdirSync(path.join(workspace, '.claude', 'settings.json'), { recursive: true });
    expect(await failure()).toMatch(/settings\.json: cannot be read \(EISDIR\)/);
  });
});
