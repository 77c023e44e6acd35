import { allSettled } from '../../src/activities/sandbox/placeholders';

/**
 * Stand-ins under different roots are made and removed side by side, inside the queue that keeps
 * one command's stand-ins apart from the next. A failure under one root must not let that queue move
 * on while the other roots are still being changed.
 */
test('a failure under one root is reported only once the other roots are done', async () => {
  const order: string[] = [];
  const slow = new Promise<string>((resolve) =>
    setTimeout(() => {
      order.push('slow root done');
      resolve('slow');
    }, 50),
  );
  const failing = Promise.reject(new Error('EACCES under the first root'));
  await expect(allSettled([failing, slow]).finally(() => order.push('reported'))).rejects.toThrow(
    'EACCES under the first root',
  );
  expect(order).toEqual(['slow root done', 'reported']);
});

test('when nothing fails, the results come back in order', async () => {
  const later = new Promise<number>((resolve) => setTimeout(() => resolve(1), 20));
  await expect(allSettled([later, Promise.resolve(2)])).resolves.toEqual([1, 2]);
});
