import { CommanderError } from 'commander';
import type { Command } from 'commander';
import { buildProgram } from './cli';

/** Commander's "errors" that are a successful parse: `--help` and `--version` asked for. */
const NOT_ERRORS = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

/**
 * Why the CLI would refuse `args` (the words after `durable-agent`), or undefined when they parse.
 * The CLI's own program does the parsing, with every action replaced by one that does nothing:
 * an unknown command, an unknown flag, a missing or surplus argument and a value the flag's own
 * parser rejects are all found, and nothing starts, connects or writes. The docs' commands are
 * checked with it, so a renamed flag cannot live on in them.
 */
export function argvProblem(args: readonly string[]): string | undefined {
  const program = buildProgram();
  let written = '';
  const quiet = (command: Command): void => {
    command.exitOverride();
    command.configureOutput({ writeOut: () => undefined, writeErr: (text) => (written += text) });
    // A command with subcommands dispatches (batch's default is `batch run`); only leaves act.
    if (command.commands.length === 0) command.action(() => undefined);
    for (const sub of command.commands) quiet(sub);
  };
  quiet(program);
  try {
    program.parse([...args], { from: 'user' });
    return undefined;
  } catch (error) {
    if (error instanceof CommanderError) {
      return NOT_ERRORS.has(error.code) ? undefined : error.message || written.trim();
    }
    return error instanceof Error ? error.message : String(error);
  }
}
