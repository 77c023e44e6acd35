/**
 * Reading bash command lines, without running or expanding anything. Pure code: the workflow
 * bundle imports it (permission decisions, the scheduler's read-only classification).
 *
 * - `parse.ts` (with `word-reader.ts`, `words.ts`, `types.ts`): the full reader, every simple
 *   command a line can run, nested ones included, and the code bash may run again from text.
 * - `invocations.ts` (with `invocation-builtins.ts`, `wrappers.ts`): what a line really runs,
 *   through wrappers, `sh -c`, `eval`, ..., for deny and ask rules.
 * - `read-only.ts` (with the program models in `programs/`): does a line only read, and only
 *   inside the working directories?
 * - `split.ts`: the strict split into simple commands, for allow rules.
 */
export type {
  BashHidden,
  BashReading,
  Invocation,
  ParsedShell,
  ShellCommand,
  ShellFeature,
  ShellHereDocument,
  ShellHidden,
  ShellRedirect,
  ShellWord,
  WordExpansion,
} from './types';
export { CODE_VARIABLE, parseShell, parseShellWords } from './parse';
export { programName, readBashCommand } from './invocations';
export {
  classifyReadOnlyBash,
  isReadOnlyBashCommand,
  readsOfProgram,
  type BashRead,
  type ReadOnlyContext,
  type ReadOnlyVerdict,
} from './read-only';
export type { Refusal } from './programs';
export { splitShellCommand, type ShellSplit, type ShellSubCommand, type ShellToken } from './split';
