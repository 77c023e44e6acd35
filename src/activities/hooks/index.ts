export { runHooks, type RunHooksDeps } from './run-hooks';
export { HOOK_CAPTURE_CHARS, runHookProcess, type HookProcessRequest, type HookProcessResult } from './hook-process';
