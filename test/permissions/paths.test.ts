import fs from 'node:fs';
import path from 'node:path';
import {
  isInsideDirectory,
  matchPathPattern,
  normalizePosixPath,
  parseRule,
  readDenyRuleFor,
  resolveToolPath,
} from '../../src/shared/permissions';

describe('normalizePosixPath', () => {
  it.each([
    ['/a/b/../c', '/a/c'],
    ['/a/./b//c/', '/a/b/c'],
    ['/../../etc', '/etc'],
    ['/', '/'],
    ['//x', '/x'],
    ['a/../../b', '../b'],
    ['./a/./b', 'a/b'],
    ['a/..', '.'],
    ['', '.'],
  ])('%j → %j', (input, expected) => {
    expect(normalizePosixPath(input)).toBe(expected);
  });

  it('agrees with node:path on a range of inputs', () => {
    for (const input of ['/a/b/../../c', '/x/./y/../z/', '/a//b///c/..', 'a/b/../../..', '../x/./y']) {
      expect(normalizePosixPath(input)).toBe(path.posix.normalize(input).replace(/(.)\/$/, '$1'));
    }
  });
});

describe('resolveToolPath and isInsideDirectory', () => {
  it('resolves relative paths against the workspace, without expanding ~', () => {
    expect(resolveToolPath('src/a.ts', '/ws')).toBe('/ws/src/a.ts');
    expect(resolveToolPath('../x', '/ws')).toBe('/x');
    expect(resolveToolPath('/etc/../ws/a', '/ws')).toBe('/ws/a');
    expect(resolveToolPath('~/x', '/ws')).toBe('/ws/~/x');
  });

  it('compares whole segments', () => {
    expect(isInsideDirectory('/ws/a', '/ws')).toBe(true);
    expect(isInsideDirectory('/ws', '/ws')).toBe(true);
    expect(isInsideDirectory('/wsx/a', '/ws')).toBe(false);
    expect(isInsideDirectory('/anything', '/')).toBe(true);
  });
});

describe('matchPathPattern (gitignore-style)', () => {
  const matches = (rule: string, file: string, homeDir: string | null = '/home/u') => {
    const parsed = parseRule(rule);
    if (!parsed.ok || parsed.rule.kind !== 'path') throw new Error(`not a path rule: ${rule}`);
    return matchPathPattern(file, parsed.rule.pattern, '/ws', homeDir ?? undefined);
  };

  it.each([
    ['Read(./secrets/**)', '/ws/secrets/a/b.pem', true],
    ['Read(./secrets/**)', '/ws/secrets', true],
    ['Read(./secrets/**)', '/ws/other/secrets/a', false],
    ['Read(secrets/**)', '/ws/secrets/x', true],
    ['Read(secrets)', '/ws/a/secrets/x', true],
    ['Read(*.env)', '/ws/deep/er/prod.env', true],
    ['Read(*.env)', '/ws/.env', true],
    ['Read(.env)', '/ws/.env.local', false],
    ['Read(.env*)', '/ws/.env.local', true],
    ['Read(src/*.ts)', '/ws/src/a.ts', true],
    ['Read(src/*.ts)', '/ws/src/x/a.ts', false],
    ['Read(src/**/*.ts)', '/ws/src/a.ts', true],
    ['Read(src/**/*.ts)', '/ws/src/x/y/a.ts', true],
    ['Read(src/?.ts)', '/ws/src/a.ts', true],
    ['Read(src/?.ts)', '/ws/src/ab.ts', false],
    ['Read(src/a\\*.ts)', '/ws/src/a*.ts', true],
    ['Read(src/a\\*.ts)', '/ws/src/ab.ts', false],
    ['Read(/src/**)', '/ws/src/a', true],
    ['Read(/src/**)', '/src/a', false],
    ['Read(//src/**)', '/src/a', true],
    ['Read(//)', '/anything/at/all', true],
    ['Read(~/.ssh/*)', '/home/u/.ssh/id_rsa', true],
    ['Read(~/.ssh/*)', '/ws/.ssh/id_rsa', false],
    ['Read(~)', '/home/u/x', true],
    ['Read(../shared/**)', '/shared/lib.ts', true],
    ['Read(../shared/**)', '/ws/shared/lib.ts', false],
    ['Read(.)', '/ws/a', true],
    ['Read(.)', '/other', false],
  ])('%s vs %s → %s', (rule, file, expected) => {
    expect(matches(rule, file)).toBe(expected);
  });

  it('cannot decide ~ rules without a home directory', () => {
    expect(matches('Read(~/.ssh/**)', '/home/u/.ssh/x', null)).toBe('unknown');
  });
});

describe('readDenyRuleFor (for filtering search results)', () => {
  const ctx = {
    rules: { allow: [], ask: [], deny: ['Read(./.env)', 'Edit(src/**)', 'Read(*.pem)'] },
    workspace: '/ws',
  };
  it('names the Read deny rule that covers a path', () => {
    expect(readDenyRuleFor('.env', ctx)).toBe('Read(./.env)');
    expect(readDenyRuleFor('/ws/keys/a.pem', ctx)).toBe('Read(*.pem)');
    expect(readDenyRuleFor('src/a.ts', ctx)).toBeUndefined();
    expect(readDenyRuleFor('sub/.env', ctx)).toBeUndefined();
  });
});

describe('src/shared/permissions stays workflow-safe', () => {
  const dir = path.join(__dirname, '../../src/shared/permissions');
  const files = fs.readdirSync(dir).filter((name) => name.endsWith('.ts'));

  it.each(files)('%s imports no Node built-in and reads no clock, randomness or environment', (name) => {
    const source = fs.readFileSync(path.join(dir, name), 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((match) => match[1] as string);
    for (const specifier of imports) expect(specifier).toMatch(/^\.\.?\//);
    expect(source).not.toMatch(/\bprocess\.|\bDate\b|Math\.random|require\(/);
  });
});

describe('src/shared/shell, which it imports, stays workflow-safe', () => {
  const dir = path.join(__dirname, '../../src/shared/shell');
  const permissions = path.join(__dirname, '../../src/shared/permissions');
  const files = ['.', 'programs'].flatMap((sub) =>
    fs
      .readdirSync(path.join(dir, sub))
      .filter((name) => name.endsWith('.ts'))
      .map((name) => path.join(sub, name)),
  );

  it.each(files)('%s imports only from here or the permission engine, and reads no clock or environment', (name) => {
    const file = path.join(dir, name);
    const source = fs.readFileSync(file, 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((match) => match[1] as string);
    for (const specifier of imports) {
      expect(specifier).toMatch(/^\.\.?\//);
      const target = path.resolve(path.dirname(file), specifier);
      expect(target.startsWith(dir + path.sep) || target === dir || target.startsWith(permissions + path.sep)).toBe(
        true,
      );
    }
    expect(source).not.toMatch(/\bprocess\.|\bDate\b|Math\.random|require\(/);
  });
});
