import { parseShell, splitShellCommand } from '../../src/shared/shell';

/**
 * The repository has two readers of the same grammar: `splitShellCommand` (shell/split.ts),
 * which allow rules use, and `parseShell` (shell/parse.ts), which deny rules and the read-only
 * test use. Where both read a command, they must find the same simple commands: if they did not,
 * an allow rule could approve a command that deny rules read differently.
 *
 * The simple commands each finds, as lists of words as written (assignments included,
 * redirections left out), or undefined when either refuses the command. The one intended
 * difference is undone: parseShell drops the `time` keyword (and its `-p`), which the split
 * keeps as a word, so an allow rule sees `time` and must name it.
 */
export function simpleCommandsOfBoth(command: string): { split: string[][]; parsed: string[][] } | undefined {
  const split = splitShellCommand(command);
  const parsed = parseShell(command);
  if (!split.ok || parsed.problems.length > 0) return undefined;
  return {
    split: split.commands.map((sub) => withoutTime(sub.tokens.map((token) => token.raw))),
    parsed: parsed.commands.map((simple) => [...simple.assignments, ...simple.words].map((word) => word.raw)),
  };
}

function withoutTime(words: string[]): string[] {
  if (words[0] !== 'time') return words;
  return words.slice(words[1] === '-p' ? 2 : 1);
}

/** The commands among `commands` the two readers read differently (see {@link simpleCommandsOfBoth}). */
export function disagreements(commands: readonly string[]): { compared: number; differ: unknown[] } {
  let compared = 0;
  const differ: unknown[] = [];
  for (const command of commands) {
    const both = simpleCommandsOfBoth(command);
    if (both === undefined) continue;
    compared++;
    // `time` alone runs nothing: the split sees a command with no words left.
    const split = both.split.filter((words) => words.length > 0);
    if (JSON.stringify(split) !== JSON.stringify(both.parsed)) differ.push({ command, ...both });
  }
  return { compared, differ };
}
