import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { JobSandbox } from '../../shared/sandbox';
import { KIND_ORDER, type Mount } from './bwrap-args';
import {
  HOME_TOOLCHAIN_ROOTS,
  HOME_CREDENTIAL_PLACES,
  HOME_SHOWN_PLACES,
  SSH_HOST_KEY,
  SSH_HOST_KEY_DIR,
  SYSTEM_CREDENTIAL_PLACES,
} from './defaults';
import type { ProtectedPath } from './protected-paths';

/** What the mount plan of one call is made from. */
export interface MountInputs {
  /** Realpath of the workspace: writable, and the command's working directory. */
  workspace: string;
  /** The job's private temp folder on the host, mounted at /tmp inside. */
  tempDir: string;
  /** The worker's home: where `~/` points and the credential places are looked up. */
  homeDir: string;
  /** Paths only the worker may read: its data folder, the Temporal TLS files. */
  workerPrivatePaths: readonly string[];
  /** Shown even if a hidden place holds it, or it lies under the host's /tmp (the git shim). */
  alwaysVisible: readonly string[];
  /** The command's `PATH`: its folders under the home are shown in the hidden home. */
  commandPath?: string;
  policy: JobSandbox;
  network: 'none' | 'host';
}

/**
 * A settings path as an absolute one: `~/x` under the worker's home, `//x` and `/x` absolute,
 * anything else under the workspace.
 */
export function resolveSettingsPath(entry: string, workspace: string, homeDir: string): string {
  let absolute: string;
  if (entry === '~' || entry.startsWith('~/')) absolute = path.join(homeDir, entry.slice(1));
  else if (entry.startsWith('/')) absolute = path.resolve(entry.replace(/^\/+/, '/'));
  else absolute = path.resolve(workspace, entry);
  // A trailing "/**" means the folder and everything in it, which is what a mount of it is.
  return absolute.replace(/\/\*\*$/, '') || '/';
}

/** Real path and kind of an existing path; undefined when it does not exist (nothing to mount). */
async function existing(target: string): Promise<{ real: string; directory: boolean } | undefined> {
  try {
    const real = await realpath(target);
    const info = await stat(real);
    return { real, directory: info.isDirectory() };
  } catch {
    return undefined;
  }
}

async function sshHostKeys(): Promise<string[]> {
  try {
    return (await readdir(SSH_HOST_KEY_DIR))
      .filter((name) => SSH_HOST_KEY.test(name))
      .map((name) => path.join(SSH_HOST_KEY_DIR, name));
  } catch {
    return [];
  }
}

const isUnder = (target: string, dir: string) => target === dir || target.startsWith(dir === '/' ? '/' : `${dir}/`);

/**
 * Whether resolving `target` follows a symbolic link that lies in a folder the sandbox can write:
 * such a link may have been put there by an earlier command, to point a trusted rule (an
 * `allowWrite` or `allowRead` entry, the git shim) at the home folder or a credential.
 */
async function throughWritableLink(target: string, writableRoots: readonly string[]): Promise<boolean> {
  let current = '/';
  for (const part of target.split('/').filter(Boolean)) {
    const next = path.join(current, part);
    const info = await lstat(next).catch(() => undefined);
    if (!info) return false;
    if (!info.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (writableRoots.some((root) => isUnder(current, root))) return true;
    const resolved = await realpath(next).catch(() => undefined);
    if (!resolved) return false;
    current = resolved;
  }
  return false;
}

/**
 * The rules that come from the worker and the user, never from the workspace: the writable
 * places (workspace, private temp folder, `allowWrite`), the hidden ones (credential places, the
 * worker's data, the other jobs' temp folders, `denyRead`) and what is shown again (`allowRead`,
 * the git shim). Paths that do not exist are left out: bubblewrap would have to create them on
 * the host, and there is nothing in them to hide. Symlinks are followed, so a denied place is
 * denied under every name that leads to it, but a trusted rule is not followed through a link
 * that a sandboxed command could have made.
 */
export async function resolveTrustedMounts(inputs: MountInputs): Promise<Mount[]> {
  const { workspace, homeDir, policy } = inputs;
  const fs = policy.filesystem ?? {};
  const fromSettings = (entries: string[] | undefined) =>
    (entries ?? []).map((entry) => resolveSettingsPath(entry, workspace, homeDir));

  const tempDir = (await existing(inputs.tempDir))?.real ?? inputs.tempDir;
  const mounts: Mount[] = [
    { kind: 'write', path: tempDir, dest: '/tmp' },
    { kind: 'write', path: workspace },
  ];
  const writableRoots = [workspace, tempDir];
  const byDepth = (paths: string[]) => [...paths].sort((a, b) => depth(a) - depth(b));
  for (const target of byDepth(fromSettings(fs.allowWrite))) {
    const found = await existing(target);
    if (!found || (await throughWritableLink(target, writableRoots))) continue;
    mounts.push({ kind: 'write', path: found.real });
    writableRoots.push(found.real);
  }

  const homeReal = (await existing(homeDir))?.real ?? homeDir;
  // A workspace (or an allowWrite place) that is the home or holds it: the user gave the job the
  // home, so it is not hidden as a whole (its credential places still are).
  const homeWritable = writableRoots.some((root) => isUnder(homeReal, root));
  const hidden = [
    ...(homeWritable ? [] : [homeDir]),
    ...HOME_CREDENTIAL_PLACES.map((relative) => path.join(homeDir, relative)),
    ...SYSTEM_CREDENTIAL_PLACES,
    ...(await sshHostKeys()),
    ...inputs.workerPrivatePaths,
    // The other jobs' private temp folders; this job's own is at /tmp.
    path.dirname(tempDir),
    ...fromSettings(fs.denyRead),
  ];
  const hiddenReal: string[] = [];
  for (const found of await Promise.all(hidden.map(existing))) {
    if (!found) continue;
    mounts.push({ kind: 'hide', path: found.real, directory: found.directory });
    if (found.real !== homeReal) hiddenReal.push(found.real);
  }

  // The home's shown places never cover a writable place (a workspace under the home, a cache in
  // `allowWrite`): a read-only bind on the same path would win over the writable one. Nor are
  // they, or anything they sit in, hidden by name (a credential place, a `denyRead`): a show on
  // the same path would win over the hide.
  for (const target of homeWritable ? [] : homeShownPlaces(homeDir, inputs.commandPath)) {
    const found = await existing(target);
    if (!found || writableRoots.some((root) => isUnder(found.real, root))) continue;
    if (hiddenReal.some((place) => isUnder(found.real, place))) continue;
    if (await throughWritableLink(target, writableRoots)) continue;
    mounts.push({ kind: 'show', path: found.real });
  }
  const shown = [
    ...fromSettings(fs.allowRead),
    ...inputs.alwaysVisible,
    // /etc/resolv.conf often points into /run, which is hidden; a command given the network needs it.
    ...(inputs.network === 'host' ? ['/etc/resolv.conf'] : []),
  ];
  const keepUnderTmp = new Set<string>();
  for (const target of shown) {
    const found = await existing(target);
    if (!found || (await throughWritableLink(target, writableRoots))) continue;
    mounts.push({ kind: 'show', path: found.real });
    if (inputs.alwaysVisible.includes(target)) keepUnderTmp.add(found.real);
  }

  return dedupe(
    mounts.filter(
      (mount) => mount.kind === 'write' || keepUnderTmp.has(mount.path) || !invisibleUnderTmp(mount.path, mounts),
    ),
  );
}

/** What of the hidden home the sandbox shows: see `HOME_SHOWN_PLACES`. */
export function homeShownPlaces(homeDir: string, commandPath: string | undefined): string[] {
  const places = HOME_SHOWN_PLACES.map((relative) => path.join(homeDir, relative));
  for (const entry of (commandPath ?? '').split(':')) {
    if (!path.isAbsolute(entry)) continue;
    const relative = path.relative(homeDir, path.resolve(entry));
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) continue;
    const top = relative.split(path.sep)[0] as string;
    // A known toolchain's whole folder (pyenv's shims need its versions); else only the entry.
    places.push(HOME_TOOLCHAIN_ROOTS.has(top) ? path.join(homeDir, top) : path.join(homeDir, relative));
  }
  return places;
}

/**
 * Whether the sandbox sees the host's `real` path, writable, under a trusted rule: the deepest
 * rule on it is a writable mount at its own path. Only there does a protective mount of the
 * workspace mean anything, and only there can it show nothing the sandbox could not see anyway:
 * a read-only bind of a path inside a hidden place would show what is hidden.
 */
export function isWritableIn(trusted: readonly Mount[], real: string): boolean {
  let winner: Mount | undefined;
  for (const mount of trusted) {
    const dest = destOf(mount);
    if (!isUnder(real, dest)) continue;
    if (
      !winner ||
      depth(dest) > depth(destOf(winner)) ||
      (depth(dest) === depth(destOf(winner)) && KIND_ORDER[mount.kind] >= KIND_ORDER[winner.kind])
    ) {
      winner = mount;
    }
  }
  return winner?.kind === 'write' && winner.dest === undefined;
}

/**
 * The trusted rules plus the workspace's own protections (`protectedPaths`) and the job's
 * `denyWrite`. These come from paths that the workspace controls (a protected name may be a
 * symlink to a key; a workspace settings file may list any path), so each is kept only where
 * `isWritableIn` says it protects something, which also means it can never uncover a hidden place.
 */
export async function resolveMounts(
  inputs: MountInputs,
  protectedPaths: readonly ProtectedPath[] = [],
): Promise<Mount[]> {
  const trusted = await resolveTrustedMounts(inputs);
  return withProtections(trusted, inputs, protectedPaths);
}

/** `resolveMounts` for trusted rules already resolved. */
export async function withProtections(
  trusted: readonly Mount[],
  inputs: MountInputs,
  protectedPaths: readonly ProtectedPath[],
): Promise<Mount[]> {
  const denyWrite = (inputs.policy.filesystem?.denyWrite ?? []).map((entry) => ({
    path: resolveSettingsPath(entry, inputs.workspace, inputs.homeDir),
    mode: 'read-only' as const,
  }));
  const mounts = [...trusted];
  const entries = [...protectedPaths, ...denyWrite];
  const found = await Promise.all(entries.map((entry) => existing(entry.path)));
  entries.forEach((entry, index) => {
    const real = found[index]?.real;
    if (real && isWritableIn(trusted, real))
      mounts.push({ kind: entry.mode === 'pin' ? 'pin' : 'read-only', path: real });
  });
  return dedupe(mounts);
}

/** The exact `allowWrite` paths: a protected path listed there stays writable. */
export function allowedExactly(inputs: MountInputs): Set<string> {
  return new Set(
    (inputs.policy.filesystem?.allowWrite ?? []).map((entry) =>
      resolveSettingsPath(entry, inputs.workspace, inputs.homeDir),
    ),
  );
}

function depth(target: string): number {
  return target.split('/').filter(Boolean).length;
}

const destOf = (mount: Mount) => (mount.kind === 'write' && mount.dest ? mount.dest : mount.path);

/**
 * Inside the sandbox /tmp is the job's private folder, so the host's /tmp is out of sight already;
 * a rule for a path there would only leave an empty mount point behind in the private folder.
 * Unless the path lies in a writable place that is bound back (a workspace under /tmp).
 */
function invisibleUnderTmp(target: string, mounts: Mount[]): boolean {
  if (!isUnder(target, '/tmp')) return false;
  return !mounts.some((mount) => mount.kind === 'write' && mount.dest === undefined && isUnder(target, mount.path));
}

function dedupe(mounts: Mount[]): Mount[] {
  const seen = new Set<string>();
  return mounts.filter((mount) => {
    const key = `${mount.kind}:${mount.path}:${mount.kind === 'write' ? (mount.dest ?? '') : ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
