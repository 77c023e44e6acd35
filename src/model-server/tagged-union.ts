type Json = Record<string, unknown>;

/**
 * The API's checks of a request field that is a union tagged by `type` (`tool_choice`,
 * `thinking`): an object, with a `type`, one of `variants`, and no field that type does not take.
 * `variants` maps each type to its fields besides `type`. The first problem in the API's wording,
 * else the variant's type.
 */
export function checkTaggedUnion(
  name: string,
  value: unknown,
  variants: Readonly<Record<string, readonly string[]>>,
): { problem: string } | { type: string; value: Json } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { problem: `${name}: Input should be a valid dictionary or object to extract fields from` };
  }
  const union = value as Json;
  if (union.type === undefined) return { problem: `${name}: Unable to extract tag using discriminator 'type'` };
  const fields = typeof union.type === 'string' ? variants[union.type] : undefined;
  if (!fields) {
    const tags = Object.keys(variants)
      .map((tag) => `'${tag}'`)
      .join(', ');
    return {
      problem: `${name}: Input tag '${String(union.type)}' found using 'type' does not match any of the expected tags: ${tags}`,
    };
  }
  const type = String(union.type);
  const extra = Object.keys(union).find((key) => key !== 'type' && !fields.includes(key));
  if (extra) return { problem: `${name}.${type}.${extra}: Extra inputs are not permitted` };
  return { type, value: union };
}
