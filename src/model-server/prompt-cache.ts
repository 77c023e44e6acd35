/**
 * The API's prompt cache, simulated per server so that `usage` reports what a real run would pay
 * for. The rules, as Anthropic documents them (platform.claude.com/docs/en/build-with-claude/
 * prompt-caching):
 *
 * - The prompt is one prefix in the order tools → system → messages; `cache_control` on a block
 *   (at most 4, checked in validate.ts) marks a breakpoint, and only breakpoints are written.
 * - A breakpoint reads the cache when the prefix up to it, or up to one of the 19 blocks before
 *   it (a 20-block lookback), is byte-identical to a prefix cached earlier and not expired.
 * - An entry lives 5 minutes (`ttl: '1h'`: one hour); every read refreshes it at no cost.
 * - A prefix shorter than the model's minimum cacheable length is never cached, silently.
 * - The cache is per model: another model reads nothing a first one wrote.
 *
 * `usage` then splits the estimated input: `cache_read_input_tokens` is the longest prefix read,
 * `cache_creation_input_tokens` what the breakpoints after it wrote, `input_tokens` the rest after
 * the last breakpoint. The three always add up to `estimateInputTokens` of the request.
 */
import { createHash } from 'node:crypto';
import { approxTokens, prefixTokens, promptChars, promptSegments, type CacheTtl } from './prompt-tokens';

/** The `usage` counters a request's input is split into. */
export interface InputUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** Default lifetime of a `5m` entry. */
export const DEFAULT_CACHE_TTL_MS = 5 * 60_000;
const ONE_HOUR_MS = 60 * 60_000;
/** Positions a breakpoint looks back over for an earlier cache entry, itself included. */
const LOOKBACK_BLOCKS = 20;

/**
 * Minimum cacheable prompt length of a model, in tokens. From the prompt-caching docs' table as
 * of 2026 (Opus 5 / Fable 5 / Mythos 5: 512; Opus 4.5, 4.6 and Haiku 4.5: 4096; Opus 4.7: 2048;
 * Haiku 3 and 3.5: 2048; Sonnet 3.7 to 5.x, Opus 4 to 4.1 and 4.8: 1024). Unknown models,
 * including test model names, get 1024.
 */
export function minCacheableTokens(model: string): number {
  if (/claude-(opus-5|fable|mythos)/.test(model)) return 512;
  if (/claude-(opus-4-[56]|haiku-4-5)/.test(model)) return 4096;
  if (/claude-opus-4-7|claude-(3-5-)?haiku|claude-3-haiku/.test(model)) return 2048;
  return 1024;
}

interface Entry {
  expiresAt: number;
  ttlMs: number;
}

/** A server's prompt cache: prefix hashes with their expiry times. */
export class PromptCache {
  private readonly entries = new Map<string, Entry>();

  /** `shortTtlMs` is the lifetime of a `5m` entry (a session's `cacheTtlMs`). */
  constructor(
    private readonly now: () => number,
    private readonly shortTtlMs = DEFAULT_CACHE_TTL_MS,
  ) {}

  /** Account one request the model processes: read and write the cache, return the input split. */
  use(body: unknown): InputUsage {
    const model = String((body as { model?: unknown } | null)?.model ?? '');
    const segments = promptSegments(body);
    const total = approxTokens(promptChars(segments));
    const breakpoints = segments.flatMap((s, i) => (s.breakpoint ? [i] : []));
    if (breakpoints.length === 0)
      return { input_tokens: total, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

    // Hash chain: prefixHash[i] names the prompt up to and including block i, for this model.
    const prefixHash: string[] = [];
    const prefixTokensAt: number[] = [];
    let hash = createHash('sha256').update(`model:${model}`).digest('hex');
    let chars = 0;
    for (const s of segments) {
      hash = createHash('sha256').update(hash).update('\0').update(s.text).digest('hex');
      chars += s.text.length;
      prefixHash.push(hash);
      prefixTokensAt.push(prefixTokens(chars));
    }

    const now = this.now();
    const hit = this.longestHit(breakpoints, prefixHash, now);
    const read = hit >= 0 ? (prefixTokensAt[hit] ?? 0) : 0;
    for (let i = 0; i <= hit; i++) this.refresh(prefixHash[i] ?? '', now);

    let written = read;
    const minimum = minCacheableTokens(model);
    for (const b of breakpoints) {
      const tokens = prefixTokensAt[b] ?? 0;
      if (tokens < minimum) continue;
      this.write(prefixHash[b] ?? '', this.ttlMs(segments[b]?.breakpoint), now);
      // A breakpoint inside the prefix just read is kept warm, not paid for again.
      if (b > hit) written = Math.max(written, tokens);
    }
    return {
      input_tokens: total - written,
      cache_creation_input_tokens: written - read,
      cache_read_input_tokens: read,
    };
  }

  /** The last block of the longest cached prefix any breakpoint reaches, or -1. */
  private longestHit(breakpoints: number[], prefixHash: string[], now: number): number {
    let hit = -1;
    for (const b of breakpoints) {
      for (let p = b; p > b - LOOKBACK_BLOCKS && p > hit; p--) {
        if (this.live(prefixHash[p] ?? '', now)) {
          hit = p;
          break;
        }
      }
    }
    return hit;
  }

  private ttlMs(ttl: CacheTtl | undefined): number {
    return ttl === '1h' ? ONE_HOUR_MS : this.shortTtlMs;
  }

  private live(key: string, now: number): boolean {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) return true;
    if (entry) this.entries.delete(key);
    return false;
  }

  private refresh(key: string, now: number): void {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) entry.expiresAt = now + entry.ttlMs;
  }

  private write(key: string, ttlMs: number, now: number): void {
    const entry = this.entries.get(key);
    const keep = entry && entry.expiresAt > now ? entry : undefined;
    const lifetime = Math.max(ttlMs, keep?.ttlMs ?? 0);
    this.entries.set(key, { ttlMs: lifetime, expiresAt: Math.max(now + lifetime, keep?.expiresAt ?? 0) });
  }
}
