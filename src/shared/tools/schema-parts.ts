import { z } from 'zod';

/**
 * Building blocks shared by the tool input schemas. Every limit here exists because the input
 * comes from a model and is untrusted: a NUL byte cannot be passed to the operating system, and a
 * multi-megabyte path or pattern is a bug, not a request.
 */

/** Longest accepted file path (Linux PATH_MAX). */
export const MAX_PATH_CHARS = 4096;
/** Longest accepted search pattern or glob. */
export const MAX_PATTERN_CHARS = 10_000;
/** Longest accepted file content or edit string; far beyond what a model emits in one turn. */
export const MAX_TEXT_CHARS = 10_000_000;

const noNul = (value: string): boolean => !value.includes('\0');
const NUL_MESSAGE = 'must not contain NUL bytes';

/** A workspace path: absolute, or relative to the workspace. */
export function pathField(description: string) {
  return z.string().min(1, 'must not be empty').max(MAX_PATH_CHARS).refine(noNul, NUL_MESSAGE).describe(description);
}

/** A regex, glob or shell word handed to a child process, so it must be NUL-free. */
export function patternField(description: string, maxChars = MAX_PATTERN_CHARS) {
  return z.string().min(1, 'must not be empty').max(maxChars).refine(noNul, NUL_MESSAGE).describe(description);
}

/** A non-negative integer with an explicit ceiling, so the JSON schema shows a sensible bound. */
export function countField(description: string, max = 1_000_000_000) {
  return z.number().int().min(0).max(max).describe(description);
}
