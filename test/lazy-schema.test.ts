import { z } from 'zod';
import { toolSchemas } from '../src/activities/call-model';
import { builtSchema, lazySchema } from '../src/shared/lazy-schema';
import { multiEditTool } from '../src/shared/tools';

describe('lazySchema', () => {
  test('builds the schema at its first use, once, and behaves as the schema itself', () => {
    let builds = 0;
    const eager = z.strictObject({ path: z.string().min(1).describe('where') });
    const lazy = lazySchema(() => {
      builds += 1;
      return z.strictObject({ path: z.string().min(1).describe('where') });
    });
    expect(builds).toBe(0);

    expect(lazy.safeParse({ path: 'a' })).toEqual(eager.safeParse({ path: 'a' }));
    expect(lazy.safeParse({ path: '', more: 1 }).error?.issues).toEqual(
      eager.safeParse({ path: '', more: 1 }).error?.issues,
    );
    expect(() => lazy.parse(3)).toThrow(z.ZodError);
    expect(lazy instanceof z.ZodObject).toBe(true);
    expect(lazy instanceof z.ZodString).toBe(false);
    expect(Object.keys(lazy.shape)).toEqual(['path']);
    expect(z.toJSONSchema(builtSchema(lazy))).toEqual(z.toJSONSchema(eager));
    expect(builds).toBe(1);
  });

  test('builtSchema of a schema that is not lazy is the schema', () => {
    const plain = z.string();
    expect(builtSchema(plain)).toBe(plain);
  });

  test('a lazy schema inside another one parses through it', () => {
    const item = lazySchema(() => z.strictObject({ n: z.number().int() }));
    const list = lazySchema(() => z.array(builtSchema(item)).max(2));
    expect(list.parse([{ n: 1 }])).toEqual([{ n: 1 }]);
    expect(list.safeParse([{ n: 1.5 }]).success).toBe(false);
    expect(list.safeParse([{ n: 1 }, { n: 2 }, { n: 3 }]).success).toBe(false);
  });

  test("the model still sees every description of a tool's input, nested ones included", () => {
    const [multiEdit] = toolSchemas([multiEditTool.name]);
    const schema = multiEdit?.input_schema as {
      properties: { edits: { description: string; items: { description: string } } };
    };
    expect(schema.properties.edits.description).toBe('Edits to apply in order, each to the result of the previous one');
    expect(schema.properties.edits.items.description).toBe('One exact string replacement');
  });
});
