/**
 * What every program model of the read-only test (`read-only.ts`) shares: the check's signature,
 * the refusal it returns, the scope it checks paths in, and small helpers for words. Pure code.
 */
import type { ShellWord } from '../types';

/** Why a command is not read-only. */
export interface Refusal {
  readOnly: false;
  /** As a clause ("it runs npm", "it reads /etc/passwd, outside the workspace"). */
  why: string;
  /** Set when the objection is a path outside the working directories. */
  outside?: string;
  /** Set when the objection is a Read deny or ask rule covering what it reads. */
  readRule?: boolean;
}

/** Where paths are checked: the working directories of the command being classified. */
export interface PathScope {
  /** Check one path argument: a refusal, or undefined when it is inside (and recorded). */
  path(word: ShellWord, options: { globs: boolean; tree: boolean; follows?: boolean }): Refusal | undefined;
  /** Record that the command reads its working directory (`ls`, `rg x`, `grep -r x`). */
  cwd(tree: boolean, follows?: boolean): void;
  /** The engine generation the job decides with (`PermissionContext.engine`). */
  readonly engine: number | undefined;
}

/** A refusal with its reason. */
export function refuse(why: string, outside?: string): Refusal {
  return outside === undefined ? { readOnly: false, why } : { readOnly: false, why, outside };
}

/** A word for a message, quoted and cut short. */
export function show(word: ShellWord): string {
  return JSON.stringify(word.raw.length > 80 ? `${word.raw.slice(0, 77)}...` : word.raw);
}

/** Has this glob pattern (escapes kept) an unescaped wildcard? */
export function hasWildcard(segment: string): boolean {
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i];
    if (ch === '\\') i++;
    else if (ch === '*' || ch === '?' || ch === '[') return true;
  }
  return false;
}

export type Check = (args: ShellWord[], scope: PathScope) => Refusal | undefined;

/** The part of a literal option word after `from` (an attached value), as a word of its own. */
export function sliceWord(word: ShellWord, from: number): ShellWord {
  const value = word.value.slice(from);
  return { raw: value, value, literal: word.literal, expansions: word.expansions, splits: false, pattern: value };
}
