export { SandboxEngine, refusalMessage } from './engine';
export type { CommandRequest, PreparedCommand, RefusedCommand, SandboxEngineOptions } from './engine';
export { configuredBwrap, probeSandbox } from './probe';
export type { SandboxAvailability } from './probe';
export { buildBwrapArgs, orderMounts } from './bwrap-args';
export type { BwrapPlan, Mount } from './bwrap-args';
export { isWritableIn, resolveMounts, resolveSettingsPath, resolveTrustedMounts } from './mounts';
export { findProtectedPaths } from './protected-paths';
export type { ProtectedPath } from './protected-paths';
export { Placeholders } from './placeholders';
export {
  gitOverrideEnv,
  gitShimDir,
  NO_REPOSITORY_FILTERS_ENV,
  repositoryFilterOverrides,
  withGitHardening,
} from './git-hardening';
export {
  GIT_DIR_PROTECTED_ENTRIES,
  HOME_CREDENTIAL_PLACES,
  SYSTEM_CREDENTIAL_PLACES,
  WORKSPACE_PROTECTED_PATHS,
} from './defaults';
export { unsandboxedReach } from './reach';
