import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import type { CompactInput, CompactResult } from '../shared/activity-types';
import { MODEL_FAILURE_TYPES } from '../shared/activity-types';
import { COMPACTION_PROMPT, summaryMessageText } from '../shared/compact-prompt';
import type { Message, ToolResultBlock } from '../shared/messages';
import type { CallModelDeps } from './call-model';
import { callAccounting, pricesForCall, systemPrompt, toolSchemas, withCacheBreakpoint } from './call-model';
import { clearOldToolResults, fitForSummary, keptTailStart, requestChars } from './context-window';
import type { ModelFailureDetails } from './model-errors';
import { streamModelReply, toUsage } from './model-stream';
import { setAsideForTurnBudget } from './tools/large-result';

/** Attempts at a summary request that the API found too long, each cut further. */
const FIT_ATTEMPTS = 3;

/**
 * Autocompact and reactive compact: ask the model for a structured summary of the conversation,
 * then start a new transcript chain with the summary and the most recent messages. Later loads
 * read only the new chain, so they are bounded by the context, not by the job's age; the new
 * chain links back to the old one for export.
 *
 * The summary request sends the same system prompt and tools as the job's calls (so its prefix
 * comes from the prompt cache) with `tool_choice: none`. When the conversation itself is too long
 * for the window (the reactive case), its oldest messages are left out, and cut further if the API
 * still says the prompt is too long.
 */
export async function compactConversation(deps: CallModelDeps, input: CompactInput): Promise<CompactResult> {
  const prices = pricesForCall(input);
  const setAside = async (block: ToolResultBlock): Promise<ToolResultBlock> => ({
    ...block,
    content: await setAsideForTurnBudget(block.content, input.workspace, deps.dataDir),
  });
  const appended = await deps.transcripts.resolve(input.append, setAside);
  const full = await deps.transcripts.append(input.transcript, appended);
  const conversation = clearOldToolResults(await deps.transcripts.load(full), input.clearedBefore);
  const system = await systemPrompt(deps, input);
  const tools = toolSchemas(input.tools);
  const fixedChars = requestChars(system, [], tools) + COMPACTION_PROMPT.length;
  const charsPerToken = 1 / Math.max(input.tokensPerChar, 1e-6);

  // Room for the conversation: the window less the summary reply, the fixed parts and a margin.
  let roomTokens = input.contextWindow - input.maxSummaryTokens - Math.ceil(fixedChars / charsPerToken) - 2_000;
  let final: Anthropic.Message | undefined;
  let omitted: number | undefined;
  let apiMs = 0;
  for (let attempt = 1; ; attempt++) {
    const fitted = fitForSummary(conversation, Math.max(10_000, Math.floor(roomTokens * charsPerToken)));
    omitted = fitted.omitted;
    const messages: Message[] = [
      ...fitted.messages,
      { role: 'user', content: [{ type: 'text', text: COMPACTION_PROMPT }] },
    ];
    const startedAt = Date.now();
    try {
      final = await streamModelReply(
        deps.anthropic(),
        {
          model: input.model,
          max_tokens: input.maxSummaryTokens,
          system,
          tools,
          tool_choice: { type: 'none' },
          // A request cut to fit shares no prefix with anything: caching it would only cost.
          messages: fitted.omitted > 0 ? (messages as Anthropic.MessageParam[]) : withCacheBreakpoint(messages),
        },
        { streamIdleMs: deps.streamIdleMs, fallbackAvailable: input.fallbackAvailable },
      );
      apiMs += Date.now() - startedAt;
      break;
    } catch (error) {
      apiMs += Date.now() - startedAt;
      const tooLong = error instanceof ApplicationFailure && error.type === MODEL_FAILURE_TYPES.promptTooLong;
      if (!tooLong || attempt >= FIT_ATTEMPTS) throw error;
      const details = error.details?.[0] as ModelFailureDetails | undefined;
      // Cut by what the API says is too much, and a quarter more for the estimate's error.
      const over =
        details?.promptTokens && details.maxPromptTokens ? details.promptTokens - details.maxPromptTokens : 0;
      roomTokens = Math.floor((roomTokens - over) * 0.75);
    }
  }

  const summary = summaryOf(final);
  if (!summary) {
    throw ApplicationFailure.create({
      message: `The summary reply held no text (stop_reason ${final.stop_reason ?? 'none'})`,
      type: MODEL_FAILURE_TYPES.compactionFailed,
    });
  }

  const usage = toUsage(final.usage);
  const tailStart = keptTailStart(conversation, Math.floor(input.keepRecentTokens * charsPerToken));
  const kept = conversation.slice(tailStart);
  const summaryMessage: Message = {
    role: 'user',
    content: [{ type: 'text', text: summaryMessageText(summary, kept.length) }],
  };
  const restarted = [summaryMessage, ...kept];
  const transcript = await deps.transcripts.restartAfterCompaction(full, restarted);
  return {
    transcript,
    requestChars: requestChars(system, restarted, tools),
    summaryChars: summary.length,
    summarisedMessages: tailStart,
    keptMessages: kept.length,
    omittedMessages: omitted ?? 0,
    usage,
    ...callAccounting(prices, usage, apiMs),
  };
}

/** The text inside `<summary>` tags, or the whole reply's text when the model left them out. */
function summaryOf(message: Anthropic.Message): string {
  const text = message.content
    .filter((block): block is Anthropic.TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n')
    .trim();
  const tagged = /<summary>([\s\S]*?)<\/summary>/.exec(text)?.[1]?.trim();
  return tagged ? `<summary>\n${tagged}\n</summary>` : text;
}
