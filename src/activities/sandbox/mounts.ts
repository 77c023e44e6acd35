import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { JobSandbox } from '../../shared/sandbox';
import type { Mount } from './bwrap-args';
import {
  HOME_CREDENTIAL_PLACES,
  SSH_HOST_KEY,
  SSH_HOST_KEY_DIR,
  SYSTEM_CREDENTIAL_PLACES,
  WORKSPACE_PROTECTED_PATHS,
} from './defaults';

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
  /** Shown even if a hidden place holds it (the git shim). */
  alwaysVisible: readonly string[];
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

/**
 * The mount plan of one sandboxed call. Paths that do not exist are left out: bubblewrap would
 * have to create them on the host's read-only view, and there is nothing in them to hide.
 * Symlinks are followed, so a denied place is denied under every name that leads to it.
 */
export async function resolveMounts(inputs: MountInputs): Promise<Mount[]> {
  const { workspace, homeDir, policy } = inputs;
  const fs = policy.filesystem ?? {};
  const fromSettings = (entries: string[] | undefined) =>
    (entries ?? []).map((entry) => resolveSettingsPath(entry, workspace, homeDir));

  const mounts: Mount[] = [];
  const add = async (kind: 'write' | 'read-only' | 'show' | 'hide', target: string) => {
    const found = await existing(target);
    if (!found) return;
    if (kind === 'hide') mounts.push({ kind, path: found.real, directory: found.directory });
    else mounts.push({ kind, path: found.real });
  };

  mounts.push({ kind: 'write', path: inputs.tempDir, dest: '/tmp' });
  mounts.push({ kind: 'write', path: workspace });
  const allowWrite = fromSettings(fs.allowWrite);
  for (const target of allowWrite) await add('write', target);

  const allowedExactly = new Set(allowWrite);
  for (const relative of WORKSPACE_PROTECTED_PATHS) {
    const target = path.join(workspace, relative);
    if (!allowedExactly.has(target)) await add('read-only', target);
  }
  for (const target of fromSettings(fs.denyWrite)) await add('read-only', target);

  const hidden = [
    ...HOME_CREDENTIAL_PLACES.map((relative) => path.join(homeDir, relative)),
    ...SYSTEM_CREDENTIAL_PLACES,
    ...(await sshHostKeys()),
    ...inputs.workerPrivatePaths,
    ...fromSettings(fs.denyRead),
  ];
  for (const target of hidden) await add('hide', target);

  for (const target of fromSettings(fs.allowRead)) await add('show', target);
  for (const target of inputs.alwaysVisible) await add('show', target);
  // /etc/resolv.conf often points into /run, which is hidden; a command given the network needs it.
  if (inputs.network === 'host') await add('show', '/etc/resolv.conf');

  return dedupe(mounts.filter((mount) => mount.kind === 'write' || !invisibleUnderTmp(mount.path, mounts)));
}

const isUnder = (target: string, dir: string) => target === dir || target.startsWith(dir === '/' ? '/' : `${dir}/`);

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
