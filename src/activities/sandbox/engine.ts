import { createHash } from 'node:crypto';
import { lstat, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { JobSandbox } from '../../shared/sandbox';
import { sandboxNetworkMode } from '../../shared/sandbox';
import { buildBwrapArgs } from './bwrap-args';
import { gitShimDir, withGitHardening } from './git-hardening';
import { allowedExactly, isWritableIn, resolveTrustedMounts, withProtections, type MountInputs } from './mounts';
import { readDenyHiddenPaths, withHiddenPlaces } from './read-deny-mounts';
import { Placeholders } from './placeholders';
import { configuredBwrap, probeSandbox, type SandboxAvailability } from './probe';
import { findProtectedPaths } from './protected-paths';

export interface SandboxEngineOptions {
  /** bwrap to use: a path, or a name looked up on PATH. Default `DURABLE_AGENT_BWRAP`, else `bwrap`. */
  bwrap?: string;
  /** The worker's home, whose credential places are hidden. Default `os.homedir()`. */
  homeDir?: string;
  /** Paths only the worker may read: its data folder (store, journal, temporal.db), TLS key and cert. */
  workerPrivatePaths?: string[];
  /** Where the jobs' private temp folders are made. Default `os.tmpdir()`. */
  tempRoot?: string;
  /** The git shim's folder. Default `gitShimDir()`, the package's own. */
  gitShimDir?: string;
}

/** A command ready to spawn: `file` with `args`, in the workspace, with `env`. */
export interface PreparedCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  sandboxed: boolean;
  /**
   * To be called once the command and its sandbox have ended: removes the placeholders made for
   * it (see `Placeholders`).
   */
  release?: () => Promise<void>;
  /** The placeholders made or shared for it, recorded so a worker that adopts the command can remove them. */
  placeholders?: string[];
}

/** Why a command was not started; the text is the tool result the model gets. */
export interface RefusedCommand {
  refused: string;
}

/** One call's request: the command, where it runs, for which job, under which policy. */
export interface CommandRequest {
  command: string;
  /** Realpath of the workspace. */
  workspace: string;
  sessionKey: string;
  policy: JobSandbox;
  /** The job's `Read(...)` deny rules: the places they name outright are hidden too. */
  readDenyRules?: readonly string[];
  /** The environment before the sandbox adds to it (already free of credentials). */
  env: NodeJS.ProcessEnv;
  /** A folder opened by the worker, bound read-only as the command's working folder (see `BwrapPlan`). */
  boundFolder?: { fd: number; dest: string };
}

/**
 * The worker's sandbox: one per worker, shared by every job it runs. Each call gets its own
 * bubblewrap command line from the job's policy, so jobs with different workspaces and settings
 * run side by side. Whether bubblewrap works here is probed once, on first use.
 */
export class SandboxEngine {
  readonly bwrap: string;
  private readonly homeDir: string;
  private readonly workerPrivatePaths: string[];
  private readonly tempRoot: string;
  private readonly gitShim: string | undefined;
  private readonly placeholders = new Placeholders();

  /**
   * Remove what is left of the placeholders of a command whose worker died (`paths`, from its
   * record), once that command has ended and a worker that outlived it looked after it.
   */
  releaseLeftovers(paths: readonly string[]): Promise<void> {
    return this.placeholders.releaseLeftovers(paths);
  }

  constructor(options: SandboxEngineOptions = {}) {
    this.bwrap = options.bwrap ?? configuredBwrap();
    this.homeDir = options.homeDir ?? os.homedir();
    this.workerPrivatePaths = [...(options.workerPrivatePaths ?? [])];
    this.tempRoot = options.tempRoot ?? os.tmpdir();
    this.gitShim = options.gitShimDir ?? gitShimDir();
  }

  /** Whether commands can be sandboxed on this worker (a real sandbox start, cached). */
  availability(): Promise<SandboxAvailability> {
    return probeSandbox(this.bwrap);
  }

  /**
   * The job's private temp folder (its `TMPDIR`, and `/tmp` inside the sandbox): kept across the
   * job's calls, unseen by other jobs' sandboxes.
   */
  async tempDir(workspace: string, sessionKey: string): Promise<string> {
    const uid = process.getuid?.() ?? 'user';
    const parent = path.join(this.tempRoot, `durable-agent-${uid}`);
    await mkdir(parent, { recursive: true, mode: 0o700 });
    const info = await lstat(parent);
    // Another user could have made the folder first in a shared /tmp, to read what jobs put there.
    if (!info.isDirectory() || (typeof uid === 'number' && info.uid !== uid)) {
      throw new Error(`${parent} is not a folder of this user; remove it and retry`);
    }
    const id = createHash('sha256').update(`${workspace}\0${sessionKey}`).digest('hex').slice(0, 16);
    const dir = path.join(parent, id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** The command line for one call, or why it may not run. */
  async prepare(request: CommandRequest): Promise<PreparedCommand | RefusedCommand> {
    const { command, workspace, sessionKey } = request;
    // What the job's Read deny rules name, the sandbox hides: no spelling of the path reaches it.
    const policy = withHiddenPlaces(
      request.policy,
      readDenyHiddenPaths(request.readDenyRules ?? [], workspace, this.homeDir),
    );
    const tempDir = await this.tempDir(workspace, sessionKey);
    const shim = this.gitShim;
    if (!policy.enabled) {
      return {
        file: 'bash',
        args: ['-c', command],
        env: withGitHardening({ ...request.env, TMPDIR: tempDir }, { sandboxed: false, shim }),
        sandboxed: false,
      };
    }
    const availability = await this.availability();
    if (!availability.available) return { refused: refusalMessage(availability.reason, policy) };
    const network = sandboxNetworkMode(policy);
    const inputs: MountInputs = {
      workspace,
      tempDir,
      homeDir: this.homeDir,
      workerPrivatePaths: this.workerPrivatePaths,
      alwaysVisible: shim ? [shim] : [],
      ...(request.env.PATH ? { commandPath: request.env.PATH } : {}),
      policy,
      network,
    };
    const trusted = await resolveTrustedMounts(inputs);
    // Found while no other command of this worker makes or removes a stand-in: one it holds is
    // seen as present here, and held for this command too.
    let protectedPaths: Awaited<ReturnType<typeof findProtectedPaths>> = [];
    const lease = await this.placeholders.acquireFound(async () => {
      protectedPaths = await findProtectedPaths(workspace, {
        isWritable: (real) => isWritableIn(trusted, real),
        allowWrite: allowedExactly(inputs),
      });
      return {
        wanted: protectedPaths.flatMap((entry) =>
          entry.placeholder ? [{ path: entry.path, placeholder: entry.placeholder }] : [],
        ),
        present: protectedPaths.filter((entry) => !entry.placeholder).map((entry) => entry.path),
      };
    });
    try {
      const mounts = await withProtections(trusted, inputs, protectedPaths);
      const { file, args } = buildBwrapArgs({
        bwrap: availability.bwrap,
        baseFlags: availability.baseFlags,
        mounts,
        network,
        cwd: workspace,
        command,
        ...(request.boundFolder ? { boundFolder: request.boundFolder } : {}),
      });
      const env = withGitHardening({ ...request.env, TMPDIR: '/tmp' }, { sandboxed: true, shim });
      return { file, args, env, sandboxed: true, release: lease.release, placeholders: lease.paths };
    } catch (error) {
      await lease.release();
      throw error;
    }
  }
}

/** What the model is told when its job needs the sandbox and this worker has none. */
export function refusalMessage(reason: string, policy: JobSandbox): string {
  return [
    `Bash did not run: this job requires the OS sandbox (${policy.source}), and worker ${os.hostname()} has none: ${reason}.`,
    'To fix it, either install bubblewrap on the worker (`bash scripts/setup.sh`, or `apt-get install bubblewrap`) and restart it,',
    'or opt the job out of the sandbox with --no-sandbox or `"sandbox": { "enabled": false }` in its settings; its commands then read and write whatever the worker can.',
  ].join(' ');
}
