/**
 * A schema (or any object) built the first time it is used, not when its module loads.
 *
 * Temporal's reusable V8 context runs the workflow bundle's modules again for every workflow it
 * creates (each workflow gets its own module state). Building every zod schema those modules
 * declare took about two thirds of creating a workflow (some 24 of 35 ms in the saturation
 * bench, bench/README.md), although a job uses a few of them. Behind this proxy a schema costs
 * nothing until a job parses with it.
 *
 * The proxy forwards reads, calls, `in`, `instanceof` and key listing to the built object; it does
 * not support freezing or defining and deleting properties. It is not the built object itself:
 * zod keys descriptions on a schema's identity, and a zod method called on the proxy wraps the
 * proxy, so a schema nested in another, or given to `z.toJSONSchema`, must be {@link builtSchema}
 * of it.
 */
export function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const target = (): T => (built ??= build());
  return new Proxy({} as T, {
    get: (_, key) => (key === BUILT ? target() : Reflect.get(target(), key)),
    has: (_, key) => Reflect.has(target(), key),
    set: (_, key, value) => Reflect.set(target(), key, value),
    getPrototypeOf: () => Reflect.getPrototypeOf(target()),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target(), key);
      // A proxy may not report a non-configurable property its own (empty) target lacks.
      return descriptor ? { ...descriptor, configurable: true } : undefined;
    },
  });
}

const BUILT = Symbol('lazySchema.built');

/** The object behind a {@link lazySchema} (built now if it was not), or the value itself. */
export function builtSchema<T extends object>(schema: T): T {
  return ((schema as Record<symbol, unknown>)[BUILT] as T | undefined) ?? schema;
}
