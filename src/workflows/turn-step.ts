import type { State } from '../shared/session';
import type { TerminalReason } from '../shared/terminal';

/** What one turn leads to: another turn from a new State, or the end. */
export type TurnStep =
  { kind: 'continue'; state: State } | { kind: 'terminal'; state: State; reason: TerminalReason; detail?: string };
