import { z } from 'zod';

/**
 * Building blocks shared by the tool input schemas. Every limit here exists because the input
 * comes from a model and is untrusted: a NUL byte cannot be passed to the operating system, a lone
 * UTF-16 surrogate cannot be encoded as UTF-8 (Node would silently turn it into U+FFFD, so the
 * file named or written would not be the one asked for), and a multi-megabyte path or pattern is a
 * bug, not a request.
 */

/** Longest accepted file path (Linux PATH_MAX). */
export const MAX_PATH_CHARS = 4096;
/** Longest accepted search pattern or glob. */
export const MAX_PATTERN_CHARS = 10_000;
/** Longest accepted file content or edit string; far beyond what a model emits in one turn. */
export const MAX_TEXT_CHARS = 10_000_000;

const noNul = (value: string): boolean => !value.includes('\0');
const NUL_MESSAGE = 'must not contain NUL bytes';
/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (value: string): boolean => !LONE_SURROGATE.test(value);
const SURROGATE_MESSAGE = 'must be valid Unicode text (it contains a lone UTF-16 surrogate)';

/** Any string the tools accept: bounded, NUL-free and well-formed Unicode. */
function safeString(maxChars: number) {
  return z.string().max(maxChars).refine(noNul, NUL_MESSAGE).refine(wellFormed, SURROGATE_MESSAGE);
}

/** A workspace path: absolute, or relative to the workspace. */
export function pathField(description: string) {
  return safeString(MAX_PATH_CHARS).min(1, 'must not be empty').describe(description);
}

/** A regex, glob or shell word handed to a child process, so it must be NUL-free. */
export function patternField(description: string, maxChars = MAX_PATTERN_CHARS) {
  return safeString(maxChars).min(1, 'must not be empty').describe(description);
}

/**
 * File text: Write's content, Edit's strings. NUL is refused too: Read and Edit treat a file with
 * a NUL byte as binary, so a file written with one could never be read or edited again.
 */
export function textField(description: string, maxChars = MAX_TEXT_CHARS) {
  return safeString(maxChars).describe(description);
}

/**
 * A whole number written as a string ("3", " 2 ", "2.0"): models sometimes quote numbers, and
 * Claude Code takes these. Anything else ("abc", "1.5", "") is left as it is, so the number
 * schema refuses it with its usual message.
 */
const INTEGER_TEXT = /^\s*[+-]?\d+(?:\.0*)?\s*$/;

/** `value` as a number when it is an integer written as a string, else unchanged. */
export function integerFromText(value: unknown): unknown {
  return typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value;
}

/** `value` as a boolean when it is the string "true" or "false", else unchanged. */
export function booleanFromText(value: unknown): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

/** An integer in [min, max]; an integer written as a string is taken too (see integerFromText). */
export function integerField(description: string, min: number, max: number) {
  return z.preprocess(integerFromText, z.number().int().min(min).max(max).describe(description));
}

/** A non-negative integer with an explicit ceiling, so the JSON schema shows a sensible bound. */
export function countField(description: string, max = 1_000_000_000) {
  return integerField(description, 0, max);
}

/** A boolean; the strings "true" and "false" are taken too, as Claude Code does. */
export function flagField(description: string) {
  return z.preprocess(booleanFromText, z.boolean().describe(description));
}
