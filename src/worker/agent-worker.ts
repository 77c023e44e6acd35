import type { State, Worker, WorkerStatus } from '@temporalio/worker';

/**
 * What `createWorker` returns: the two Temporal Workers of one durable-agent worker, run, stopped
 * and watched as one. `main` polls the job's task queue (workflows, tools, hooks, set-up
 * activities); `model` polls its model queue (`modelTaskQueue`) and runs only model calls, with
 * their own slot count and rate. They share the connection, the heartbeat throttle, the shutdown
 * grace time and the activity interceptors.
 */
export class AgentWorker {
  constructor(
    /** Workflows, tools, hooks and the set-up activities, on `taskQueue`. */
    readonly main: Worker,
    /** `callModel` and `compactConversation`, on `modelTaskQueue`. */
    readonly model: Worker,
    /** Tools, hooks and workspace reads of the jobs whose workspace is on this host, on `hostTaskQueue`. */
    readonly host?: Worker,
  ) {}

  /** The Temporal Workers, in the order they start. */
  private get all(): Worker[] {
    return this.host ? [this.main, this.model, this.host] : [this.main, this.model];
  }

  get taskQueue(): string {
    return this.main.options.taskQueue;
  }

  get modelTaskQueue(): string {
    return this.model.options.taskQueue;
  }

  /**
   * Run both until both have stopped, after `shutdown()` or the runtime's SIGTERM/SIGINT. When one
   * stops or fails, the other is shut down too (its running calls get the same grace time), and
   * the first failure is what this rejects with.
   */
  async run(): Promise<void> {
    const workers = this.all;
    const failures: unknown[] = [];
    await Promise.all(
      workers.map(async (worker) => {
        try {
          await worker.run();
        } catch (error) {
          failures.push(error);
        } finally {
          this.shutdown();
        }
      }),
    );
    if (failures.length > 0) throw failures[0];
  }

  /**
   * Run both while `fnOrPromise` runs, then shut them down and wait until they stopped; its result
   * is returned, or the worker's failure (`Worker.runUntil` does the same for one worker).
   */
  async runUntil<R>(fnOrPromise: Promise<R> | (() => Promise<R>)): Promise<R> {
    const running = this.run();
    let outcome: { ok: true; value: R } | { ok: false; error: unknown } | undefined;
    const inner = (async () => {
      try {
        outcome = { ok: true, value: await (typeof fnOrPromise === 'function' ? fnOrPromise() : fnOrPromise) };
      } catch (error) {
        outcome = { ok: false, error };
      } finally {
        this.shutdown();
      }
    })();
    await running;
    await inner;
    if (!outcome) throw new Error('AgentWorker.runUntil: the promise did not settle');
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  /** Stop polling on both queues; running calls finish within the grace time. Safe to call twice. */
  shutdown(): void {
    for (const worker of this.all) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  }

  /**
   * One state for the pair: `FAILED` if either failed, the common state when they agree,
   * `RUNNING` while the second is still starting, else `STOPPING` (one has begun to stop).
   */
  getState(): State {
    const states = this.all.map((worker) => worker.getState());
    if (states.includes('FAILED')) return 'FAILED';
    if (states.every((state) => state === states[0])) return states[0] as State;
    if (states.every((state) => state === 'INITIALIZED' || state === 'RUNNING')) return 'RUNNING';
    return 'STOPPING';
  }

  /** Each worker's status, and the activities running on both. */
  getStatus(): { main: WorkerStatus; model: WorkerStatus; host?: WorkerStatus; numInFlightActivities: number } {
    const main = this.main.getStatus();
    const model = this.model.getStatus();
    const host = this.host?.getStatus();
    return {
      main,
      model,
      ...(host ? { host } : {}),
      numInFlightActivities:
        main.numInFlightActivities + model.numInFlightActivities + (host?.numInFlightActivities ?? 0),
    };
  }

  get hostTaskQueue(): string | undefined {
    return this.host?.options.taskQueue;
  }
}
