/**
 * Scripted sessions: their zod schema, loading them from JSON, and the lookups the server does
 * per request (which fault applies, which reply answers it). Which turn a request is on is
 * turns.ts's business.
 */
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { z } from 'zod';
import type {
  ScheduledCompactionFault,
  ScheduledFault,
  ScriptedReply,
  ScriptedSession,
  ScriptedStopReason,
} from './types';

/** Stop reasons after which a reply may end in the middle of a block (a `partial_json` tool call). */
export const CUTTING_STOP_REASONS: readonly ScriptedStopReason[] = [
  'max_tokens',
  'model_context_window_exceeded',
  'refusal',
];

const count = z.number().int().nonnegative();
const delayMs = z.number().nonnegative();

const textBlockSchema = z.strictObject({ type: z.literal('text'), text: z.string() });
const toolUseBlockSchema = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  // The API always produces a JSON object here; anything else would be an impossible reply.
  input: z.record(z.string(), z.unknown()),
  partial_json: z.string().optional(),
});
const thinkingBlockSchema = z.strictObject({ type: z.literal('thinking'), thinking: z.string() });
// The API never sends an empty redacted block: it stands for thinking that happened.
const redactedThinkingBlockSchema = z.strictObject({ type: z.literal('redacted_thinking'), data: z.string().min(1) });

const stopReasonSchema = z.enum([
  'end_turn',
  'tool_use',
  'max_tokens',
  'stop_sequence',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

const replySchema = z
  .strictObject({
    content: z.array(
      z.discriminatedUnion('type', [
        textBlockSchema,
        toolUseBlockSchema,
        thinkingBlockSchema,
        redactedThinkingBlockSchema,
      ]),
    ),
    stop_reason: stopReasonSchema.optional(),
    stop_details: z
      .strictObject({
        type: z.literal('refusal'),
        category: z.string().nullable(),
        explanation: z.string().nullable(),
      })
      .optional(),
    usage: z
      .strictObject({
        input_tokens: count.optional(),
        output_tokens: count.optional(),
        cache_creation_input_tokens: count.optional(),
        cache_read_input_tokens: count.optional(),
      })
      .optional(),
  })
  .superRefine((reply, ctx) => {
    // A reply the real API could not produce would make a test prove nothing.
    for (const [i, block] of reply.content.entries()) {
      if (block.type !== 'tool_use' || block.partial_json === undefined) continue;
      if (i !== reply.content.length - 1) {
        ctx.addIssue({
          code: 'custom',
          path: ['content', i, 'partial_json'],
          message: 'only the last block of a reply can be cut off',
        });
      }
      if (!reply.stop_reason || !CUTTING_STOP_REASONS.includes(reply.stop_reason)) {
        ctx.addIssue({
          code: 'custom',
          path: ['stop_reason'],
          message: `a reply cut inside a tool_use needs stop_reason ${CUTTING_STOP_REASONS.join(', ')}`,
        });
      }
    }
    if (reply.stop_details && reply.stop_reason !== 'refusal') {
      ctx.addIssue({ code: 'custom', path: ['stop_details'], message: "stop_details needs stop_reason 'refusal'" });
    }
  });

/** The fault variants, each carrying the fields of `target` (where it applies). */
function faultSchemaFor<T extends z.ZodRawShape>(target: T, reply: z.ZodType<ScriptedReply>) {
  return z.discriminatedUnion('kind', [
    z.strictObject({
      ...target,
      kind: z.literal('http'),
      status: z.number().int().min(400).max(599),
      errorType: z.string().min(1),
      message: z.string().optional(),
      retryAfterSeconds: z.number().nonnegative().optional(),
      errorCode: z.string().min(1).optional(),
    }),
    z.strictObject({
      ...target,
      kind: z.literal('stream_error'),
      afterBlocks: count.optional(),
      midBlock: z.boolean().optional(),
      errorType: z.string().min(1),
      message: z.string().optional(),
      errorCode: z.string().min(1).optional(),
    }),
    z.strictObject({
      ...target,
      kind: z.literal('drop'),
      afterBlocks: count.optional(),
      midBlock: z.boolean().optional(),
    }),
    z.strictObject({ ...target, kind: z.literal('hang') }),
    z.strictObject({ ...target, kind: z.literal('reply'), reply }),
  ]);
}

const attempt = z.number().int().min(1);
const faultSchema = faultSchemaFor({ turn: count, attempt }, replySchema);

// The agent asks for a summary with tool_choice none, so the model cannot answer with a tool call.
const compactionReplySchema = replySchema.refine((reply) => reply.content.every((b) => b.type === 'text'), {
  message: 'a compaction is asked with tool_choice none: its reply can only hold text blocks',
  path: ['content'],
});
const compactionsSchema = z.strictObject({
  replies: z.array(compactionReplySchema).optional(),
  faults: z.array(faultSchemaFor({ index: count, attempt }, compactionReplySchema)).optional(),
});

/** Two faults for one target would silently shadow each other. */
function checkDuplicateTargets<F>(
  faults: readonly F[],
  keyOf: (fault: F) => string,
  path: ReadonlyArray<string>,
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<string>();
  for (const [i, fault] of faults.entries()) {
    const key = keyOf(fault);
    if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [...path, i], message: `duplicate fault for ${key}` });
    seen.add(key);
  }
}

const sessionSchema = z
  .strictObject({
    name: z.string().optional(),
    replies: z.array(replySchema),
    faults: z.array(faultSchema).optional(),
    compactions: compactionsSchema.optional(),
    contextWindow: z.number().int().positive().optional(),
    cacheTtlMs: z.number().positive().optional(),
    chunkDelayMs: delayMs.optional(),
    // JSON object keys are strings; they must still name turns.
    slowTurns: z.record(z.string().regex(/^\d+$/, 'slowTurns keys must be turn numbers'), delayMs).optional(),
  })
  .superRefine((session, ctx) => {
    checkDuplicateTargets(session.faults ?? [], (f) => `turn ${f.turn} attempt ${f.attempt}`, ['faults'], ctx);
    const compactionFaults = session.compactions?.faults ?? [];
    const compactionKey = (f: { index: number; attempt: number }) => `compaction ${f.index} attempt ${f.attempt}`;
    checkDuplicateTargets(compactionFaults, compactionKey, ['compactions', 'faults'], ctx);
  });

function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `  - ${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('\n');
}

/**
 * Validate an in-memory session. `source` names where it came from in the error message.
 * Throws an Error listing every invalid field by path (e.g. `replies.0.content.1.input`).
 */
export function parseScriptedSession(value: unknown, source: string): ScriptedSession {
  const result = sessionSchema.safeParse(value);
  if (!result.success) throw new Error(`Invalid scripted session ${source}:\n${formatIssues(result.error)}`);
  const session: ScriptedSession = result.data;
  return session;
}

/**
 * Read and validate a scripted session JSON file. A session without a `name` is named after the
 * file, so "no reply for turn N" errors say which script ran out.
 */
export function loadScriptedSession(path: string): ScriptedSession {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`Cannot read scripted session ${path}: ${(err as Error).message}`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`Scripted session ${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const session = parseScriptedSession(json, path);
  return { ...session, name: session.name ?? basename(path, extname(path)) };
}

/** The fault scheduled for this (turn, attempt), if any. */
export function faultFor(session: ScriptedSession, turn: number, attempt: number): ScheduledFault | undefined {
  return session.faults?.find((f) => f.turn === turn && f.attempt === attempt);
}

/** The fault scheduled for this (compaction index, attempt), if any. */
export function compactionFaultFor(
  session: ScriptedSession,
  index: number,
  attempt: number,
): ScheduledCompactionFault | undefined {
  return session.compactions?.faults?.find((f) => f.index === index && f.attempt === attempt);
}

/** The reply for a turn, if the script has one. */
export function replyFor(session: ScriptedSession, turn: number): ScriptedReply | undefined {
  return session.replies[turn];
}

/** Per-chunk delay for a turn: its `slowTurns` entry, else the session's `chunkDelayMs`, else 0. */
export function chunkDelayFor(session: ScriptedSession, turn: number): number {
  return session.slowTurns?.[turn] ?? session.chunkDelayMs ?? 0;
}

/** Name used in error messages. */
export function sessionLabel(session: ScriptedSession): string {
  return session.name ?? '(unnamed)';
}
