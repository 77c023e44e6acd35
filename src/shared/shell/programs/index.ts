/**
 * The programs `read-only.ts` accepts as read-only, each with what its options look like: which
 * take a value, which values are files that are read (`grep -f FILE`, `rg --ignore-file`,
 * `find -newer F`, `git diff -O<file>`), which options write or run programs and are refused.
 * Only options that always take a value are listed as taking one: getting that wrong the other
 * way would let a path through unchecked. The models are in this folder: `readers.ts` (`cat`,
 * `head`, `tail`, `wc`, `ls`, `grep`, `rg`), `find.ts`, `git.ts`. Pure code.
 */
import type { Check } from './check';
import { checkFind } from './find';
import { checkGit } from './git';
import { noPaths, READERS } from './readers';

export { hasWildcard, refuse, show, type PathScope, type Refusal } from './check';

/** The programs known to only read, each with the check of its arguments. */
export const PROGRAMS = new Map<string, Check>([
  ...READERS,
  ['find', checkFind],
  ['git', checkGit],
  ['echo', noPaths],
  ['pwd', noPaths],
  ['which', noPaths],
  ['sleep', noPaths],
  ['true', noPaths],
  ['false', noPaths],
]);
