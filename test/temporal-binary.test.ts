import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
  PINNED_TEMPORAL_CLI_VERSION,
  TemporalBinaryNotFoundError,
  findPackageRoot,
  findTemporalBinary,
} from '../src/client/temporal-binary';

const posixOnly = process.platform === 'win32' ? it.skip : it;

function writeFile(file: string, mode: number): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\necho fake temporal\n');
  fs.chmodSync(file, mode);
  return file;
}

function captureError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to throw');
}

describe('findTemporalBinary', () => {
  const savedPath = process.env['PATH'];
  const savedCliPath = process.env['TEMPORAL_CLI_PATH'];
  let tmp: string;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-binary-test-'));
    process.env['PATH'] = '';
    delete process.env['TEMPORAL_CLI_PATH'];
  });

  afterEach(() => {
    if (savedPath === undefined) delete process.env['PATH'];
    else process.env['PATH'] = savedPath;
    if (savedCliPath === undefined) delete process.env['TEMPORAL_CLI_PATH'];
    else process.env['TEMPORAL_CLI_PATH'] = savedCliPath;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  posixOnly('honours TEMPORAL_CLI_PATH over PATH and the .tools cache', () => {
    const override = writeFile(path.join(tmp, 'custom', 'my-temporal'), 0o755);
    writeFile(path.join(tmp, 'bin', 'temporal'), 0o755);
    writeFile(path.join(tmp, '.tools', 'temporal', PINNED_TEMPORAL_CLI_VERSION, 'temporal'), 0o755);
    process.env['PATH'] = path.join(tmp, 'bin');
    process.env['TEMPORAL_CLI_PATH'] = override;

    expect(findTemporalBinary(tmp)).toBe(override);
  });

  posixOnly('rejects a TEMPORAL_CLI_PATH that is not executable, even when another binary exists', () => {
    const notExecutable = writeFile(path.join(tmp, 'custom', 'temporal'), 0o644);
    writeFile(path.join(tmp, '.tools', 'temporal', PINNED_TEMPORAL_CLI_VERSION, 'temporal'), 0o755);
    process.env['TEMPORAL_CLI_PATH'] = notExecutable;

    const err = captureError(() => findTemporalBinary(tmp));
    expect(err).toBeInstanceOf(TemporalBinaryNotFoundError);
    const e = err as TemporalBinaryNotFoundError;
    expect(e.reason).toBe('invalid-env-path');
    expect(e.message).toContain('TEMPORAL_CLI_PATH');
    expect(e.message).toContain(notExecutable);
  });

  it('throws TemporalBinaryNotFoundError with an install hint when nothing is found', () => {
    const err = captureError(() => findTemporalBinary(tmp));

    expect(err).toBeInstanceOf(TemporalBinaryNotFoundError);
    expect(err).toBeInstanceOf(Error);
    const e = err as TemporalBinaryNotFoundError;
    expect(e.name).toBe('TemporalBinaryNotFoundError');
    expect(e.reason).toBe('not-found');
    expect(e.projectRoot).toBe(path.resolve(tmp));
    expect(e.message).toContain('bash scripts/install-temporal.sh');
    expect(e.message).toContain('TEMPORAL_CLI_PATH');
    expect(e.searched).toContain(path.join(tmp, '.tools', 'temporal', '*', 'temporal'));
  });

  posixOnly('finds the binary on PATH, skipping non-executable candidates', () => {
    writeFile(path.join(tmp, 'bin1', 'temporal'), 0o644);
    const onPath = writeFile(path.join(tmp, 'bin2', 'temporal'), 0o755);
    process.env['PATH'] = [path.join(tmp, 'bin1'), path.join(tmp, 'bin2')].join(path.delimiter);

    expect(findTemporalBinary(tmp)).toBe(onPath);
  });

  posixOnly('finds the binary in <projectRoot>/.tools/temporal/<version>/temporal', () => {
    const cached = writeFile(path.join(tmp, '.tools', 'temporal', '1.2.3', 'temporal'), 0o755);

    expect(findTemporalBinary(tmp)).toBe(cached);
  });

  posixOnly('prefers the pinned version, then the newest, and ignores non-executable cache entries', () => {
    const cache = path.join(tmp, '.tools', 'temporal');
    writeFile(path.join(cache, '1.5.1', 'temporal'), 0o755);
    const newest = writeFile(path.join(cache, '1.10.0', 'temporal'), 0o755);
    writeFile(path.join(cache, '9.9.9', 'temporal'), 0o644);
    fs.mkdirSync(path.join(cache, '.install.abc123'), { recursive: true });

    expect(findTemporalBinary(tmp)).toBe(newest);

    const pinned = writeFile(path.join(cache, PINNED_TEMPORAL_CLI_VERSION, 'temporal'), 0o755);
    expect(findTemporalBinary(tmp)).toBe(pinned);
  });
});

describe('findPackageRoot', () => {
  it('walks up to the durable-agent package root', () => {
    const root = findPackageRoot(__dirname);
    expect(root).toBeDefined();
    const manifest = JSON.parse(fs.readFileSync(path.join(root as string, 'package.json'), 'utf8')) as { name: string };
    expect(manifest.name).toBe('durable-agent');
  });

  it('returns undefined outside the package', () => {
    expect(findPackageRoot(os.tmpdir())).toBeUndefined();
  });
});
