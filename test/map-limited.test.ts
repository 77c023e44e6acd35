import { mapLimited } from '../src/activities/map-limited';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mapLimited', () => {
  test('keeps the items order and never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const items = Array.from({ length: 25 }, (_, i) => i);
    const results = await mapLimited(items, 4, async (item) => {
      running += 1;
      most = Math.max(most, running);
      await tick((item * 7) % 5); // finishing out of order
      running -= 1;
      return item * 10;
    });
    expect(results).toEqual(items.map((item) => item * 10));
    expect(most).toBe(4);
  });

  test('starts nothing after a failure and throws it once the running calls settled', async () => {
    const started: number[] = [];
    let settled = 0;
    const run = mapLimited([0, 1, 2, 3, 4, 5, 6, 7], 2, async (item) => {
      started.push(item);
      await tick(item === 0 ? 1 : item === 1 ? 5 : 20);
      settled += 1;
      if (item === 1) throw new Error('describe failed');
      return item;
    });
    await expect(run).rejects.toThrow('describe failed');
    expect(started).toEqual([0, 1, 2]);
    expect(settled).toBe(3);
  });

  test('an empty list, and a limit that makes no sense', async () => {
    await expect(mapLimited([], 3, async () => 1)).resolves.toEqual([]);
    await expect(mapLimited([1], 0, async () => 1)).rejects.toThrow('limit must be a positive integer');
  });
});
