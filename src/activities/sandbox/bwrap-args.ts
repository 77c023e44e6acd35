/**
 * The bubblewrap command line for one sandboxed Bash call, built from a mount plan. Pure: the
 * paths are already resolved (real, existing) by `resolveMounts`.
 */

/** One rule of the mount plan. */
export type Mount =
  /** Writable: the workspace, the job's private temp folder (at `dest`), `allowWrite` paths. */
  | { kind: 'write'; path: string; dest?: string }
  /** Writable still, bound onto itself so that it cannot be renamed or removed (`.git`). */
  | { kind: 'pin'; path: string }
  /** Read-only inside a writable place: `denyWrite` and the protected workspace files. */
  | { kind: 'read-only'; path: string }
  /** Unreadable: credential places and `denyRead`. */
  | { kind: 'hide'; path: string; directory: boolean }
  /** Readable again inside a hidden place: `allowRead`. */
  | { kind: 'show'; path: string };

/** Everything one call's argv depends on. */
export interface BwrapPlan {
  bwrap: string;
  /** Namespace and privilege flags that the probe found this bwrap to accept. */
  baseFlags: readonly string[];
  mounts: Mount[];
  network: 'none' | 'host';
  cwd: string;
  command: string;
  /**
   * A folder the worker opened, passed to bwrap as a descriptor and bound read-only at `dest`, the
   * command's working folder: no name is looked up again to find it.
   */
  boundFolder?: { fd: number; dest: string };
}

/**
 * Namespace and privilege flags of every sandbox: its own PID namespace (the worker and every
 * other process on the machine are invisible, and the whole tree dies with bwrap), no
 * capabilities, no new user namespaces (from which the deny mounts could be undone).
 */
export const BASE_FLAGS = [
  '--die-with-parent',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--unshare-user',
  '--disable-userns',
  '--cap-drop',
  'ALL',
] as const;

/** The same without `--disable-userns`, for bubblewrap before 0.8. */
export const BASE_FLAGS_WITHOUT_DISABLE_USERNS = BASE_FLAGS.filter((flag) => flag !== '--disable-userns');

/** On one path, the later kind wins. */
export const KIND_ORDER: Record<Mount['kind'], number> = { write: 0, pin: 1, 'read-only': 2, hide: 3, show: 4 };

function depth(target: string): number {
  return target.split('/').filter(Boolean).length;
}

const destOf = (mount: Mount) => (mount.kind === 'write' && mount.dest ? mount.dest : mount.path);

/**
 * Later mounts cover earlier ones, so the plan is applied from the outermost path in: the rule on
 * the deeper path wins (a denied file inside the writable workspace stays denied, a workspace
 * inside a hidden home stays visible). On the same path, a write deny beats a write allow and an
 * `allowRead` beats a `denyRead`, as in Claude Code. bubblewrap takes every source from the host,
 * so a mount inside a hidden place shows the host's files there again: only the worker's and the
 * user's own rules may do that, and `resolveMounts` keeps the workspace's protections to places
 * that are writable anyway (where a read-only bind only takes something away).
 */
export function orderMounts(mounts: Mount[]): Mount[] {
  return mounts
    .map((mount, index) => ({ mount, index }))
    .sort(
      (a, b) =>
        depth(destOf(a.mount)) - depth(destOf(b.mount)) ||
        KIND_ORDER[a.mount.kind] - KIND_ORDER[b.mount.kind] ||
        a.index - b.index,
    )
    .map(({ mount }) => mount);
}

function mountArgs(mount: Mount): string[] {
  switch (mount.kind) {
    case 'write':
      return ['--bind', mount.path, mount.dest ?? mount.path];
    case 'pin':
      return ['--bind', mount.path, mount.path];
    case 'read-only':
    case 'show':
      return ['--ro-bind', mount.path, mount.path];
    case 'hide':
      // An empty folder that cannot be listed ("Permission denied") but can be passed through to
      // what `allowRead` shows again inside it; a file that cannot be read.
      return mount.directory ? ['--perms', '0111', '--tmpfs', mount.path] : ['--ro-bind', '/dev/null', mount.path];
  }
}

/** argv for `spawn`: `[bwrap, ...args]` running `bash -c command` in `cwd`. */
export function buildBwrapArgs(plan: BwrapPlan): { file: string; args: string[] } {
  const args = [
    ...plan.baseFlags,
    ...(plan.network === 'none' ? ['--unshare-net'] : []),
    // The host's file system, read-only; a fresh /dev and a /proc of the sandbox's own PID namespace.
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    ...orderMounts(plan.mounts).flatMap(mountArgs),
    ...(plan.boundFolder ? ['--ro-bind-fd', String(plan.boundFolder.fd), plan.boundFolder.dest] : []),
    '--chdir',
    plan.boundFolder?.dest ?? plan.cwd,
    '--',
    'bash',
    '-c',
    plan.command,
  ];
  return { file: plan.bwrap, args };
}
