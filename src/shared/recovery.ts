/**
 * Pure end-of-turn decisions (the seed's Phase 3), kept free of Temporal so they are easy to test
 * and safe to call from workflow code.
 */

/** The output limit a truncated reply is retried with once (the seed's ESCALATED_MAX_TOKENS). */
export const ESCALATED_MAX_TOKENS = 64_000;
/** How many "carry on" prompts follow a truncated reply before the loop gives up on it. */
export const MAX_OUTPUT_TOKENS_RECOVERY_LIMIT = 3;
export const DEFAULT_MAX_TOKENS = 16_384;

export const MAX_OUTPUT_RECOVERY_PROMPT =
  'Your previous reply stopped at the output token limit. Continue from the exact point where it was cut, ' +
  'without apologising and without repeating what you already wrote. Split the remaining work into smaller steps.';

export type MaxOutputDecision =
  { kind: 'escalate'; maxTokens: number } | { kind: 'recover'; prompt: string } | { kind: 'exhausted' };

/**
 * A reply cut at the output limit with no tool_use: first retry the same request with a larger
 * limit, then ask the model to continue, at most `MAX_OUTPUT_TOKENS_RECOVERY_LIMIT` times.
 */
export function decideMaxOutputRecovery(args: {
  maxTokens: number;
  maxOutputTokensOverride: number | undefined;
  maxOutputTokensRecoveryCount: number;
  /** The model's own output limit, when known: escalation never asks for more. */
  modelMaxOutputTokens?: number;
}): MaxOutputDecision {
  const escalated = Math.min(ESCALATED_MAX_TOKENS, args.modelMaxOutputTokens ?? ESCALATED_MAX_TOKENS);
  if (args.maxOutputTokensOverride === undefined && args.maxTokens < escalated) {
    return { kind: 'escalate', maxTokens: escalated };
  }
  if (args.maxOutputTokensRecoveryCount < MAX_OUTPUT_TOKENS_RECOVERY_LIMIT) {
    return { kind: 'recover', prompt: MAX_OUTPUT_RECOVERY_PROMPT };
  }
  return { kind: 'exhausted' };
}

/** The seed's check before the next turn: is another turn allowed? */
export function exceedsMaxTurns(nextTurnCount: number, maxTurns: number | undefined): boolean {
  return maxTurns !== undefined && nextTurnCount > maxTurns;
}
