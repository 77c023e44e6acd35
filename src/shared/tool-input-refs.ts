/**
 * Large tool inputs by reference. A Write of a 300 KB file would otherwise travel through
 * workflow history twice (in the model call's result and in the tool call's input) and could pass
 * Temporal's 2 MB payload limit. The model call stores such fields and hands the workflow a
 * placeholder; the tool activity puts the content back before the tool sees its input.
 */

/** A string field longer than this travels by reference. */
export const LARGE_INPUT_FIELD_CHARS = 16_384;

/** Fields the workflow itself reads (permission rules parse a Bash command) stay inline. */
const INLINE_FIELDS: ReadonlySet<string> = new Set(['command', 'file_path', 'path', 'pattern']);

/** What stands in for a large string field of a tool input. */
export interface InputFieldRef {
  $contentRef: string;
  chars: number;
  /** The field's first characters, for the approval prompt and the progress log. */
  preview: string;
}

/** How much of a field by reference the workflow still shows. */
export const INPUT_FIELD_PREVIEW_CHARS = 400;

/** The store references among a tool input's fields. */
export function inputRefsOf(input: unknown): string[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return [];
  return Object.values(input).flatMap((value) => (isInputFieldRef(value) ? [value.$contentRef] : []));
}

export function isInputFieldRef(value: unknown): value is InputFieldRef {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { $contentRef?: unknown }).$contentRef === 'string' &&
    typeof (value as { chars?: unknown }).chars === 'number'
  );
}

/** The top-level fields of `input` that should travel by reference. */
export function largeInputFields(input: unknown): string[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return [];
  return Object.entries(input)
    .filter(
      ([key, value]) => typeof value === 'string' && value.length > LARGE_INPUT_FIELD_CHARS && !INLINE_FIELDS.has(key),
    )
    .map(([key]) => key);
}

/** What the store holds for a field by reference: the value, and which call and field it belongs to. */
export interface StoredInputField {
  kind: 'tool-input-field';
  toolUseId: string;
  field: string;
  value: string;
}

export function isStoredInputField(value: unknown): value is StoredInputField {
  const v = value as Partial<StoredInputField> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.kind === 'tool-input-field' &&
    typeof v.toolUseId === 'string' &&
    typeof v.field === 'string' &&
    typeof v.value === 'string'
  );
}

/**
 * The tool input as the model wrote it: fields the model call stored by reference put back. Only
 * what the model call stored for this very call and field is taken: an object the model itself
 * wrote in that shape (naming some other content in the shared store) stays as it is, and the
 * tool's own input check refuses it.
 */
export async function withInputRefsResolved(
  store: { get<T>(ref: string): Promise<T> },
  toolInput: unknown,
  toolUseId: string,
): Promise<unknown> {
  if (typeof toolInput !== 'object' || toolInput === null || Array.isArray(toolInput)) return toolInput;
  const entries = Object.entries(toolInput);
  if (!entries.some(([, value]) => isInputFieldRef(value))) return toolInput;
  const resolved: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    resolved[key] = value;
    if (!isInputFieldRef(value)) continue;
    const stored = await store.get<unknown>(value.$contentRef).catch(() => undefined);
    if (isStoredInputField(stored) && stored.toolUseId === toolUseId && stored.field === key)
      resolved[key] = stored.value;
  }
  return resolved;
}
