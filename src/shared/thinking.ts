/**
 * Extended thinking and effort: what a job asks for (`--thinking`, `--max-thinking-tokens`,
 * `--effort`), and what each model call sends for it, per model family. Pure data and functions,
 * safe in workflow code.
 */

export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type Effort = (typeof EFFORTS)[number];

export const THINKING_MODES = ['adaptive', 'enabled', 'disabled'] as const;
export type ThinkingMode = (typeof THINKING_MODES)[number];

export const THINKING_DISPLAYS = ['summarized', 'omitted'] as const;
export type ThinkingDisplay = (typeof THINKING_DISPLAYS)[number];

/**
 * A job's thinking, as given when it starts. Jobs started before thinking existed have none in
 * their input, and their calls send none.
 */
export interface ThinkingSetting {
  mode: ThinkingMode;
  /** `--max-thinking-tokens`: the budget of manual thinking, on models that take one. */
  budgetTokens?: number;
  /** `--thinking-display`; the API's default for the model when absent. */
  display?: ThinkingDisplay;
}

/** How a model family thinks and what a call asks of it when the job does not say. */
export interface ModelFeatures {
  /**
   * `adaptive-only`: the model always decides for itself (manual and disabled thinking are refused
   * by the API); `adaptive`: adaptive, manual or disabled; `budget`: manual thinking with a token
   * budget, or disabled.
   */
  thinking: 'adaptive-only' | 'adaptive' | 'budget';
  /** The effort sent when the job names none; undefined for a model that takes no effort. */
  defaultEffort?: Effort;
  /** The `max_tokens` a call asks for when the job does not set `--max-tokens`. */
  defaultMaxTokens: number;
  /** What the model knows up to, told to it in the system prompt, where known. */
  knowledgeCutoff?: string;
}

interface ModelFeaturesEntry extends ModelFeatures {
  prefix: string;
}

/**
 * The requests Claude Code 2.1.332 sends per family (checked side by side, 2026-12-06): the 5.x
 * family 128,000 tokens with adaptive thinking at medium effort, Fable 5 64,000 at high, the 4.6
 * and 4.7 models 32,000 adaptive at high, the 4.5 and older models 32,000 with a manual budget of
 * 31,999 and no effort. Knowledge cut-offs are those Claude Code tells each model. Names are prefixes; the longest match wins.
 */
const BUILT_IN_MODEL_FEATURES: readonly ModelFeaturesEntry[] = [
  {
    prefix: 'claude-opus-5',
    thinking: 'adaptive-only',
    defaultEffort: 'medium',
    defaultMaxTokens: 128_000,
    knowledgeCutoff: 'June 2026',
  },
  {
    prefix: 'claude-sonnet-5',
    thinking: 'adaptive-only',
    defaultEffort: 'medium',
    defaultMaxTokens: 128_000,
    knowledgeCutoff: 'June 2026',
  },
  { prefix: 'claude-haiku-5', thinking: 'adaptive-only', defaultEffort: 'medium', defaultMaxTokens: 128_000 },
  {
    prefix: 'claude-fable-5',
    thinking: 'adaptive-only',
    defaultEffort: 'high',
    defaultMaxTokens: 64_000,
    knowledgeCutoff: 'January 2026',
  },
  { prefix: 'claude-mythos', thinking: 'adaptive-only', defaultEffort: 'high', defaultMaxTokens: 64_000 },
  { prefix: 'claude-opus-4-7', thinking: 'adaptive-only', defaultEffort: 'high', defaultMaxTokens: 32_000 },
  { prefix: 'claude-opus-4-6', thinking: 'adaptive', defaultEffort: 'high', defaultMaxTokens: 32_000 },
  {
    prefix: 'claude-sonnet-4-6',
    thinking: 'adaptive',
    defaultEffort: 'high',
    defaultMaxTokens: 32_000,
    knowledgeCutoff: 'August 2025',
  },
  { prefix: 'claude-opus-4-5', thinking: 'budget', defaultMaxTokens: 32_000 },
  { prefix: 'claude-sonnet-4-5', thinking: 'budget', defaultMaxTokens: 32_000, knowledgeCutoff: 'January 2025' },
  { prefix: 'claude-haiku-4-5', thinking: 'budget', defaultMaxTokens: 32_000, knowledgeCutoff: 'February 2025' },
  { prefix: 'claude-opus-4', thinking: 'budget', defaultMaxTokens: 32_000 },
  { prefix: 'claude-sonnet-4', thinking: 'budget', defaultMaxTokens: 32_000 },
];

/**
 * A model the table does not know (a gateway's name, a newer model) is asked as Claude Code asks
 * it: adaptive thinking at high effort, 32,000 tokens. One that refuses thinking answers 400 on
 * the first call, and the job ends saying so: `--thinking disabled` then runs it without.
 */
const UNKNOWN_MODEL_FEATURES: ModelFeatures = { thinking: 'adaptive', defaultEffort: 'high', defaultMaxTokens: 32_000 };

export function modelFeaturesFor(model: string): ModelFeatures & { known: boolean } {
  const match = BUILT_IN_MODEL_FEATURES.filter((entry) => model.startsWith(entry.prefix)).sort(
    (a, b) => b.prefix.length - a.prefix.length,
  )[0];
  if (!match) return { ...UNKNOWN_MODEL_FEATURES, known: false };
  const { prefix: _prefix, ...features } = match;
  return { ...features, known: true };
}

/** The smallest manual thinking budget the API takes. */
export const MIN_THINKING_BUDGET_TOKENS = 1024;

/** The request fields of a model call for thinking and effort, in the API's shapes. */
export interface ThinkingRequest {
  thinking?:
    | { type: 'adaptive'; display?: ThinkingDisplay }
    | { type: 'enabled'; budget_tokens: number; display?: ThinkingDisplay }
    | { type: 'disabled' };
  output_config?: { effort: Effort };
}

/**
 * What a call to `model` with output limit `maxTokens` sends for the job's thinking and effort.
 * Nothing for a job without a thinking setting (started before thinking existed). A model that
 * always thinks adaptively gets adaptive whatever was asked (the API refuses the rest); on a model
 * with adaptive thinking a budget only turns thinking on, as Claude Code treats it; a model that
 * thinks on a budget gets the one asked for, else all but one token of the reply's limit.
 */
export function thinkingRequest(
  model: string,
  setting: ThinkingSetting | undefined,
  effort: Effort | undefined,
  maxTokens: number,
): ThinkingRequest {
  if (!setting) return {};
  const features = modelFeaturesFor(model);
  const display = setting.display ? { display: setting.display } : {};
  const chosenEffort = effort ?? features.defaultEffort;
  const effortField: ThinkingRequest =
    chosenEffort && features.thinking !== 'budget' ? { output_config: { effort: chosenEffort } } : {};
  if (features.thinking === 'adaptive-only') return { thinking: { type: 'adaptive', ...display }, ...effortField };
  if (setting.mode === 'disabled') return { thinking: { type: 'disabled' }, ...effortField };
  if (features.thinking === 'adaptive') return { thinking: { type: 'adaptive', ...display }, ...effortField };
  // A manual budget must be at least 1,024 and below max_tokens; a reply limit too small for
  // that leaves thinking off rather than sending a request the API refuses.
  if (maxTokens <= MIN_THINKING_BUDGET_TOKENS) return { thinking: { type: 'disabled' } };
  const budget = Math.max(MIN_THINKING_BUDGET_TOKENS, Math.min(setting.budgetTokens ?? maxTokens - 1, maxTokens - 1));
  return { thinking: { type: 'enabled', budget_tokens: budget, ...display } };
}

/**
 * What a job's flags mean for its model, said once when it starts, or undefined when they mean
 * what they say: `--thinking disabled` on a model that always thinks, a budget on a model that
 * decides for itself, `--effort` on a model that takes none.
 */
export function thinkingNotice(
  model: string,
  setting: ThinkingSetting,
  effort: Effort | undefined,
): string | undefined {
  const features = modelFeaturesFor(model);
  if (setting.mode === 'disabled' && features.thinking === 'adaptive-only') {
    return `${model} always decides for itself how much to think: --thinking disabled cannot turn it off (use --effort low to think less)`;
  }
  if (setting.budgetTokens !== undefined && features.thinking !== 'budget') {
    return `${model} thinks adaptively: --max-thinking-tokens only turns thinking on, its budget is not sent (use --effort to steer it)`;
  }
  if (effort !== undefined && features.thinking === 'budget') {
    return `${model} takes no effort level: --effort ${effort} is not sent`;
  }
  return undefined;
}
