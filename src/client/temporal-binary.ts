/**
 * Locating the `temporal` CLI binary (used to run the local dev server) without installing anything.
 *
 * The lookup mirrors `scripts/install-temporal.sh`, minus the install step:
 * 1. `$TEMPORAL_CLI_PATH`, if set (it must be an executable file);
 * 2. `temporal` on `PATH`;
 * 3. the project-local cache `.tools/temporal/<version>/temporal` (the pinned version first, then the newest).
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Name of the package whose root folder holds the `.tools/` cache. */
const PACKAGE_NAME = 'durable-agent';

/** The CLI version that `scripts/install-temporal.sh` installs by default; preferred when several are cached. */
export const PINNED_TEMPORAL_CLI_VERSION = '1.9.1';

/** Environment variable that, when set, names the exact `temporal` binary to use. */
export const TEMPORAL_CLI_PATH_ENV = 'TEMPORAL_CLI_PATH';

/** Why {@link findTemporalBinary} gave up. */
export type TemporalBinaryNotFoundReason =
  /** `$TEMPORAL_CLI_PATH` is set but does not name an executable file. */
  | 'invalid-env-path'
  /** Nothing was found on `PATH` nor in the `.tools/temporal` cache. */
  | 'not-found';

/** Thrown by {@link findTemporalBinary} when no usable `temporal` CLI binary can be located. */
export class TemporalBinaryNotFoundError extends Error {
  /** Why the lookup failed. */
  readonly reason: TemporalBinaryNotFoundReason;
  /** Every location that was checked, in order (the env value, each `PATH` candidate, the cache pattern). */
  readonly searched: readonly string[];
  /** The project root whose `.tools/temporal` folder was searched. */
  readonly projectRoot: string;

  /**
   * @param reason - why the lookup failed
   * @param searched - the locations that were checked
   * @param projectRoot - the project root whose `.tools/` cache was searched
   * @param detail - the first sentence of the message
   */
  constructor(reason: TemporalBinaryNotFoundReason, searched: readonly string[], projectRoot: string, detail: string) {
    super(
      `${detail} Run \`bash scripts/install-temporal.sh\` (from the project root) to install it into .tools/, ` +
        `or set ${TEMPORAL_CLI_PATH_ENV}=/absolute/path/to/temporal.`,
    );
    this.name = 'TemporalBinaryNotFoundError';
    this.reason = reason;
    this.searched = Object.freeze([...searched]);
    this.projectRoot = projectRoot;
  }
}

function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Walks up from `startDir` to the folder holding the `package.json` named `durable-agent`.
 *
 * @param startDir - where to start (defaults to this module's folder, which works from both `src/` and `dist/`)
 * @returns the package root, or `undefined` when there is none above `startDir`
 */
export function findPackageRoot(startDir: string = __dirname): string | undefined {
  let dir = path.resolve(startDir);
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(manifest, 'utf8'));
      if (typeof parsed === 'object' && parsed !== null && (parsed as { name?: unknown }).name === PACKAGE_NAME) {
        return dir;
      }
    } catch {
      // No package.json here, or not JSON: keep walking up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function binaryNames(): string[] {
  if (process.platform !== 'win32') return ['temporal'];
  const exts = (process.env['PATHEXT'] ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean);
  return ['temporal', ...exts.map((e) => `temporal${e.toLowerCase()}`)];
}

/** Compares dotted numeric versions, newest first; non-numeric parts sort after numeric ones. */
function compareVersionsDesc(a: string, b: string): number {
  const pa = a.split(/[.-]/);
  const pb = b.split(/[.-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    const nx = /^\d+$/.test(x) ? Number(x) : NaN;
    const ny = /^\d+$/.test(y) ? Number(y) : NaN;
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) {
      if (nx !== ny) return ny - nx;
    } else if (x !== y) {
      return y < x ? -1 : 1;
    }
  }
  return 0;
}

/**
 * Returns the absolute path of a usable `temporal` CLI binary, without installing anything.
 *
 * Lookup order: `$TEMPORAL_CLI_PATH` (must be an executable file, else this throws), then `temporal` on `PATH`,
 * then `<projectRoot>/.tools/temporal/<version>/temporal` (version {@link PINNED_TEMPORAL_CLI_VERSION} first,
 * then the newest cached one). Empty `PATH` entries are skipped rather than read as the current folder.
 *
 * @param projectRoot - the folder whose `.tools/` cache is searched; defaults to the `durable-agent` package root
 *   found by walking up from this module's folder (or the current working directory when none is found)
 * @returns an absolute path to an executable file
 * @throws {@link TemporalBinaryNotFoundError} when `$TEMPORAL_CLI_PATH` is invalid or no binary is found
 */
export function findTemporalBinary(projectRoot?: string): string {
  const root = path.resolve(projectRoot ?? findPackageRoot() ?? process.cwd());
  const searched: string[] = [];

  const fromEnv = process.env[TEMPORAL_CLI_PATH_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    const resolved = path.resolve(fromEnv);
    if (isExecutableFile(resolved)) return resolved;
    throw new TemporalBinaryNotFoundError(
      'invalid-env-path',
      [resolved],
      root,
      `${TEMPORAL_CLI_PATH_ENV} is set to '${fromEnv}', which is not an executable file.`,
    );
  }

  const names = binaryNames();
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    for (const name of names) {
      const candidate = path.resolve(dir, name);
      searched.push(candidate);
      if (isExecutableFile(candidate)) return candidate;
    }
  }

  const cacheDir = path.join(root, '.tools', 'temporal');
  searched.push(path.join(cacheDir, '*', 'temporal'));
  let versions: string[] = [];
  try {
    versions = fs
      .readdirSync(cacheDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
      .map((d) => d.name)
      .sort((a, b) => {
        if (a === PINNED_TEMPORAL_CLI_VERSION) return -1;
        if (b === PINNED_TEMPORAL_CLI_VERSION) return 1;
        return compareVersionsDesc(a, b);
      });
  } catch {
    // No cache folder yet.
  }
  for (const version of versions) {
    for (const name of names) {
      const candidate = path.join(cacheDir, version, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }

  throw new TemporalBinaryNotFoundError(
    'not-found',
    searched,
    root,
    `No Temporal CLI binary found (checked ${TEMPORAL_CLI_PATH_ENV}, PATH, and ${path.join(cacheDir, '*', 'temporal')}).`,
  );
}
