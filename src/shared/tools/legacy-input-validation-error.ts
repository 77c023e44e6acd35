import type { z } from 'zod';

/**
 * How durable-agent worded a bad tool input before it took Claude Code's wording
 * (`input-validation-error.ts`). Kept only for TodoWrite, which the workflow answers itself: a job
 * recorded before `TOOL_USE_ERROR_PATCH` replays with the answers it gave then.
 */

/**
 * Parse-time error customisation: zod's default message for a missing field ("expected string,
 * received undefined") is accurate but does not tell the model what to do.
 */
export const legacyParseErrorOptions = {
  error: (issue: { code?: string; input?: unknown; expected?: unknown }): string | undefined =>
    issue.code === 'invalid_type' && issue.input === undefined
      ? `required field is missing (expected ${String(issue.expected)})`
      : undefined,
};

/** Top-level keys a tool accepts, read from its object schema; empty when the schema is not an object. */
function acceptedKeys(schema: z.ZodType | undefined): string[] {
  const shape = (schema as { shape?: unknown } | undefined)?.shape;
  return shape && typeof shape === 'object' ? Object.keys(shape) : [];
}

interface SchemaInternals {
  shape?: Record<string, unknown>;
  element?: unknown;
  def?: { type?: string; innerType?: unknown };
}

/** The sub-schema at an issue path (object keys and array indexes), through optional wrappers. */
function schemaAt(schema: z.ZodType, issuePath: readonly PropertyKey[]): z.ZodType | undefined {
  const unwrap = (node: unknown): SchemaInternals | undefined => {
    let current = node as SchemaInternals | undefined;
    while (current?.def && ['optional', 'nullable', 'default'].includes(current.def.type ?? '')) {
      current = current.def.innerType as SchemaInternals | undefined;
    }
    return current;
  };
  let current = unwrap(schema);
  for (const segment of issuePath) {
    current = unwrap(typeof segment === 'number' ? current?.element : current?.shape?.[String(segment)]);
  }
  return current as z.ZodType | undefined;
}

/**
 * Render zod issues the way Claude Code reports a bad tool input: one `InputValidationError:
 * field: problem` line per issue, then a hint, so the model can correct the call.
 */
export function legacyInputValidationError(toolName: string, schema: z.ZodType, issues: readonly z.core.$ZodIssue[]) {
  const accepted = acceptedKeys(schema);
  const lines = issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((key) => JSON.stringify(key)).join(', ');
      const plural = issue.keys.length > 1 ? 's' : '';
      if (issue.path.length === 0) {
        return `InputValidationError: ${keys}: unknown parameter${plural}; ${toolName} accepts only ${accepted.join(', ')}`;
      }
      // A nested object (one of MultiEdit's edits): name where it is and what it accepts.
      const where = issue.path.map(String).join('.');
      const allowed = acceptedKeys(schemaAt(schema, issue.path)).join(', ');
      return `InputValidationError: ${where}: ${keys}: unknown parameter${plural}; accepted here: ${allowed}`;
    }
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
    return `InputValidationError: ${field}: ${issue.message}`;
  });
  return `${lines.join('\n')}\nFix the input and call ${toolName} again.`;
}
