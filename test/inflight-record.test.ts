import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Context } from '@temporalio/activity';
import { inflightDir, InflightRecorder } from '../src/worker/inflight';
import type { InflightActivity } from '../src/worker/inflight';
import { tempDir } from './support/harness';

/** The interceptor's execute for one model call of a job, as the worker runs it. */
function execute(recorder: InflightRecorder, activityId: string, run: () => Promise<unknown>): Promise<unknown> {
  const ctx = {
    info: {
      activityType: 'callModel',
      activityId,
      attempt: 1,
      workflowExecution: { workflowId: 'job-1', runId: 'run-1' },
    },
  } as unknown as Context;
  const inbound = recorder.interceptor()(ctx).inbound;
  if (!inbound?.execute) throw new Error('the in-flight interceptor has no execute');
  return inbound.execute({ args: [], headers: {} }, run);
}

function recorded(home: string): InflightActivity[] {
  const file = path.join(inflightDir(home), `${os.hostname()}-${process.pid}.json`);
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { activities: InflightActivity[] }).activities;
}

describe('the in-flight record', () => {
  test('a hundred calls starting and ending together cost a few writes, not one per start and end', async () => {
    const home = tempDir('inflight');
    let writes = 0;
    const recorder = new InflightRecorder(home, {
      writeFile: async (file, text) => {
        writes += 1;
        await fs.promises.writeFile(file, text);
      },
    });
    // Nothing on the activity path may block the worker's thread on the disk.
    const renameSync = jest.spyOn(fs, 'renameSync');
    const writeFileSync = jest.spyOn(fs, 'writeFileSync');
    const release: Array<() => void> = [];
    const calls = Array.from({ length: 100 }, (_, i) =>
      execute(recorder, String(i), () => new Promise<void>((resolve) => release.push(resolve))),
    );
    await recorder.settled();
    expect(recorded(home).map((entry) => entry.activityId)).toHaveLength(100);
    const afterStarts = writes;
    expect(afterStarts).toBeLessThanOrEqual(2);

    for (const done of release) done();
    await Promise.all(calls);
    await recorder.settled();
    expect(recorded(home)).toEqual([]);
    expect(writes - afterStarts).toBeLessThanOrEqual(2);
    expect(renameSync).not.toHaveBeenCalled();
    expect(writeFileSync).not.toHaveBeenCalled();
    renameSync.mockRestore();
    writeFileSync.mockRestore();
    await recorder.remove();
  });

  test('a call starts without waiting for the file', async () => {
    const home = tempDir('inflight');
    let finishWrite: (() => void) | undefined;
    const recorder = new InflightRecorder(home, {
      writeFile: (file, text) =>
        new Promise<void>((resolve) => {
          finishWrite = () => {
            fs.writeFileSync(file, text);
            resolve();
          };
        }),
    });
    let ran = false;
    await execute(recorder, '1', async () => {
      ran = true;
    });
    expect(ran).toBe(true);
    // The write held back: the record still shows the state before the call.
    expect(recorded(home)).toEqual([]);
    finishWrite?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorded(home).map((entry) => entry.activityId)).toEqual(['1']);
    // The call's end went out in the next write, not lost behind the one under way.
    finishWrite?.();
    await recorder.settled();
    expect(recorded(home)).toEqual([]);
    await recorder.remove();
  });

  test('remove waits for a write under way, so no record outlives the worker', async () => {
    const home = tempDir('inflight');
    const recorder = new InflightRecorder(home, {
      writeFile: async (file, text) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        await fs.promises.writeFile(file, text);
      },
    });
    const call = execute(recorder, '1', () => new Promise((resolve) => setTimeout(resolve, 10)));
    await recorder.remove();
    await call;
    await recorder.settled();
    expect(fs.readdirSync(inflightDir(home))).toEqual([]);
  });

  test('a call that ends after remove (a shutdown that gave up on it) writes nothing and hangs nothing', async () => {
    const home = tempDir('inflight');
    const recorder = new InflightRecorder(home);
    let finish: (() => void) | undefined;
    const call = execute(recorder, '1', () => new Promise<void>((resolve) => (finish = resolve)));
    await recorder.remove();
    finish?.();
    await call;
    const started = execute(recorder, '2', async () => {});
    await started;
    await recorder.settled();
    await recorder.remove();
    expect(fs.readdirSync(inflightDir(home))).toEqual([]);
  });

  test('a failed write is said once and tried again at the next change', async () => {
    const home = tempDir('inflight');
    const errors: unknown[] = [];
    let fail = true;
    const recorder = new InflightRecorder(home, {
      writeFile: async (file, text) => {
        if (fail) throw new Error('ENOSPC: no space left on device');
        await fs.promises.writeFile(file, text);
      },
      onError: (error) => errors.push(error),
    });
    await execute(recorder, '1', async () => {});
    await execute(recorder, '2', async () => {});
    await recorder.settled();
    expect(errors).toHaveLength(1);
    fail = false;
    let inside: InflightActivity[] = [];
    await execute(recorder, '3', async () => {
      await recorder.settled();
      inside = recorded(home);
    });
    expect(inside.map((entry) => entry.activityId)).toEqual(['3']);
    await recorder.remove();
  });

  test('a failed write is tried again a second later even when nothing changes', async () => {
    const home = tempDir('inflight');
    let fail = true;
    const recorder = new InflightRecorder(home, {
      writeFile: async (file, text) => {
        if (fail) throw new Error('EIO: i/o error');
        await fs.promises.writeFile(file, text);
      },
      onError: () => undefined,
    });
    let finish: (() => void) | undefined;
    const call = execute(recorder, '1', () => new Promise<void>((resolve) => (finish = resolve)));
    await recorder.settled();
    expect(recorded(home)).toEqual([]);
    fail = false;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await recorder.settled();
    expect(recorded(home).map((entry) => entry.activityId)).toEqual(['1']);
    finish?.();
    await call;
    await recorder.remove();
  });
});
