/**
 * `find` for the read-only test (`read-only.ts`): its starting points and the primaries whose
 * argument is a file it reads are paths; primaries that run programs, delete or write files are
 * refused. Pure code.
 */
import type { ShellWord } from '../types';
import { refuse, show, type PathScope, type Refusal } from './check';

/** find primaries that run programs, delete, or write files. */
const FIND_UNSAFE = new Set([
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-delete',
  '-fprint',
  '-fprint0',
  '-fprintf',
  '-fls',
]);
/** find primaries whose argument is a file that is read (for its times, or a list of names). */
const FIND_FILE_ARGUMENT = /^-(?:newer|anewer|cnewer|samefile|files0-from|newer[aBcmt][aBcmt])$/;

export function checkFind(args: ShellWord[], scope: PathScope): Refusal | undefined {
  // A glob could expand to a file named `-delete`; a variable to anything at all.
  const unknown = args.find((arg) => !arg.literal);
  if (unknown !== undefined) return refuse(`${show(unknown)} is only known when the command runs`);
  let i = 0;
  while (i < args.length && /^-(?:[HLP]|O\d*|D)$/.test((args[i] as ShellWord).value)) {
    i += (args[i] as ShellWord).value === '-D' ? 2 : 1;
  }
  const starts: ShellWord[] = [];
  while (i < args.length && !/^[-(!),]/.test((args[i] as ShellWord).value)) starts.push(args[i++] as ShellWord);
  for (let j = i; j < args.length; j++) {
    const value = (args[j] as ShellWord).value;
    if (FIND_UNSAFE.has(value)) return refuse(`find ${value} is not read-only`);
    if (FIND_FILE_ARGUMENT.test(value) && args[j + 1] !== undefined) {
      const refusal = scope.path(args[++j] as ShellWord, { globs: false, tree: false });
      if (refusal !== undefined) return refusal;
    }
  }
  for (const start of starts) {
    const refusal = scope.path(start, { globs: false, tree: false });
    if (refusal !== undefined) return refusal;
  }
  if (starts.length === 0) scope.cwd(false);
  return undefined;
}
