/**
 * A request's prompt as the API renders it for the model and its prompt cache: one segment per
 * block, tools first, then system, then messages. Token counts are estimated at four characters
 * per token from these segments only, so `count_tokens`, `usage` and the context-window check
 * always agree, and the three input counters of `usage` add up to the whole estimate.
 */

type Json = Record<string, unknown>;

/** A cache breakpoint's lifetime, as `cache_control.ttl` spells it. */
export type CacheTtl = '5m' | '1h';

/** One block of the prompt, in render order. */
export interface PromptSegment {
  /** The block without its `cache_control`: moving a breakpoint changes no prefix. */
  text: string;
  /** Set when the block carries `cache_control` (or is the target of the top-level one). */
  breakpoint?: CacheTtl;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `cache_control` of a block, as a TTL, when it has one. */
function breakpointOf(block: unknown): CacheTtl | undefined {
  if (!isObject(block) || block.cache_control === undefined || block.cache_control === null) return undefined;
  return isObject(block.cache_control) && block.cache_control.ttl === '1h' ? '1h' : '5m';
}

function withoutCacheControl(block: unknown): unknown {
  if (!isObject(block)) return block;
  const { cache_control: _dropped, ...rest } = block;
  if (rest.type === 'tool_result' && Array.isArray(rest.content)) rest.content = rest.content.map(withoutCacheControl);
  return rest;
}

/** A tool_result is one segment; a breakpoint on a block nested in it marks the tool_result. */
function nestedBreakpoint(block: unknown): CacheTtl | undefined {
  if (!isObject(block) || block.type !== 'tool_result' || !Array.isArray(block.content)) return undefined;
  return block.content
    .map(breakpointOf)
    .filter((ttl) => ttl !== undefined)
    .at(-1);
}

function segment(prefix: string, block: unknown): PromptSegment {
  const text = prefix + JSON.stringify(withoutCacheControl(block) ?? null);
  const breakpoint = breakpointOf(block) ?? nestedBreakpoint(block);
  return breakpoint ? { text, breakpoint } : { text };
}

/** String content is one text block to the API. */
function blocksOf(content: unknown): unknown[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}

/**
 * The prompt of a request body, tolerant of any JSON (count_tokens bodies are not validated).
 * A top-level `cache_control` puts a breakpoint on the last block, as the API's automatic caching does.
 */
export function promptSegments(body: unknown): PromptSegment[] {
  const b = isObject(body) ? body : {};
  const segments: PromptSegment[] = [];
  for (const tool of Array.isArray(b.tools) ? b.tools : []) segments.push(segment('tool:', tool));
  for (const block of blocksOf(b.system)) segments.push(segment('system:', block));
  for (const message of Array.isArray(b.messages) ? b.messages : []) {
    const role = isObject(message) && typeof message.role === 'string' ? message.role : '?';
    for (const block of blocksOf(isObject(message) ? message.content : undefined)) {
      segments.push(segment(`${role}:`, block));
    }
  }
  const last = segments.at(-1);
  const automatic = breakpointOf({ cache_control: b.cache_control });
  if (last && automatic && !last.breakpoint) last.breakpoint = automatic;
  return segments;
}

/** Tokens of a whole prompt of `chars` characters: about four characters each, at least one. */
export function approxTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/**
 * Tokens of a prompt prefix of `chars` characters. Rounded down, so that a prefix never counts
 * more than the whole prompt ({@link approxTokens} rounds up).
 */
export function prefixTokens(chars: number): number {
  return Math.floor(chars / 4);
}

/** Characters of a whole prompt. */
export function promptChars(segments: readonly PromptSegment[]): number {
  return segments.reduce((sum, s) => sum + s.text.length, 0);
}

/** Estimate `input_tokens` of a request: the parts the model reads (tools, system, messages). */
export function estimateInputTokens(body: unknown): number {
  return approxTokens(promptChars(promptSegments(body)));
}
