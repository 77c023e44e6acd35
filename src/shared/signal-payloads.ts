/**
 * The payloads a running job accepts from outside, as zod schemas. Any Temporal client can signal
 * a job (`temporal workflow signal --input ...`), so the workflow checks every payload itself: a
 * handler that threw would fail the workflow task on every attempt and wedge the job for good.
 * Pure and free of Node built-ins: the workflow bundle imports it, and so does the CLI.
 */
import { z } from 'zod';
import type { ApprovalAnswer } from './session';
import { PERMISSION_MODES } from './permissions/types';
import { builtSchema, lazySchema } from './lazy-schema';
import { isUndecodablePayload } from './payload-converter';

/** Longest abort reason or approval reason kept; longer text is cut, not refused. */
const REASON_CHARS = 2_000;

const reason = lazySchema(() =>
  z
    .string()
    .transform((text) => text.trim().slice(0, REASON_CHARS))
    .describe('free text shown in the Terminal or to the model'),
);

/** `abort [reason]`: no argument, or a string. */
export const abortPayload = lazySchema(() =>
  z.union([z.undefined(), z.null().transform(() => undefined), builtSchema(reason)]),
);

/** `setMaxTurns n`: a positive integer. */
export const maxTurnsPayload = lazySchema(() => z.number().int().positive().max(1_000_000));

/** `userMessage text`: non-blank text. */
export const userMessagePayload = lazySchema(() =>
  z.string().refine((text) => text.trim() !== '', 'the message is blank'),
);

/**
 * A user message kept by reference: `durable-agent send --file` stores a long message as a
 * {@link StoredUserMessage} and signals this in its place, so the text enters no workflow history.
 */
export interface MessageRef {
  $contentRef: string;
  chars: number;
  preview: string;
}

/** What a job's inbox holds: text sent inline, or a reference to a stored message. */
export type QueuedMessage = string | MessageRef;

/** What the store holds for a message by reference. */
export interface StoredUserMessage {
  kind: 'user-message';
  text: string;
}

/** Longest message sent inline; a longer one is refused with a pointer to `send --file`. */
export const INLINE_MESSAGE_CHARS = 32_768;
/**
 * Longest message by reference (`send --file` refuses longer ones before storing anything):
 * about 100,000 tokens, so one message still fits the model's context with the conversation.
 */
export const MESSAGE_REF_CHARS = 400_000;
/** Most messages a job queues between two turns. */
export const INBOX_MESSAGES = 100;
/** Most characters of inline messages a job queues between two turns (the next model call carries them). */
export const INBOX_INLINE_CHARS = 262_144;
/** Most characters of messages by reference a job queues between two turns. */
export const INBOX_REF_CHARS = 400_000;

/** `userMessage text` or a {@link MessageRef}: what jobs started since inbox bounds accept. */
export const queuedMessagePayload: z.ZodType<QueuedMessage> = lazySchema(() =>
  z.union([
    builtSchema(userMessagePayload),
    z.strictObject({
      $contentRef: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'not a content address (sha256:<64 hex digits>)'),
      chars: z.number().int().positive().max(MESSAGE_REF_CHARS),
      preview: z.string().max(400),
    }),
  ]),
);

/** `approval {toolUseId?, decision, always?, reason?}`. */
export const approvalPayload: z.ZodType<ApprovalAnswer> = lazySchema(() =>
  z.strictObject({
    toolUseId: z.string().min(1).optional(),
    decision: z.enum(['allow', 'deny']),
    always: z.boolean().optional(),
    reason: builtSchema(reason).optional(),
    updatedInput: z.record(z.string(), z.unknown()).optional(),
  }),
);

/** `hookCallbackAnswer`: what the Agent SDK app's hook callback returned, or why it returned nothing. */
export interface HookCallbackAnswer {
  /** The pending callback's id (`PendingHookCallback.id`). */
  id: string;
  /** The callback's output: Claude Code's hook JSON output. */
  output?: Record<string, unknown>;
  /** It failed: the app's error. */
  error?: string;
  /** The app gave no answer within the hook's timeout. */
  timedOut?: boolean;
}

export const hookCallbackAnswerPayload: z.ZodType<HookCallbackAnswer> = lazySchema(() =>
  z.strictObject({
    id: z.string().min(1).max(500),
    output: z.record(z.string(), z.unknown()).optional(),
    error: z.string().max(10_000).optional(),
    timedOut: z.boolean().optional(),
  }),
);

/** `setPermissionMode`: one of the permission modes. */
export const permissionModePayload = lazySchema(() => z.enum(PERMISSION_MODES));

/** `setModel`: a model name, as `--model` takes it. */
export const modelNamePayload = lazySchema(() =>
  z
    .string()
    .trim()
    .min(1, 'the model name is blank')
    .max(200)
    .regex(/^[A-Za-z0-9._:@/-]+$/, 'a model name has only letters, digits and . _ : @ / -'),
);

/** `snapshot [sinceSeq]`: no argument, or a non-negative integer. */
export const sinceSeqPayload = lazySchema(() =>
  z.union([z.undefined(), z.null().transform(() => 0), z.number().int().nonnegative()]),
);

/**
 * Parse one payload. On failure the message says which signal, what was wrong and what a valid
 * payload looks like, for the job's events (the sender may be a person with the temporal CLI).
 */
export function parsePayload<T>(
  signal: string,
  schema: z.ZodType<T>,
  args: unknown[],
  example: string,
): { ok: true; value: T } | { ok: false; notice: string } {
  if (args.length > 1) {
    return {
      ok: false,
      notice: `${signal} signal ignored: it takes one argument, got ${args.length}; send ${example}`,
    };
  }
  if (isUndecodablePayload(args[0])) {
    return {
      ok: false,
      notice: `${signal} signal ignored: its payload could not be decoded (${args[0].undecodablePayload}); send ${example} as JSON (the temporal CLI's default encoding)`,
    };
  }
  const parsed = schema.safeParse(args[0]);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = parsed.error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
  return {
    ok: false,
    notice: `${signal} signal ignored: ${describe(args[0])} is not valid (${problems}); send ${example}`,
  };
}

function describe(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** `taskCost {taskId, costUsd}`: a batch's job reporting what it has cost so far. */
export const taskCostPayload = lazySchema(() =>
  z.strictObject({
    taskId: z.string().min(1),
    costUsd: z.number().nonnegative().finite(),
  }),
);

/** `batchBudgetSpent [what]`: the job's batch has spent its budget; the text says how much. */
export const batchBudgetPayload = lazySchema(() =>
  z.union([z.undefined(), z.null().transform(() => undefined), builtSchema(reason)]),
);
