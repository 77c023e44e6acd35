/**
 * Claude Code's `sandbox` settings block, and the per-job sandbox policy the workflow resolves from
 * it and hands to every tool call. Pure code (zod only): the workflow bundle imports it.
 *
 * Field names are Claude Code's (`sandbox.enabled`, `sandbox.network.allowedDomains`,
 * `sandbox.filesystem.denyRead`, ...). One difference is deliberate: Claude Code's sandbox is off
 * unless `enabled: true`; durable-agent's Bash is sandboxed unless the job opts out with
 * `enabled: false` or `--no-sandbox`.
 */
import { z } from 'zod';
import { builtSchema, lazySchema } from './lazy-schema';

const pathList = (what: string) =>
  z
    .array(z.string().min(1))
    .describe(`${what}. "~/" is the worker's home, "/" or "//" an absolute path, anything else is under the workspace`);

/** `sandbox.network`. Unknown keys pass, so a newer Claude Code settings file still loads. */
export const sandboxNetworkSettingsSchema = lazySchema(() =>
  z.looseObject({
    allowedDomains: z
      .array(z.string().min(1))
      .describe('Hosts sandboxed commands may reach; empty or absent means no network. "*" allows every host')
      .optional(),
    deniedDomains: z.array(z.string().min(1)).describe('Hosts never reachable, even if allowed').optional(),
    allowManagedDomainsOnly: z.boolean().optional(),
    allowUnixSockets: z.array(z.string()).describe('macOS only in Claude Code; ignored here').optional(),
    allowAllUnixSockets: z.boolean().optional(),
    allowLocalBinding: z.boolean().optional(),
    httpProxyPort: z.number().int().optional(),
    socksProxyPort: z.number().int().optional(),
  }),
);

/** `sandbox.filesystem`. */
export const sandboxFilesystemSettingsSchema = lazySchema(() =>
  z.looseObject({
    allowWrite: pathList('Paths writable besides the workspace and the private temp folder').optional(),
    denyWrite: pathList('Paths kept read-only even inside a writable one').optional(),
    denyRead: pathList('Paths hidden from sandboxed commands, besides the built-in credential places').optional(),
    allowRead: pathList('Paths shown again inside a hidden one').optional(),
    allowManagedReadPathsOnly: z.boolean().optional(),
  }),
);

/** Claude Code's `sandbox` settings block, as one settings file holds it. */
export const sandboxSettingsSchema = lazySchema(() =>
  z.looseObject({
    enabled: z.boolean().describe('false runs Bash without the OS sandbox (durable-agent default: true)').optional(),
    failIfUnavailable: z.boolean().optional(),
    autoAllowBashIfSandboxed: z.boolean().optional(),
    allowUnsandboxedCommands: z.boolean().optional(),
    excludedCommands: z.array(z.string()).optional(),
    network: builtSchema(sandboxNetworkSettingsSchema).optional(),
    filesystem: builtSchema(sandboxFilesystemSettingsSchema).optional(),
    ignoreViolations: z.record(z.string(), z.array(z.string())).optional(),
    enableWeakerNestedSandbox: z.boolean().optional(),
    enableWeakerNetworkIsolation: z.boolean().optional(),
  }),
);

export type SandboxSettings = z.infer<typeof sandboxSettingsSchema>;
export type SandboxNetworkSettings = z.infer<typeof sandboxNetworkSettingsSchema>;
export type SandboxFilesystemSettings = z.infer<typeof sandboxFilesystemSettingsSchema>;

/** The network part of a job's policy: Claude Code's field names, lists already merged. */
export interface JobSandboxNetwork {
  allowedDomains?: string[];
  deniedDomains?: string[];
}

/** The filesystem part of a job's policy; paths as written in settings, resolved by the worker. */
export interface JobSandboxFilesystem {
  allowWrite?: string[];
  denyWrite?: string[];
  denyRead?: string[];
  allowRead?: string[];
}

/**
 * The sandbox policy of one job, resolved by the workflow from settings and flags and passed to
 * every tool call. Plain data: it lives in workflow State and history, and holds no secret.
 */
export interface JobSandbox {
  /** false: Bash runs without the OS sandbox (the job opted out). */
  enabled: boolean;
  /** Why, e.g. '--no-sandbox', '/repo/.claude/settings.json sandbox.enabled', 'default'. */
  source: string;
  network?: JobSandboxNetwork;
  filesystem?: JobSandboxFilesystem;
}

/** The policy of a job that says nothing about the sandbox: required, no network, built-in denies. */
export const DEFAULT_JOB_SANDBOX: JobSandbox = { enabled: true, source: 'default' };

/**
 * The policy a tool call runs under. A call without one comes from a job started before
 * sandboxing existed: it gets the default, so nothing runs unconfined by accident.
 */
export function jobSandboxOrDefault(sandbox: JobSandbox | undefined): JobSandbox {
  return sandbox ?? DEFAULT_JOB_SANDBOX;
}

/** Check one settings file's `sandbox` block; the message names the file and the field. */
export function parseSandboxSettings(
  raw: unknown,
  file: string,
): { ok: true; settings: SandboxSettings } | { ok: false; message: string } {
  const parsed = sandboxSettingsSchema.safeParse(raw);
  if (parsed.success) return { ok: true, settings: parsed.data };
  const problems = parsed.error.issues.map((issue) => {
    const where = ['sandbox', ...issue.path.map(String)].join('.');
    return `${where}: ${issue.message}`;
  });
  return {
    ok: false,
    message: `${file}: ${problems.join('; ')}. Fix the field (see Claude Code's sandbox settings) or remove it.`,
  };
}

const unique = (items: string[]) => [...new Set(items)];

function mergeLists<K extends string>(
  key: K,
  layers: Array<Partial<Record<K, string[] | undefined>> | undefined>,
): Partial<Record<K, string[]>> {
  const present = layers.filter((layer) => layer?.[key] !== undefined);
  if (present.length === 0) return {};
  return { [key]: unique(present.flatMap((layer) => layer?.[key] ?? [])) } as Partial<Record<K, string[]>>;
}

/**
 * Merge settings layers as Claude Code does: a later layer's scalar wins, path and domain lists
 * add up across layers. Unknown keys of the last layer that has them are kept.
 */
export function mergeSandboxSettings(...layers: Array<SandboxSettings | undefined>): SandboxSettings {
  const present = layers.filter((layer): layer is SandboxSettings => layer !== undefined);
  const merged: SandboxSettings = Object.assign({}, ...present);
  const networks = present.map((layer) => layer.network);
  const filesystems = present.map((layer) => layer.filesystem);
  if (networks.some((n) => n !== undefined)) {
    merged.network = {
      ...Object.assign({}, ...networks),
      ...mergeLists('allowedDomains', networks),
      ...mergeLists('deniedDomains', networks),
    };
  }
  if (filesystems.some((f) => f !== undefined)) {
    merged.filesystem = {
      ...Object.assign({}, ...filesystems),
      ...mergeLists('allowWrite', filesystems),
      ...mergeLists('denyWrite', filesystems),
      ...mergeLists('denyRead', filesystems),
      ...mergeLists('allowRead', filesystems),
    };
  }
  const excluded = mergeLists('excludedCommands', present);
  return { ...merged, ...excluded };
}

/** One settings file's `sandbox` block, with where it came from (shape of the lead's settings layers). */
export interface SandboxSettingsLayer {
  /** 'user' is the worker's `~/.claude/settings.json`; 'project' and 'local' travel with the workspace. */
  source: string;
  file: string;
  sandbox: SandboxSettings;
}

/**
 * The job's policy from its settings layers and its own flag. Trust follows the permission
 * settings: a workspace file ('project', 'local') travels with the repository, so it may tighten
 * the sandbox (more denies) but never turn it off or widen what commands can write or reach; those
 * are ignored and said in `ignored`. `--no-sandbox` (or a user-level `enabled: false`) opts out.
 */
export function resolveJobSandbox(args: {
  layers: SandboxSettingsLayer[];
  /** `--no-sandbox` was given. */
  noSandbox?: boolean;
}): { sandbox: JobSandbox; ignored: string[] } {
  const ignored: string[] = [];
  const trusted: SandboxSettings[] = [];
  let enabled = true;
  let source = DEFAULT_JOB_SANDBOX.source;
  for (const layer of args.layers) {
    const fromWorkspace = layer.source === 'project' || layer.source === 'local';
    const { sandbox } = layer;
    if (!fromWorkspace) {
      trusted.push(sandbox);
      if (sandbox.enabled !== undefined) {
        enabled = sandbox.enabled;
        source = `${layer.file} sandbox.enabled`;
      }
      continue;
    }
    if (sandbox.enabled === true && !enabled) {
      enabled = true;
      source = `${layer.file} sandbox.enabled`;
    }
    if (sandbox.enabled === false) {
      ignored.push(
        `${layer.file} sandbox.enabled false: a workspace file cannot turn the sandbox off; pass --no-sandbox to choose it yourself`,
      );
    }
    const widening: string[] = [];
    if (sandbox.network?.allowedDomains?.length) widening.push('sandbox.network.allowedDomains');
    if (sandbox.filesystem?.allowWrite?.length) widening.push('sandbox.filesystem.allowWrite');
    if (sandbox.filesystem?.allowRead?.length) widening.push('sandbox.filesystem.allowRead');
    for (const field of widening) {
      ignored.push(`${layer.file} ${field}: a workspace file may only tighten the sandbox`);
    }
    trusted.push({
      ...(sandbox.network?.deniedDomains ? { network: { deniedDomains: sandbox.network.deniedDomains } } : {}),
      filesystem: {
        ...(sandbox.filesystem?.denyRead ? { denyRead: sandbox.filesystem.denyRead } : {}),
        ...(sandbox.filesystem?.denyWrite ? { denyWrite: sandbox.filesystem.denyWrite } : {}),
      },
    });
  }
  if (args.noSandbox) {
    enabled = false;
    source = '--no-sandbox';
  }
  const merged = mergeSandboxSettings(...trusted);
  const network: JobSandboxNetwork = {
    ...(merged.network?.allowedDomains?.length ? { allowedDomains: merged.network.allowedDomains } : {}),
    ...(merged.network?.deniedDomains?.length ? { deniedDomains: merged.network.deniedDomains } : {}),
  };
  const fs = merged.filesystem;
  const filesystem: JobSandboxFilesystem = {
    ...(fs?.allowWrite?.length ? { allowWrite: fs.allowWrite } : {}),
    ...(fs?.denyWrite?.length ? { denyWrite: fs.denyWrite } : {}),
    ...(fs?.denyRead?.length ? { denyRead: fs.denyRead } : {}),
    ...(fs?.allowRead?.length ? { allowRead: fs.allowRead } : {}),
  };
  return {
    sandbox: {
      enabled,
      source,
      ...(Object.keys(network).length > 0 ? { network } : {}),
      ...(Object.keys(filesystem).length > 0 ? { filesystem } : {}),
    },
    ignored,
  };
}

/** How the network of a sandboxed command is set up under a job's policy. */
export type SandboxNetworkMode = 'none' | 'host';

/**
 * The network a sandboxed command gets. The Linux sandbox isolates the network namespace whole;
 * it has no proxy to filter by host name. So only `allowedDomains: ["*"]` (and no denied domains)
 * opens it; a list of particular hosts cannot be enforced by name and keeps it closed.
 */
export function sandboxNetworkMode(sandbox: JobSandbox): SandboxNetworkMode {
  const allowed = sandbox.network?.allowedDomains ?? [];
  const denied = sandbox.network?.deniedDomains ?? [];
  return allowed.includes('*') && denied.length === 0 ? 'host' : 'none';
}

/** One line for `status` and the Terminal: how this job's Bash commands are confined. */
export function describeJobSandbox(sandbox: JobSandbox): string {
  if (!sandbox.enabled) return `Bash runs unsandboxed (${sandbox.source})`;
  const network =
    sandboxNetworkMode(sandbox) === 'host'
      ? "the host's network"
      : sandbox.network?.allowedDomains?.length
        ? `no network (allowedDomains ${sandbox.network.allowedDomains.join(', ')} cannot be enforced by name; "*" opens it)`
        : 'no network';
  return `Bash runs sandboxed: writes to the workspace and a private temp folder, credential places hidden, ${network}`;
}
