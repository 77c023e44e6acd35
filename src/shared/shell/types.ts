/**
 * What the shell reader (`parse.ts`) reads a command line into: words, simple commands,
 * redirections, the constructs it met and the code bash may run a second time from text; and
 * what the invocation reader (`invocations.ts`) finds the line runs. Pure code.
 */

/** An expansion bash applies to a word before the program sees it. */
export type WordExpansion = 'variable' | 'substitution' | 'arithmetic' | 'process' | 'glob' | 'brace' | 'tilde';

/** One word of a command, as written and as bash will (or may) pass it on. */
export interface ShellWord {
  /** Exactly as written. */
  raw: string;
  /** After quote removal and ANSI-C decoding; expansions are left as written (`$X`, `*`, `~`). */
  value: string;
  /** True when bash applies no expansion: `value` is exactly what the program receives. */
  literal: boolean;
  expansions: WordExpansion[];
  /** True when the word may become several words or none (unquoted expansion, glob, brace, `"$@"`). */
  splits: boolean;
  /** The word as a glob: unquoted `*`, `?`, `[`, `]` kept, every other glob character escaped. */
  pattern: string;
  /** For a word that starts with an unquoted `~`: the user after it (`''` is the current user). */
  tildeUser?: string;
}

/** A redirection of a simple command. */
export interface ShellRedirect {
  /** `>`, `>>`, `>|`, `<`, `<>`, `<&`, `>&`, `&>`, `&>>`, `<<`, `<<-`, `<<<`. */
  operator: string;
  /** The file descriptor written before the operator, if any. */
  fd?: string;
  /** The target word (for a here-document, its delimiter). */
  target: ShellWord;
  /** For `<<` and `<<-`: the body, and whether bash expands it (an unquoted delimiter). */
  hereDocument?: ShellHereDocument;
}

/** A here-document's body, and whether bash expands it (an unquoted delimiter). */
export interface ShellHereDocument {
  body: string;
  expands: boolean;
}

/** One simple command: assignments, words (program first) and redirections. */
export interface ShellCommand {
  assignments: ShellWord[];
  words: ShellWord[];
  redirects: ShellRedirect[];
  /** Its standard input is the output of the previous stage of a pipeline. */
  piped: boolean;
  /** It sits inside a substitution (`$(...)`, backticks, `<(...)`), not on the line itself. */
  nested: boolean;
}

/** Shell constructs beyond plain lists and pipelines of simple commands. */
export type ShellFeature =
  | 'substitution'
  | 'process-substitution'
  | 'arithmetic'
  | 'subshell'
  | 'group'
  | 'control'
  | 'function'
  | 'here-document'
  | 'here-string'
  | 'background';

/** Text bash may run as code a second time, out of the parser's sight (see the module comment of `parse.ts`). */
export interface ShellHidden {
  /** Why, as a clause for the user. */
  why: string;
  /**
   * The word or here-document holding it: a caller that reads that text as a command line
   * itself (`bash -c '...'`, `trap '...'`) has followed the code and may disregard the entry.
   */
  source?: ShellWord | ShellHereDocument;
  /** A `${x@P}`-style expansion: bash evaluates it whatever program receives the word. */
  expansion?: true;
}

/** What {@link parseShell} read. */
export interface ParsedShell {
  /** Every simple command found, nested ones included, in source order. */
  commands: ShellCommand[];
  features: ShellFeature[];
  /** What could not be read. When not empty, `commands` may be incomplete. */
  problems: string[];
  /** Code bash may run a second time from text (see {@link ShellHidden}). */
  hidden: ShellHidden[];
}

/** One program the command line runs. */
export interface Invocation {
  /** The program word and its arguments. */
  words: ShellWord[];
  /** The program's name (basename), or undefined when it is only known once the command runs. */
  program: string | undefined;
  /** For a program only known when it runs: why, when the words alone do not show it. */
  why?: string;
}

/** Everything {@link readBashCommand} found. */
export interface BashReading {
  parsed: ParsedShell;
  invocations: Invocation[];
  /** Parts that could not be read: whatever they run is unknown, so any deny rule might match. */
  unreadable: string[];
  /**
   * Code bash may run a second time from text, not followed as commands (see the module
   * comment of `invocations.ts`): whatever it runs is unknown, so any deny rule might match.
   */
  hidden: BashHidden[];
}

/** One piece of {@link BashReading.hidden}. */
export interface BashHidden {
  why: string;
  /** A `${x@P}`-style expansion, evaluated whatever program receives the word. */
  expansion?: true;
}
