import type Anthropic from '@anthropic-ai/sdk';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type {
  CallAccounting,
  CallModelInput,
  CallModelResult,
  CallPricing,
  MicrocompactInput,
} from '../shared/activity-types';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import type { AssistantContentBlock, AssistantMessage, Message, ToolResultBlock, Usage } from '../shared/messages';
import { callCostUsd, modelPricesExample, modelPricesFor } from '../shared/pricing';
import type { ModelPrices } from '../shared/pricing';
import { builtSchema } from '../shared/lazy-schema';
import { getToolDefinition } from '../shared/tools';
import { INPUT_FIELD_PREVIEW_CHARS, largeInputFields } from '../shared/tool-input-refs';
import type { InputFieldRef, StoredInputField } from '../shared/tool-input-refs';
import { clearableChars, clearOldToolResults, microcompactBoundary, requestChars } from './context-window';
import { streamModelReply, toUsage } from './model-stream';
import { thinkingRequest } from '../shared/thinking';
import { paidAgainBefore } from '../shared/stream-progress';
import { setAsideForTurnBudget } from './tools/large-result';
import type { ContentStore } from './store/content-store';
import type { TranscriptStore } from './store/transcript-store';

export interface CallModelDeps {
  anthropic: () => Anthropic;
  store: ContentStore;
  transcripts: TranscriptStore;
  /**
   * This worker's own data folder (`<DURABLE_AGENT_HOME>/store`), where a tool result over the
   * turn's budget is saved for the model to read; local even when the content store is shared.
   */
  dataDir: string;
  /** Abort a stream that sends nothing for this long (a stalled connection is retried). */
  streamIdleMs?: number;
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/** Stop reasons that can end a reply in the middle of its last block. */
const CUTTING_STOP_REASONS: ReadonlySet<string> = new Set(['max_tokens', 'model_context_window_exceeded', 'refusal']);

/**
 * Phase 2 of a turn: write the pending messages into the transcript, send the whole conversation
 * to the model, stream the reply (heartbeating the partial text), and write the reply into the
 * transcript. The workflow gets the reply and a new transcript head, never the whole transcript.
 *
 * What is written is what the API will accept back and what is safe to act on: a tool call cut
 * off by the end of the reply is dropped (its input is whatever the SDK's partial-JSON parser
 * kept, and a tool_use without its tool_result would make the next request a 400), blank text is
 * dropped, a reply left with no content is not written at all, and neither is a refused one (the
 * API asks for the refused turn to be removed). The fields of {@link CallModelResult} say which
 * of these happened.
 */
export async function callModel(deps: CallModelDeps, input: CallModelInput): Promise<CallModelResult> {
  const prices = pricesForCall(input);
  const workspace = input.workspace;
  const setAside =
    workspace === undefined
      ? undefined
      : async (block: ToolResultBlock): Promise<ToolResultBlock> => ({
          ...block,
          content: await setAsideForTurnBudget(block.content, workspace, deps.dataDir),
        });
  const appended = await deps.transcripts.resolve(input.append, setAside);
  const transcriptBeforeReply = await deps.transcripts.append(input.transcript, appended);
  const loaded = await deps.transcripts.load(transcriptBeforeReply);
  // Microcompact: old tool results go out as a marker. The stored transcript keeps them whole.
  const context = input.context;
  const clearedBefore = context ? microcompactTo(loaded, context) : 0;
  const messages = clearOldToolResults(loaded, clearedBefore);
  const system = await systemPrompt(deps, input);
  const tools = toolSchemas(input.tools);
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model: input.model,
    max_tokens: input.maxTokens,
    ...thinkingRequest(input.model, input.thinking, input.effort, input.maxTokens),
    system,
    tools,
    messages: withCacheBreakpoint(messages),
  };

  const startedAt = Date.now();
  const toolInputJson = new Map<number, string>();
  const final = await streamModelReply(deps.anthropic(), params, {
    streamIdleMs: deps.streamIdleMs,
    fallbackAvailable: input.fallbackAvailable,
    toolInputJson,
  });
  const apiMs = Date.now() - startedAt;
  const { message, truncatedToolUse } = keptReply(final, toolInputJson);
  const emptyReply = message.content.length === 0;
  const refused = final.stop_reason === 'refusal';
  const transcript =
    emptyReply || refused ? transcriptBeforeReply : await deps.transcripts.append(transcriptBeforeReply, [message]);
  const usage = toUsage(final.usage);
  return {
    // The workflow acts on text and tool calls; thinking (long, with its signature) stays in the
    // transcript, out of the job's history.
    message: await withLargeInputsByRef(deps.store, withoutThinking(message)),
    usage,
    ...callAccounting(prices, usage, apiMs),
    stopReason: final.stop_reason,
    model: final.model,
    transcript,
    transcriptBeforeReply,
    emptyReply,
    ...(truncatedToolUse ? { truncatedToolUse } : {}),
    ...(refused
      ? {
          stopDetails: {
            category: final.stop_details?.category ?? null,
            explanation: final.stop_details?.explanation ?? null,
          },
        }
      : {}),
    ...(context ? { requestChars: requestChars(system, messages, tools), clearedBefore } : {}),
  };
}

/**
 * The prices of the call's model, settings first. Under a budget a model without a price fails
 * the call before anything is sent (and is not retried): the budget could not be kept otherwise.
 */
export function pricesForCall(input: { model: string; pricing?: CallPricing }): ModelPrices | undefined {
  const prices = modelPricesFor(input.model, input.pricing?.prices ?? []);
  if (!prices && input.pricing?.requirePrice) {
    throw ApplicationFailure.create({
      message:
        `no price is known for ${input.model}, so --max-budget-usd cannot be kept: add its prices in USD per ` +
        `million tokens to a settings file, e.g. ${modelPricesExample(input.model)}, or run without a budget`,
      type: MODEL_FAILURE_TYPES.configuration,
      nonRetryable: true,
    });
  }
  return prices;
}

/**
 * Cost, API time and attempt of a call that answered, and what its earlier attempts were billed
 * for and lost (from the last heartbeat of the attempt before).
 */
export function callAccounting(prices: ModelPrices | undefined, usage: Usage, apiMs: number): CallAccounting {
  const { info } = Context.current();
  const paid = paidAgainBefore(info.heartbeatDetails);
  return {
    costUsd: prices ? callCostUsd(prices, usage) : null,
    apiMs,
    attempt: info.attempt,
    ...(paid ? { paidAgain: { ...paid, costUsd: prices ? callCostUsd(prices, paid.usage) : null } } : {}),
  };
}

/**
 * Where microcompact's clearing ends for this call. Moving the boundary rewrites the cached prompt
 * from that point on, so it moves only for a saving worth that (`minSavingChars`; none is needed
 * when the cache has gone cold anyway).
 */
function microcompactTo(messages: Message[], context: MicrocompactInput): number {
  if (!context.microcompact) return context.clearedBefore;
  const candidate = microcompactBoundary(messages, context.keepRecentToolResults, context.clearedBefore);
  const saving = clearableChars(messages, context.clearedBefore, candidate);
  return saving > 0 && saving >= (context.minSavingChars ?? 0) ? candidate : context.clearedBefore;
}

/**
 * The job's system prompt. It was written once, for the job's first model; after a fallback
 * switch it must name the model that really answers.
 */
export async function systemPrompt(
  deps: Pick<CallModelDeps, 'store'>,
  input: Pick<CallModelInput, 'systemPromptRef' | 'model'>,
): Promise<Anthropic.TextBlockParam[]> {
  const text = (await deps.store.get<string>(input.systemPromptRef)).replace(/^Model: .*$/m, `Model: ${input.model}`);
  return [{ type: 'text', text, cache_control: EPHEMERAL }];
}

/**
 * The reply as the workflow receives it: large string fields of tool inputs (a Write's content)
 * replaced by references into the store. The transcript keeps the message whole.
 */
async function withLargeInputsByRef(store: ContentStore, message: AssistantMessage): Promise<AssistantMessage> {
  if (!message.content.some((block) => block.type === 'tool_use' && largeInputFields(block.input).length > 0)) {
    return message;
  }
  const content: AssistantContentBlock[] = [];
  for (const block of message.content) {
    const fields = block.type === 'tool_use' ? largeInputFields(block.input) : [];
    if (block.type !== 'tool_use' || fields.length === 0) {
      content.push(block);
      continue;
    }
    const input = { ...(block.input as Record<string, unknown>) };
    for (const field of fields) {
      const value = input[field] as string;
      input[field] = {
        $contentRef: await store.put({
          kind: 'tool-input-field',
          toolUseId: block.id,
          field,
          value,
        } satisfies StoredInputField),
        chars: value.length,
        preview: value.slice(0, INPUT_FIELD_PREVIEW_CHARS),
      } satisfies InputFieldRef;
    }
    content.push({ ...block, input });
  }
  return { ...message, content };
}

const schemaCache = new Map<string, Anthropic.Tool>();

export function toolSchemas(names: string[]): Anthropic.Tool[] {
  const tools = names.map((name) => {
    let tool = schemaCache.get(name);
    if (!tool) {
      const definition = getToolDefinition(name);
      if (!definition) {
        throw ApplicationFailure.create({
          message: `Unknown tool "${name}" in the session's tool list`,
          type: MODEL_FAILURE_TYPES.configuration,
          nonRetryable: true,
        });
      }
      const { $schema: _ignored, ...schema } = z.toJSONSchema(builtSchema(definition.inputSchema), {
        io: 'input',
      }) as Record<string, unknown>;
      tool = { name, description: definition.description, input_schema: schema as Anthropic.Tool.InputSchema };
      schemaCache.set(name, tool);
    }
    return tool;
  });
  const last = tools.at(-1);
  return last ? [...tools.slice(0, -1), { ...last, cache_control: EPHEMERAL }] : tools;
}

/** A cache breakpoint on the newest message, so the next turn reads the whole prefix from cache. */
export function withCacheBreakpoint(messages: Message[]): Anthropic.MessageParam[] {
  return messages.map((message, index) => {
    if (index !== messages.length - 1) return message as Anthropic.MessageParam;
    const content =
      typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
    const lastBlock = content.at(-1);
    if (!lastBlock) return message as Anthropic.MessageParam;
    return {
      role: message.role,
      content: [...content.slice(0, -1), { ...lastBlock, cache_control: EPHEMERAL }],
    } as Anthropic.MessageParam;
  });
}

/**
 * The reply as it may be kept and acted on. Under a stop reason that cuts, the last block may be
 * unfinished: a tool_use whose input JSON did not close (a MultiEdit cut after its first edit, a
 * Bash call without its timeout), or a thinking block with no signature yet; both go. A tool_use
 * whose input streamed whole before the limit struck is kept and runs, as Claude Code runs it. A
 * refused reply keeps no tool call at all: nothing the model asked for before the refusal may run.
 */
export function keptReply(
  final: Anthropic.Message,
  toolInputJson: ReadonlyMap<number, string> = new Map(),
): {
  message: AssistantMessage;
  truncatedToolUse?: { id: string; name: string };
} {
  let blocks = final.content;
  let truncatedToolUse: { id: string; name: string } | undefined;
  const last = blocks.at(-1);
  if (final.stop_reason !== null && CUTTING_STOP_REASONS.has(final.stop_reason) && last) {
    if (
      last.type === 'tool_use' &&
      !(final.stop_reason === 'max_tokens' && wholeInput(toolInputJson.get(blocks.length - 1)))
    ) {
      truncatedToolUse = { id: last.id, name: last.name };
      blocks = blocks.slice(0, -1);
    } else if (last.type === 'thinking' && !last.signature) {
      blocks = blocks.slice(0, -1);
    }
  }
  if (final.stop_reason === 'refusal') blocks = blocks.filter((block) => block.type !== 'tool_use');
  const message: AssistantMessage = { role: 'assistant', content: blocks.flatMap(toAssistantBlock) };
  return truncatedToolUse ? { message, truncatedToolUse } : { message };
}

function withoutThinking(message: AssistantMessage): AssistantMessage {
  const content = message.content.filter((block) => block.type !== 'thinking' && block.type !== 'redacted_thinking');
  return content.length === message.content.length ? message : { ...message, content };
}

/** Input JSON that streamed to its end: an object that parses. */
function wholeInput(json: string | undefined): boolean {
  if (!json) return false;
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

function toAssistantBlock(block: Anthropic.ContentBlock): AssistantContentBlock[] {
  switch (block.type) {
    case 'text':
      // The API refuses empty and whitespace-only text blocks when they are sent back.
      return block.text.trim() === '' ? [] : [{ type: 'text', text: block.text }];
    case 'tool_use':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input }];
    case 'thinking':
      return [{ type: 'thinking', thinking: block.thinking, signature: block.signature }];
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: block.data }];
    default:
      return [];
  }
}
