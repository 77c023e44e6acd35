import fs from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { MESSAGE_REF_CHARS } from '../shared/signal-payloads';
import type { MessageRef, QueuedMessage, StoredUserMessage } from '../shared/signal-payloads';
import { LARGE_INPUT_FIELD_CHARS } from '../shared/tool-input-refs';
import { openContentStore } from './store-config';

/** The first characters of a message by reference that the job's events show. */
const PREVIEW_CHARS = 200;

/** `send`'s text: the argument, or the file `--file` names (`-` for stdin). */
export function messageText(arg: string | undefined, file: string | undefined): string {
  if (arg !== undefined && file !== undefined) {
    throw new InvalidArgumentError('Give the message as an argument or with --file, not both.');
  }
  if (file === undefined) {
    if (arg === undefined) {
      throw new InvalidArgumentError('No message: give it as an argument, or with --file <path> (- for stdin).');
    }
    return arg;
  }
  try {
    return fs.readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InvalidArgumentError(
      `Cannot read the message from ${file === '-' ? 'stdin' : file}${code ? ` (${code})` : ''}: check the path.`,
    );
  }
}

/**
 * What the `userMessage` signal carries: short text inline; longer text stored in the content
 * store, with a reference in its place, so it never enters the job's history (or its next model
 * call's input, which Temporal bounds). The job refuses inline text over 32,768 characters; this
 * stays well under it.
 */
export async function queuedMessage(text: string, env: NodeJS.ProcessEnv = process.env): Promise<QueuedMessage> {
  if (!text.trim()) throw new InvalidArgumentError('The message is empty.');
  if (text.length <= LARGE_INPUT_FIELD_CHARS) return text;
  if (text.length > MESSAGE_REF_CHARS) {
    throw new InvalidArgumentError(
      `The message is ${text.length.toLocaleString('en-US')} characters; at most ${MESSAGE_REF_CHARS.toLocaleString('en-US')} can be sent. ` +
        'Put the material in a file in the workspace and send a message asking the agent to read it.',
    );
  }
  const store = await openContentStore(env);
  const stored: StoredUserMessage = { kind: 'user-message', text };
  const ref: MessageRef = {
    $contentRef: await store.put(stored),
    chars: text.length,
    preview: text.slice(0, PREVIEW_CHARS),
  };
  return ref;
}
