import type { z } from 'zod';

/**
 * Parse-time error customisation: zod's default message for a missing field ("expected string,
 * received undefined") is accurate but does not tell the model what to do.
 */
export const parseErrorOptions = {
  error: (issue: { code?: string; input?: unknown; expected?: unknown }): string | undefined =>
    issue.code === 'invalid_type' && issue.input === undefined
      ? `required field is missing (expected ${String(issue.expected)})`
      : undefined,
};

/** Top-level keys a tool accepts, read from its object schema; empty when the schema is not an object. */
export function acceptedKeys(schema: z.ZodType): string[] {
  const shape = (schema as { shape?: unknown }).shape;
  return shape && typeof shape === 'object' ? Object.keys(shape) : [];
}

/**
 * Render zod issues the way Claude Code reports a bad tool input: one `InputValidationError:
 * field: problem` line per issue, then a hint, so the model can correct the call.
 */
export function formatInputValidationError(toolName: string, schema: z.ZodType, issues: readonly z.core.$ZodIssue[]) {
  const accepted = acceptedKeys(schema);
  const lines = issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((key) => JSON.stringify(key)).join(', ');
      return `InputValidationError: ${keys}: unknown parameter${issue.keys.length > 1 ? 's' : ''}; ${toolName} accepts only ${accepted.join(', ')}`;
    }
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
    return `InputValidationError: ${field}: ${issue.message}`;
  });
  return `${lines.join('\n')}\nFix the input and call ${toolName} again.`;
}
