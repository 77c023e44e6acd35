import readline from 'node:readline/promises';
import type { ApprovalChoice, Approver } from './jobs';

const CHOICES: Record<string, ApprovalChoice> = {
  y: 'allow',
  yes: 'allow',
  a: 'always',
  always: 'always',
  n: 'deny',
  no: 'deny',
};

/**
 * Ask at an interactive terminal, as Claude Code does: yes, always (adds the suggested rule for
 * the rest of the job), no, or Enter to leave the call parked for `approve`/`deny` from another shell.
 */
export const ttyApprover: Approver = async (pending, signal) => {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    for (;;) {
      const answer = (
        await rl.question(
          `  Allow ${pending.toolName}? [y]es / [a]lways (${pending.suggestedRule}) / [n]o / Enter to skip: `,
          {
            signal,
          },
        )
      )
        .trim()
        .toLowerCase();
      if (answer === '') return 'skip';
      const choice = CHOICES[answer];
      if (choice) return choice;
    }
  } catch {
    // Withdrawn: the call was answered elsewhere or the job ended.
    process.stderr.write('\n');
    return 'skip';
  } finally {
    rl.close();
  }
};
