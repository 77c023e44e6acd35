/**
 * Programs that run the rest of their arguments as another program (`env`, `timeout`, `sudo`,
 * `xargs`, ...), with just enough of their option syntax to find that program. An option that
 * is not known makes the reading unsure, and the caller then tries every later word as the
 * program; a word only known at run time where an option or the program should be makes the
 * program unknown. Pure code.
 */
import type { ShellWord } from './types';

/**
 * Programs that run another program given in their arguments, with options this module does not
 * model: every later word is tried as the program, and quoted command strings (`su -c '...'`,
 * `watch '...'`) are read as command lines.
 */
export const LOOSE_RUNNERS = new Set([
  'strace',
  'ltrace',
  'valgrind',
  'gdb',
  'perf',
  'pkexec',
  'runuser',
  'su',
  'sg',
  'caffeinate',
  'unbuffer',
  'faketime',
  'prlimit',
  'numactl',
  'chrt',
  'taskset',
  'flock',
  'parallel',
  'rlwrap',
  'catchsegv',
  'setpriv',
  'nsenter',
  'unshare',
  'firejail',
  'bwrap',
  'systemd-run',
  'fakeroot',
  'proot',
  'nsjail',
  'torsocks',
  'proxychains',
  'proxychains4',
  'watch',
  'script',
  'dbus-run-session',
  'xvfb-run',
  'ssh-agent',
  'dotenv',
  'direnv',
  'coproc',
]);

/** How a wrapper's own options look, so its program can be found. */
export interface WrapperSpec {
  /** Short options that take a value (attached, or the next word). */
  short?: string;
  /** Long options that take a value (`--name=value` or `--name value`). */
  long?: readonly string[];
  /** Short flags known to take no value; any other letter makes the parse unsure. */
  flags?: string;
  longFlags?: readonly string[];
  /** Short options whose value, if any, is attached (`xargs -i{}`). */
  optional?: string;
  /** `NAME=value` words after the options set the environment (`env`, `sudo`). */
  assignments?: boolean;
  /** Words between the options and the program (`timeout DURATION`, `chroot DIR`). */
  positionals?: number;
  /** `-5` is an option (`nice -5`). */
  numeric?: boolean;
}

/** The wrappers whose options are modelled, by program name. */
export const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: {
    short: 'uCSP',
    long: ['--unset', '--chdir', '--split-string'],
    flags: 'i0v',
    longFlags: ['--ignore-environment', '--null', '--debug', '--default-signal', '--ignore-signal', '--block-signal'],
    assignments: true,
  },
  sudo: {
    short: 'ugCDhprtUTR',
    long: ['--user', '--group', '--close-from', '--chdir', '--host', '--prompt', '--role', '--type', '--other-user'],
    flags: 'AbBEHkKnPSislvVe',
    longFlags: ['--askpass', '--background', '--preserve-env', '--set-home', '--non-interactive', '--shell', '--login'],
    assignments: true,
  },
  doas: { short: 'uC', flags: 'nsL' },
  command: { flags: 'pvV' },
  builtin: {},
  exec: { short: 'a', flags: 'cl' },
  nohup: {},
  time: {
    short: 'of',
    long: ['--output', '--format'],
    flags: 'pavq',
    longFlags: ['--portability', '--append', '--verbose', '--quiet'],
  },
  nice: { short: 'n', long: ['--adjustment'], numeric: true },
  timeout: {
    short: 'sk',
    long: ['--signal', '--kill-after'],
    flags: 'v',
    longFlags: ['--preserve-status', '--foreground', '--verbose'],
    positionals: 1,
  },
  stdbuf: { short: 'ioe', long: ['--input', '--output', '--error'] },
  ionice: { short: 'cnpPu', long: ['--class', '--classdata', '--pid', '--pgid', '--uid'], flags: 't' },
  setsid: { flags: 'cfw', longFlags: ['--ctty', '--fork', '--wait'] },
  chroot: { long: ['--userspec', '--groups'], longFlags: ['--skip-chdir'], positionals: 1 },
  xargs: {
    short: 'adEILnPs',
    long: [
      '--arg-file',
      '--delimiter',
      '--max-args',
      '--max-procs',
      '--max-chars',
      '--process-slot-var',
      '--max-lines',
    ],
    flags: '0oprtx',
    optional: 'eil',
    longFlags: [
      '--null',
      '--no-run-if-empty',
      '--verbose',
      '--interactive',
      '--exit',
      '--open-tty',
      '--replace',
      '--eof',
    ],
  },
  busybox: { longFlags: ['--list', '--help'] },
};

/**
 * A wrapper's arguments split: the program it runs (with the options it was given), none, a
 * program only known at run time (`unknown`), or options not modelled (`unsure`: any later word
 * may be the program).
 */
export type Unwrapped = (
  | { kind: 'program'; words: ShellWord[]; options: Map<string, ShellWord> }
  | { kind: 'none'; options: Map<string, ShellWord> }
  | { kind: 'unknown'; words: ShellWord[] }
  | { kind: 'unsure'; words: ShellWord[] }
) & {
  /** The `NAME=value` words it sets in the program's environment (`env`, `sudo`). */
  assignments?: ShellWord[];
};

/** Split a wrapper's arguments into its options and the program it runs. */
export function unwrap(args: ShellWord[], spec: WrapperSpec): Unwrapped {
  const options = new Map<string, ShellWord>();
  let unsure = false;
  let i = 0;
  const takesValue = (word: ShellWord | undefined): ShellWord | undefined => {
    // An unquoted expansion as a value may be several words: the program's position is lost.
    if (word === undefined || word.splits) return undefined;
    return word;
  };
  while (i < args.length) {
    const arg = args[i] as ShellWord;
    if (!arg.literal) return { kind: 'unknown', words: args.slice(i) };
    const value = arg.value;
    if (value === '--') {
      i++;
      break;
    }
    if (value.startsWith('--') && value.length > 2) {
      const equals = value.indexOf('=');
      const name = equals < 0 ? value : value.slice(0, equals);
      if (spec.long?.includes(name)) {
        if (equals < 0) {
          const next = takesValue(args[i + 1]);
          if (next === undefined) return { kind: 'unknown', words: args.slice(i) };
          options.set(name, next);
          i += 2;
        } else {
          options.set(name, { ...arg, raw: arg.raw.slice(equals + 1), value: value.slice(equals + 1) });
          i++;
        }
        continue;
      }
      if (!spec.longFlags?.includes(name)) unsure = true;
      options.set(name, arg);
      i++;
      continue;
    }
    if (value.startsWith('-') && value.length > 1) {
      if (spec.numeric === true && /^-\d+$/.test(value)) {
        i++;
        continue;
      }
      let consumedNext = false;
      for (let k = 1; k < value.length; k++) {
        const letter = value[k] as string;
        const rest = value.slice(k + 1);
        if (spec.short?.includes(letter)) {
          if (rest === '') {
            const next = takesValue(args[i + 1]);
            if (next === undefined) return { kind: 'unknown', words: args.slice(i) };
            options.set(letter, next);
            consumedNext = true;
          } else {
            options.set(letter, { ...arg, raw: rest, value: rest });
          }
          break;
        }
        if (spec.optional?.includes(letter)) {
          options.set(letter, { ...arg, raw: rest, value: rest });
          break;
        }
        if (!spec.flags?.includes(letter)) unsure = true;
        options.set(letter, arg);
      }
      i += consumedNext ? 2 : 1;
      continue;
    }
    break;
  }
  const first = i;
  if (spec.assignments === true) {
    // Like env itself: any word with a `=` (quoted too: `env 'A=1' rm`) sets a variable.
    while (i < args.length && (args[i] as ShellWord).value.includes('=')) i++;
  }
  const assignments = args.slice(first, i);
  for (let p = 0; p < (spec.positionals ?? 0); p++) {
    const positional = args[i];
    if (positional === undefined) return { kind: 'none', options, assignments };
    if (positional.splits) return { kind: 'unknown', words: args.slice(i), assignments };
    i++;
  }
  if (unsure) return { kind: 'unsure', words: args.slice(i), assignments };
  return i < args.length
    ? { kind: 'program', words: args.slice(i), options, assignments }
    : { kind: 'none', options, assignments };
}

/** The string xargs replaces with each input item (`-I R`, `-i[R]`, `--replace[=R]`), if any. */
export function xargsReplaceString(options: Map<string, ShellWord>): string | undefined {
  const explicit = options.get('I')?.value;
  if (explicit !== undefined) return explicit;
  if (options.has('i')) return options.get('i')?.value || '{}';
  const long = options.get('--replace')?.value;
  if (long === undefined) return undefined;
  const equals = long.indexOf('=');
  return equals < 0 ? '{}' : long.slice(equals + 1);
}
